package describegroups_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/describegroups"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestDescribeGroupsRoundTrip(t *testing.T) {
	prototest.TestRequest(t, 0, &describegroups.Request{Groups: []string{"a", "b"}})
	prototest.TestRequest(t, 3, &describegroups.Request{Groups: []string{"a"}, IncludeAuthorizedOperations: true})
	prototest.TestRequest(t, 5, &describegroups.Request{Groups: []string{"a"}, IncludeAuthorizedOperations: true})

	member := describegroups.ResponseGroupMember{MemberID: "m", ClientID: "c", ClientHost: "/10.0.0.1", MemberMetadata: []byte{0, 1}, MemberAssignment: []byte{0, 2}}
	group := describegroups.ResponseGroup{GroupID: "a", GroupState: "Stable", ProtocolType: "consumer", ProtocolData: "range", Members: []describegroups.ResponseGroupMember{member}}
	prototest.TestResponse(t, 0, &describegroups.Response{Groups: []describegroups.ResponseGroup{group}})
	group.AuthorizedOperations = 0x1234
	prototest.TestResponse(t, 3, &describegroups.Response{ThrottleTimeMs: 1, Groups: []describegroups.ResponseGroup{group}})
	group.Members[0].GroupInstanceID = "i"
	prototest.TestResponse(t, 5, &describegroups.Response{ThrottleTimeMs: 1, Groups: []describegroups.ResponseGroup{group}})
}

func TestDescribeGroupsSplitMerge(t *testing.T) {
	req := &describegroups.Request{Groups: []string{"a", "b"}, IncludeAuthorizedOperations: true}
	msgs, merger, err := req.Split(protocol.Cluster{})
	if err != nil || len(msgs) != 2 {
		t.Fatalf("split: %d messages, error %v", len(msgs), err)
	}
	for i, m := range msgs {
		r := m.(*describegroups.Request)
		if r.Group() != req.Groups[i] || len(r.Groups) != 1 || !r.IncludeAuthorizedOperations {
			t.Errorf("request %d: %+v", i, r)
		}
	}
	merged, err := merger.Merge(msgs, []interface{}{
		&describegroups.Response{Groups: []describegroups.ResponseGroup{{GroupID: "a"}}},
		&describegroups.Response{ThrottleTimeMs: 3, Groups: []describegroups.ResponseGroup{{GroupID: "b"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := &describegroups.Response{ThrottleTimeMs: 3, Groups: []describegroups.ResponseGroup{{GroupID: "a"}, {GroupID: "b"}}}
	if !reflect.DeepEqual(merged, want) {
		t.Errorf("merged %+v", merged)
	}
	boom := errors.New("boom")
	if _, err := merger.Merge(msgs, []interface{}{&describegroups.Response{}, boom}); !errors.Is(err, boom) {
		t.Errorf("merge with a failure: error %v", err)
	}
}
