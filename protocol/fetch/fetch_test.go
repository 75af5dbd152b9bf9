package fetch_test

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/fetch"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

var t0 = time.Unix(1700000000, 0)

func recordSet() protocol.RecordSet {
	return protocol.RecordSet{Version: 2, Records: protocol.NewRecordReader(
		protocol.Record{Offset: 0, Time: t0, Key: prototest.String("k"), Value: prototest.String("v1")},
		protocol.Record{Offset: 1, Time: t0.Add(time.Second), Value: prototest.String("v2")},
	)}
}

func TestFetchRoundTrip(t *testing.T) {
	prototest.TestRequest(t, 0, &fetch.Request{
		ReplicaID: -1, MaxWaitTime: 500, MinBytes: 1,
		Topics: []fetch.RequestTopic{{Topic: "t", Partitions: []fetch.RequestPartition{{Partition: 1, FetchOffset: 10, PartitionMaxBytes: 1 << 20}}}},
	})
	prototest.TestRequest(t, 7, &fetch.Request{
		ReplicaID: -1, MaxWaitTime: 500, MinBytes: 1, MaxBytes: 1 << 24, IsolationLevel: 1, SessionID: 3, SessionEpoch: -1,
		Topics:          []fetch.RequestTopic{{Topic: "t", Partitions: []fetch.RequestPartition{{Partition: 1, FetchOffset: 10, LogStartOffset: -1, PartitionMaxBytes: 1 << 20}}}},
		ForgottenTopics: []fetch.RequestForgottenTopic{{Topic: "old", Partitions: []int32{0, 2}}},
	})
	prototest.TestRequest(t, 12, &fetch.Request{
		ClusterID: "cluster", ReplicaID: -1, MaxWaitTime: 500, MinBytes: 1, MaxBytes: 1 << 24, SessionEpoch: -1,
		Topics: []fetch.RequestTopic{{Topic: "t", Partitions: []fetch.RequestPartition{
			{Partition: 1, CurrentLeaderEpoch: 4, FetchOffset: 10, LastFetchedEpoch: 3, LogStartOffset: -1, PartitionMaxBytes: 1 << 20},
		}}},
		RackID: "rack",
	})

	prototest.TestResponse(t, 0, &fetch.Response{Topics: []fetch.ResponseTopic{{Topic: "t", Partitions: []fetch.ResponsePartition{
		{Partition: 1, HighWatermark: 12, RecordSet: recordSet()},
	}}}})
	prototest.TestResponse(t, 7, &fetch.Response{ThrottleTimeMs: 1, SessionID: 9, Topics: []fetch.ResponseTopic{{Topic: "t", Partitions: []fetch.ResponsePartition{
		{Partition: 1, HighWatermark: 12, LastStableOffset: 11, LogStartOffset: 0,
			AbortedTransactions: []fetch.ResponseTransaction{{ProducerID: 5, FirstOffset: 3}}, RecordSet: recordSet()},
	}}}})
	prototest.TestResponse(t, 12, &fetch.Response{ThrottleTimeMs: 1, Topics: []fetch.ResponseTopic{{Topic: "t", Partitions: []fetch.ResponsePartition{
		{Partition: 1, ErrorCode: 0, HighWatermark: 12, LastStableOffset: 12, LogStartOffset: 0,
			DivergingEpoch:       fetch.ResponseEpochEndOffset{Epoch: 2, EndOffset: 9},
			CurrentLeader:        fetch.ResponseLeader{LeaderID: 1, LeaderEpoch: 3},
			SnapshotID:           fetch.ResponseSnapshotID{EndOffset: 4, Epoch: 1},
			PreferredReadReplica: -1, RecordSet: recordSet()},
	}}}})
}

func TestFetchGoldenV4(t *testing.T) {
	req := &fetch.Request{
		ReplicaID: -1, MaxWaitTime: 250, MinBytes: 1, MaxBytes: 1000, IsolationLevel: 1,
		Topics: []fetch.RequestTopic{{Topic: "t", Partitions: []fetch.RequestPartition{{Partition: 2, FetchOffset: 77, PartitionMaxBytes: 500}}}},
	}
	want := prototest.Wire{}.I32(-1).I32(250).I32(1).I32(1000).I8(1).
		I32(1).String("t").I32(1).I32(2).I64(77).I32(500)
	if got := prototest.RequestBody(t, 4, false, req); !bytes.Equal(got, want) {
		t.Errorf("v4 request:\ngot  % x\nwant % x", got, want)
	}

	// A partition with an error and no records: the records are null.
	body := prototest.Wire{}.I32(0).
		I32(1).String("t").I32(1).
		I32(2).I16(1).I64(-1).I64(-1).
		I32(1).I64(8).I64(40). // one aborted transaction
		I32(-1)
	res := prototest.ReadResponse(t, protocol.Fetch, 4, false, body).(*fetch.Response)
	p := res.Topics[0].Partitions[0]
	if res.Topics[0].Topic != "t" || p.Partition != 2 || p.ErrorCode != 1 || p.HighWatermark != -1 || p.LastStableOffset != -1 {
		t.Errorf("v4 response decoded as %+v", res)
	}
	if !reflect.DeepEqual(p.AbortedTransactions, []fetch.ResponseTransaction{{ProducerID: 8, FirstOffset: 40}}) {
		t.Errorf("aborted transactions %+v", p.AbortedTransactions)
	}
	if p.RecordSet.Records != nil {
		if r, err := p.RecordSet.Records.ReadRecord(); !errors.Is(err, io.EOF) {
			t.Errorf("null records decoded as a record %+v, error %v", r, err)
		}
	}
}

