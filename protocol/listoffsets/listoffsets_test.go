package listoffsets_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/listoffsets"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestListOffsetsRoundTrip(t *testing.T) {
	prototest.TestRequest(t, 1, &listoffsets.Request{ReplicaID: -1, Topics: []listoffsets.RequestTopic{
		{Topic: "t", Partitions: []listoffsets.RequestPartition{{Partition: 0, Timestamp: -1}, {Partition: 1, Timestamp: -2}}},
	}})
	prototest.TestRequest(t, 6, &listoffsets.Request{ReplicaID: -1, IsolationLevel: 1, Topics: []listoffsets.RequestTopic{
		{Topic: "t", Partitions: []listoffsets.RequestPartition{{Partition: 0, CurrentLeaderEpoch: 3, Timestamp: 1700000000000}}},
	}})
	prototest.TestRequest(t, 10, &listoffsets.Request{ReplicaID: -1, IsolationLevel: 1, TimeoutMs: 3000, Topics: []listoffsets.RequestTopic{
		{Topic: "t", Partitions: []listoffsets.RequestPartition{{Partition: 2, CurrentLeaderEpoch: -1, Timestamp: -3}}},
	}})

	prototest.TestResponse(t, 1, &listoffsets.Response{Topics: []listoffsets.ResponseTopic{
		{Topic: "t", Partitions: []listoffsets.ResponsePartition{{Partition: 0, Timestamp: -1, Offset: 42}}},
	}})
	prototest.TestResponse(t, 6, &listoffsets.Response{ThrottleTimeMs: 1, Topics: []listoffsets.ResponseTopic{
		{Topic: "t", Partitions: []listoffsets.ResponsePartition{{Partition: 0, ErrorCode: 6, Timestamp: 5, Offset: 42, LeaderEpoch: 2}}},
	}})
	prototest.TestResponse(t, 10, &listoffsets.Response{ThrottleTimeMs: 1, Topics: []listoffsets.ResponseTopic{
		{Topic: "t", Partitions: []listoffsets.ResponsePartition{{Partition: 3, Timestamp: -1, Offset: 7, LeaderEpoch: 2}}},
	}})
}

func TestListOffsetsSplitMerge(t *testing.T) {
	cluster := protocol.Cluster{
		Brokers: map[int32]protocol.Broker{1: {ID: 1}, 2: {ID: 2}},
		Topics: map[string]protocol.Topic{
			"a": {Partitions: map[int32]protocol.Partition{0: {ID: 0, Leader: 1}, 1: {ID: 1, Leader: 2}}},
			"b": {Partitions: map[int32]protocol.Partition{0: {ID: 0, Leader: 2}}},
		},
	}
	req := &listoffsets.Request{ReplicaID: -1, IsolationLevel: 1, Topics: []listoffsets.RequestTopic{
		{Topic: "b", Partitions: []listoffsets.RequestPartition{{Partition: 0, Timestamp: -2}}},
		{Topic: "a", Partitions: []listoffsets.RequestPartition{{Partition: 1, Timestamp: -1}, {Partition: 0, Timestamp: 99}}},
	}}
	msgs, merger, err := req.Split(cluster)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 {
		t.Fatalf("split into %d requests, want one per partition", len(msgs))
	}
	wantBrokers := []int32{2, 2, 1}
	for i, m := range msgs {
		r := m.(*listoffsets.Request)
		if r.IsolationLevel != 1 || r.ReplicaID != -1 || len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
			t.Errorf("request %d: %+v", i, r)
		}
		if b, err := r.Broker(cluster); err != nil || b.ID != wantBrokers[i] {
			t.Errorf("request %d goes to broker %v (error %v), want %d", i, b, err, wantBrokers[i])
		}
	}

	// The broker answers a timestamp of -1; Merge restores the one asked
	// for. The second request failed.
	results := []interface{}{
		&listoffsets.Response{ThrottleTimeMs: 5, Topics: []listoffsets.ResponseTopic{{Topic: "b", Partitions: []listoffsets.ResponsePartition{{Partition: 0, Timestamp: -1, Offset: 3}}}}},
		errors.New("connection reset"),
		&listoffsets.Response{ThrottleTimeMs: 2, Topics: []listoffsets.ResponseTopic{{Topic: "a", Partitions: []listoffsets.ResponsePartition{{Partition: 0, Timestamp: -1, Offset: 8, LeaderEpoch: 1}}}}},
	}
	merged, err := merger.Merge(msgs, results)
	if err != nil {
		t.Fatal(err)
	}
	want := &listoffsets.Response{ThrottleTimeMs: 5, Topics: []listoffsets.ResponseTopic{
		{Topic: "a", Partitions: []listoffsets.ResponsePartition{
			{Partition: 0, Timestamp: 99, Offset: 8, LeaderEpoch: 1},
			{Partition: 1, ErrorCode: -1, Timestamp: -1, Offset: -1, LeaderEpoch: -1},
		}},
		{Topic: "b", Partitions: []listoffsets.ResponsePartition{{Partition: 0, Timestamp: -2, Offset: 3}}},
	}}
	if !reflect.DeepEqual(merged, want) {
		t.Errorf("merged:\n%+v\nwant\n%+v", merged, want)
	}

	// When every request fails, so does the merge.
	boom := errors.New("boom")
	msgs, merger, _ = req.Split(cluster)
	if _, err := merger.Merge(msgs, []interface{}{boom, boom, boom}); !errors.Is(err, boom) {
		t.Errorf("all failed: error %v", err)
	}
}

func TestListOffsetsBrokerUnknown(t *testing.T) {
	req := &listoffsets.Request{Topics: []listoffsets.RequestTopic{{Topic: "x", Partitions: []listoffsets.RequestPartition{{Partition: 0}}}}}
	if b, err := req.Broker(protocol.Cluster{}); err != nil || b.ID != -1 {
		t.Errorf("unknown topic: broker %v, error %v", b, err)
	}
	if b, err := (&listoffsets.Request{}).Broker(protocol.Cluster{}); err != nil || b.ID != -1 {
		t.Errorf("empty request: broker %v, error %v", b, err)
	}
}

func TestListOffsetsPrepare(t *testing.T) {
	r := &listoffsets.Request{}
	r.Prepare(9)
	if r.TimeoutMs != 0 {
		t.Errorf("v9 TimeoutMs set to %d", r.TimeoutMs)
	}
	r.Prepare(10)
	if r.TimeoutMs <= 0 {
		t.Errorf("v10 TimeoutMs left at %d", r.TimeoutMs)
	}
	r = &listoffsets.Request{TimeoutMs: 5}
	r.Prepare(10)
	if r.TimeoutMs != 5 {
		t.Errorf("caller's TimeoutMs replaced by %d", r.TimeoutMs)
	}
}
