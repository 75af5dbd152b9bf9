package describeconfigs_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/describeconfigs"
	"github.com/segmentio/kafka-go/protocol/prototest"
	"github.com/stretchr/testify/require"
)

func TestDescribeConfigsRoundTrip(t *testing.T) {
	resources := []describeconfigs.RequestResource{{ResourceType: 2, ResourceName: "t", ConfigNames: []string{"retention.ms"}}, {ResourceType: 4, ResourceName: "1"}}
	prototest.TestRequest(t, 0, &describeconfigs.Request{Resources: resources})
	prototest.TestRequest(t, 1, &describeconfigs.Request{Resources: resources, IncludeSynonyms: true})
	prototest.TestRequest(t, 4, &describeconfigs.Request{Resources: resources, IncludeSynonyms: true, IncludeDocumentation: true})

	prototest.TestResponse(t, 0, &describeconfigs.Response{ThrottleTimeMs: 1, Resources: []describeconfigs.ResponseResource{{
		ResourceType: 2, ResourceName: "t",
		ConfigEntries: []describeconfigs.ResponseConfigEntry{{ConfigName: "retention.ms", ConfigValue: "1", IsDefault: true}, {ConfigName: "x", ReadOnly: true, IsSensitive: true}},
	}}})
	entries := []describeconfigs.ResponseConfigEntry{{
		ConfigName: "retention.ms", ConfigValue: "1", ConfigSource: 1,
		ConfigSynonyms: []describeconfigs.ResponseConfigSynonym{{ConfigName: "log.retention.ms", ConfigValue: "2", ConfigSource: 5}},
	}}
	prototest.TestResponse(t, 2, &describeconfigs.Response{Resources: []describeconfigs.ResponseResource{{ErrorCode: 3, ErrorMessage: "m", ResourceType: 2, ResourceName: "t", ConfigEntries: entries}}})
	entries[0].ConfigType = 5
	entries[0].ConfigDocumentation = "how long"
	prototest.TestResponse(t, 4, &describeconfigs.Response{Resources: []describeconfigs.ResponseResource{{ResourceType: 2, ResourceName: "t", ConfigEntries: entries}}})
}

func TestDescribeConfigsRouting(t *testing.T) {
	cluster := protocol.Cluster{Controller: 1, Brokers: map[int32]protocol.Broker{1: {ID: 1}, 2: {ID: 2}, 3: {ID: 3}}}
	req := &describeconfigs.Request{IncludeSynonyms: true, Resources: []describeconfigs.RequestResource{
		{ResourceType: 2, ResourceName: "t1"}, {ResourceType: 4, ResourceName: "3"}, {ResourceType: 2, ResourceName: "t2"}, {ResourceType: 4, ResourceName: "2"},
	}}
	msgs, merger, err := req.Split(cluster)
	if err != nil || len(msgs) != 3 {
		t.Fatalf("split: %d messages, error %v", len(msgs), err)
	}
	wantBrokers := []int32{3, 2, 1}
	for i, m := range msgs {
		r := m.(*describeconfigs.Request)
		if !r.IncludeSynonyms {
			t.Errorf("request %d lost IncludeSynonyms", i)
		}
		if b, err := r.Broker(cluster); err != nil || b.ID != wantBrokers[i] {
			t.Errorf("request %d goes to %v (error %v), want %d", i, b, err, wantBrokers[i])
		}
	}
	if n := len(msgs[2].(*describeconfigs.Request).Resources); n != 2 {
		t.Errorf("topic request has %d resources, want 2", n)
	}

	merged, err := merger.Merge(msgs, []interface{}{
		&describeconfigs.Response{Resources: []describeconfigs.ResponseResource{{ResourceName: "3"}}},
		&describeconfigs.Response{Resources: []describeconfigs.ResponseResource{{ResourceName: "2"}}},
		&describeconfigs.Response{Resources: []describeconfigs.ResponseResource{{ResourceName: "t1"}, {ResourceName: "t2"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range merged.(*describeconfigs.Response).Resources {
		names = append(names, r.ResourceName)
	}
	if !reflect.DeepEqual(names, []string{"3", "2", "t1", "t2"}) {
		t.Errorf("merged resources %v", names)
	}
	boom := errors.New("boom")
	if _, err := merger.Merge(msgs, []interface{}{boom, boom, boom}); !errors.Is(err, boom) {
		t.Errorf("merge of failures: %v", err)
	}
	bad := &describeconfigs.Request{Resources: []describeconfigs.RequestResource{{ResourceType: 4, ResourceName: "x"}}}
	if _, err := bad.Broker(cluster); err == nil {
		t.Error("a broker resource with a non-numeric name must fail routing")
	}
}

// Merge given a result that is neither a message nor an error panics with
// upstream's text, which callers' tests match.
func TestDescribeConfigsMergePanicText(t *testing.T) {
	r1 := &describeconfigs.Response{Resources: []describeconfigs.ResponseResource{{ResourceName: "r1"}}}
	require.PanicsWithError(t, "BUG: result must be a message or an error but not string", func() {
		_, _ = (&describeconfigs.Response{}).Merge(
			[]protocol.Message{&describeconfigs.Request{}, &describeconfigs.Request{}},
			[]interface{}{r1, "how did a string get here"})
	})
}