func TestFetchGoldenV12(t *testing.T) {
	req := &fetch.Request{
		ClusterID: "c", ReplicaID: -1, MaxWaitTime: 250, MinBytes: 1, MaxBytes: 1000, SessionEpoch: -1,
		Topics: []fetch.RequestTopic{{Topic: "t", Partitions: []fetch.RequestPartition{
			{Partition: 2, CurrentLeaderEpoch: 6, FetchOffset: 77, LastFetchedEpoch: 5, LogStartOffset: -1, PartitionMaxBytes: 500},
		}}},
		ForgottenTopics: []fetch.RequestForgottenTopic{{Topic: "f", Partitions: []int32{3}}},
		RackID:          "r",
	}
	want := prototest.Wire{}.I32(-1).I32(250).I32(1).I32(1000).I8(0).I32(0).I32(-1).
		Uvarint(2).CompactString("t").Uvarint(2).I32(2).I32(6).I64(77).I32(5).I64(-1).I32(500).Uvarint(0).Uvarint(0).
		Uvarint(2).CompactString("f").Uvarint(2).I32(3).Uvarint(0).
		CompactString("r").
		Uvarint(1).Uvarint(0).Uvarint(2).CompactString("c") // tagged ClusterID
	if got := prototest.RequestBody(t, 12, true, req); !bytes.Equal(got, want) {
		t.Errorf("v12 request:\ngot  % x\nwant % x", got, want)
	}
	if got := prototest.ReadRequestBody(t, protocol.Fetch, 12, true, want); !reflect.DeepEqual(got, req) {
		t.Errorf("v12 request decoded as %+v", got)
	}
	// Without a cluster ID the tagged field is left out.
	req.ClusterID = ""
	if got := prototest.RequestBody(t, 12, true, req); !bytes.Equal(got, append(want[:len(want)-5:len(want)-5], 0)) {
		t.Errorf("v12 request without cluster ID ends with % x", got[len(got)-3:])
	}

	diverging := prototest.Wire{}.I32(2).I64(9).Uvarint(0)
	leader := prototest.Wire{}.I32(1).I32(3).Uvarint(0)
	body := prototest.Wire{}.I32(0).I16(0).I32(0).
		Uvarint(2).CompactString("t").Uvarint(2).
		I32(2).I16(0).I64(12).I64(12).I64(0).
		Uvarint(0). // null aborted transactions
		I32(-1).    // preferred read replica
		Uvarint(0). // null records
		Uvarint(2). // two tagged fields
		Uvarint(0).Uvarint(uint64(len(diverging))).Raw(diverging...).
		Uvarint(1).Uvarint(uint64(len(leader))).Raw(leader...).
		Uvarint(0). // topic tags
		Uvarint(0)
	res := prototest.ReadResponse(t, protocol.Fetch, 12, true, body).(*fetch.Response)
	p := res.Topics[0].Partitions[0]
	if p.HighWatermark != 12 || p.PreferredReadReplica != -1 || p.AbortedTransactions != nil {
		t.Errorf("v12 partition decoded as %+v", p)
	}
	if p.DivergingEpoch != (fetch.ResponseEpochEndOffset{Epoch: 2, EndOffset: 9}) || p.CurrentLeader != (fetch.ResponseLeader{LeaderID: 1, LeaderEpoch: 3}) || p.SnapshotID != (fetch.ResponseSnapshotID{EndOffset: -1, Epoch: -1}) {
		t.Errorf("v12 tagged fields decoded as %+v %+v %+v", p.DivergingEpoch, p.CurrentLeader, p.SnapshotID)
	}
}

