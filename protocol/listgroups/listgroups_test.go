package listgroups_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/listgroups"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestListGroupsRoundTrip(t *testing.T) {
	prototest.TestRequest(t, 0, &listgroups.Request{})
	prototest.TestRequest(t, 3, &listgroups.Request{})

	groups := []listgroups.ResponseGroup{{GroupID: "a", ProtocolType: "consumer"}, {GroupID: "b"}}
	prototest.TestResponse(t, 0, &listgroups.Response{Groups: groups})
	prototest.TestResponse(t, 1, &listgroups.Response{ThrottleTimeMs: 1, ErrorCode: 15, Groups: groups})
	prototest.TestResponse(t, 3, &listgroups.Response{ThrottleTimeMs: 1, Groups: groups})
}

func TestListGroupsSplitMerge(t *testing.T) {
	cluster := protocol.Cluster{Brokers: map[int32]protocol.Broker{3: {ID: 3}, 1: {ID: 1}}}
	msgs, merger, err := (&listgroups.Request{}).Split(cluster)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("split: %d messages, error %v", len(msgs), err)
	}
	for i, want := range []int32{1, 3} {
		if b, err := msgs[i].(*listgroups.Request).Broker(cluster); err != nil || b.ID != want {
			t.Errorf("request %d goes to %v (error %v), want broker %d", i, b, err, want)
		}
	}
	merged, err := merger.Merge(msgs, []interface{}{
		&listgroups.Response{Groups: []listgroups.ResponseGroup{{GroupID: "a", ProtocolType: "consumer"}}},
		&listgroups.Response{Groups: []listgroups.ResponseGroup{{GroupID: "b"}, {GroupID: "c"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []listgroups.ResponseGroup{{GroupID: "a", ProtocolType: "consumer", BrokerID: 1}, {GroupID: "b", BrokerID: 3}, {GroupID: "c", BrokerID: 3}}
	if got := merged.(*listgroups.Response).Groups; !reflect.DeepEqual(got, want) {
		t.Errorf("merged groups %+v", got)
	}
	boom := errors.New("boom")
	if _, err := merger.Merge(msgs, []interface{}{boom, &listgroups.Response{}}); !errors.Is(err, boom) {
		t.Errorf("merge with a failure: error %v", err)
	}
}
