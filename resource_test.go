package kafka

import (
	"encoding/json"
	"testing"
)

func TestResourceTypeText(t *testing.T) {
	// Values of Kafka's ResourceType enum.
	want := map[ResourceType]string{
		0: "Unknown", 1: "Any", 2: "Topic", 3: "Group", 4: "Cluster",
		5: "Transactionalid", 6: "Delegationtoken", 7: "User", 42: "Unknown", -3: "Unknown",
	}
	for rt, name := range want {
		text, err := rt.MarshalText()
		if err != nil || string(text) != name || rt.String() != name {
			t.Errorf("%d: got %q, %v; want %q", rt, text, err, name)
		}
	}
	for rt := ResourceTypeUnknown; rt <= ResourceTypeUser; rt++ {
		text, _ := rt.MarshalText()
		var got ResourceType
		if err := got.UnmarshalText(text); err != nil || got != rt {
			t.Errorf("%d: round trip gave %d, %v", rt, got, err)
		}
	}
	for text, rt := range map[string]ResourceType{"broker": ResourceTypeBroker, "CLUSTER": ResourceTypeCluster, "TransactionalID": ResourceTypeTransactionalID, "topic": ResourceTypeTopic} {
		var got ResourceType
		if err := got.UnmarshalText([]byte(text)); err != nil || got != rt {
			t.Errorf("%q: got %d, %v", text, got, err)
		}
	}
	got := ResourceTypeTopic
	err := got.UnmarshalText([]byte("Nope"))
	if err == nil || got != ResourceTypeUnknown || err.Error() != "cannot parse nope as a ResourceType" {
		t.Errorf("bad name: %d, %v", got, err)
	}
}

func TestPatternTypeText(t *testing.T) {
	want := map[PatternType]string{0: "Unknown", 1: "Any", 2: "Match", 3: "Literal", 4: "Prefixed", 9: "Unknown"}
	for pt, name := range want {
		if pt.String() != name {
			t.Errorf("%d: got %q, want %q", pt, pt.String(), name)
		}
	}
	for pt := PatternTypeUnknown; pt <= PatternTypePrefixed; pt++ {
		text, _ := pt.MarshalText()
		var got PatternType
		if err := got.UnmarshalText(text); err != nil || got != pt {
			t.Errorf("%d: round trip gave %d, %v", pt, got, err)
		}
	}
	got := PatternTypeLiteral
	if err := got.UnmarshalText([]byte("glob")); err == nil || got != PatternTypeUnknown {
		t.Errorf("bad name: %d, %v", got, err)
	}
	// Through encoding/json, as configuration files use them.
	var v struct {
		R ResourceType
		P PatternType
	}
	if err := json.Unmarshal([]byte(`{"R":"group","P":"PREFIXED"}`), &v); err != nil || v.R != ResourceTypeGroup || v.P != PatternTypePrefixed {
		t.Fatalf("json: %+v %v", v, err)
	}
	b, _ := json.Marshal(v)
	if string(b) != `{"R":"Group","P":"Prefixed"}` {
		t.Fatalf("json: %s", b)
	}
}