func TestFetchPrepare(t *testing.T) {
	r := &fetch.Request{Topics: []fetch.RequestTopic{{Partitions: []fetch.RequestPartition{{LastFetchedEpoch: 0}, {LastFetchedEpoch: 4}}}}}
	r.Prepare(11)
	if e := r.Topics[0].Partitions[0].LastFetchedEpoch; e != 0 {
		t.Errorf("v11 changed LastFetchedEpoch to %d", e)
	}
	r.Prepare(12)
	if e := r.Topics[0].Partitions[0].LastFetchedEpoch; e != -1 {
		t.Errorf("v12: unset LastFetchedEpoch sent as %d, want -1", e)
	}
	if e := r.Topics[0].Partitions[1].LastFetchedEpoch; e != 4 {
		t.Errorf("v12: LastFetchedEpoch 4 changed to %d", e)
	}
}

func TestFetchBroker(t *testing.T) {
	cluster := protocol.Cluster{
		Brokers: map[int32]protocol.Broker{1: {ID: 1}, 2: {ID: 2}},
		Topics: map[string]protocol.Topic{"t": {Partitions: map[int32]protocol.Partition{
			0: {ID: 0, Leader: 1}, 1: {ID: 1, Leader: 2},
		}}},
	}
	one := &fetch.Request{Topics: []fetch.RequestTopic{{Topic: "t", Partitions: []fetch.RequestPartition{{Partition: 1}}}}}
	if b, err := one.Broker(cluster); err != nil || b.ID != 2 {
		t.Errorf("broker %v, error %v", b, err)
	}
	two := &fetch.Request{Topics: []fetch.RequestTopic{{Topic: "t", Partitions: []fetch.RequestPartition{{Partition: 0}, {Partition: 1}}}}}
	var ferr *fetch.Error
	if _, err := two.Broker(cluster); !errors.As(err, &ferr) {
		t.Errorf("partitions led by two brokers: error %v", err)
	}
	missing := &fetch.Request{Topics: []fetch.RequestTopic{{Topic: "x", Partitions: []fetch.RequestPartition{{}}}}}
	if _, err := missing.Broker(cluster); !errors.Is(err, protocol.ErrNoTopic) {
		t.Errorf("unknown topic: error %v", err)
	}
}

// The v12 tagged fields default to -1 in every member: zeros are sent, the
// defaults are not, and absent fields read as the defaults.
func TestFetchTaggedDefaults(t *testing.T) {
	res := &fetch.Response{Topics: []fetch.ResponseTopic{{Topic: "t", Partitions: []fetch.ResponsePartition{{
		Partition: 2, HighWatermark: 12, LastStableOffset: 12, PreferredReadReplica: -1,
	}}}}}
	zeros := prototest.Wire{}.I32(0).I64(0).Uvarint(0)
	leader := prototest.Wire{}.I32(0).I32(0).Uvarint(0)
	snapshot := prototest.Wire{}.I64(0).I32(0).Uvarint(0)
	partition := func(tags prototest.Wire) prototest.Wire {
		return prototest.Wire{}.I32(2).I16(0).I64(12).I64(12).I64(0).
			Uvarint(0). // null aborted transactions
			I32(-1).    // preferred read replica
			Uvarint(0). // null records
			Raw(tags...)
	}
	body := func(tags prototest.Wire) prototest.Wire {
		return prototest.Wire{}.I32(0).I16(0).I32(0).Uvarint(2).CompactString("t").Uvarint(2).Raw(partition(tags)...).Uvarint(0).Uvarint(0)
	}
	sent := body(prototest.Wire{}.Uvarint(3).
		Uvarint(0).Uvarint(uint64(len(zeros))).Raw(zeros...).
		Uvarint(1).Uvarint(uint64(len(leader))).Raw(leader...).
		Uvarint(2).Uvarint(uint64(len(snapshot))).Raw(snapshot...))
	if got := prototest.ResponseBody(t, 12, true, res); !bytes.Equal(got, sent) {
		t.Errorf("zero tagged fields:\ngot  % x\nwant % x", got, sent)
	}
	if got := prototest.ReadResponse(t, protocol.Fetch, 12, true, sent); !reflect.DeepEqual(got, res) {
		t.Errorf("zero tagged fields decoded as %+v", got)
	}

	p := &res.Topics[0].Partitions[0]
	p.DivergingEpoch = fetch.ResponseEpochEndOffset{Epoch: -1, EndOffset: -1}
	p.CurrentLeader = fetch.ResponseLeader{LeaderID: -1, LeaderEpoch: -1}
	p.SnapshotID = fetch.ResponseSnapshotID{EndOffset: -1, Epoch: -1}
	absent := body(prototest.Wire{}.Uvarint(0))
	if got := prototest.ResponseBody(t, 12, true, res); !bytes.Equal(got, absent) {
		t.Errorf("default tagged fields:\ngot  % x\nwant % x", got, absent)
	}
	if got := prototest.ReadResponse(t, protocol.Fetch, 12, true, absent); !reflect.DeepEqual(got, res) {
		t.Errorf("absent tagged fields decoded as %+v", got)
	}
}
