package produce_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/produce"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

var t0 = time.Unix(1700000000, 123e6)

func records(n int) protocol.RecordSet {
	recs := make([]protocol.Record, n)
	for i := range recs {
		recs[i] = protocol.Record{
			Offset:  int64(i),
			Time:    t0.Add(time.Duration(i) * time.Millisecond),
			Key:     prototest.String("key"),
			Value:   prototest.String("value"),
			Headers: []protocol.Header{{Key: "h", Value: []byte("v")}},
		}
	}
	return protocol.RecordSet{Version: 2, Records: protocol.NewRecordReader(recs...)}
}

func request(txn string) *produce.Request {
	return &produce.Request{
		TransactionalID: txn,
		Acks:            -1,
		Timeout:         500,
		Topics: []produce.RequestTopic{{
			Topic:      "t",
			Partitions: []produce.RequestPartition{{Partition: 1, RecordSet: records(2)}},
		}},
	}
}

func TestProduceRoundTrip(t *testing.T) {
	prototest.TestRequest(t, 3, request(""))
	prototest.TestRequest(t, 7, request("txn"))
	prototest.TestRequest(t, 9, request("txn"))
	prototest.TestRequest(t, 11, request(""))

	partition := produce.ResponsePartition{Partition: 1, ErrorCode: 6, BaseOffset: 100}
	prototest.TestResponse(t, 0, &produce.Response{Topics: []produce.ResponseTopic{{Topic: "t", Partitions: []produce.ResponsePartition{partition}}}})

	partition.LogAppendTime = 1700000000123
	partition.LogStartOffset = 7
	partition.RecordErrors = []produce.ResponseError{{BatchIndex: 1, BatchIndexErrorMessage: "bad"}, {BatchIndex: 2}}
	partition.ErrorMessage = "boom"
	prototest.TestResponse(t, 8, &produce.Response{ThrottleTimeMs: 4, Topics: []produce.ResponseTopic{{Topic: "t", Partitions: []produce.ResponsePartition{partition}}}})

	partition.CurrentLeader = produce.ResponseCurrentLeader{LeaderID: 3, LeaderEpoch: 12}
	prototest.TestResponse(t, 11, &produce.Response{
		ThrottleTimeMs: 4,
		Topics:         []produce.ResponseTopic{{Topic: "t", Partitions: []produce.ResponsePartition{partition}}},
		NodeEndpoints:  []produce.ResponseNodeEndpoint{{NodeID: 3, Host: "h3", Port: 9094, Rack: "r"}},
	})
}

// checkRequest compares an encoded request with the fields expected around
// its single record set, whose bytes belong to the record batch codec and
// are only checked for a consistent length.
func checkRequest(t *testing.T, got, prefix, suffix []byte, flexible bool) {
	t.Helper()
	if !bytes.HasPrefix(got, prefix) {
		t.Fatalf("request starts with\n% x\nwant\n% x", got[:min(len(got), len(prefix))], prefix)
	}
	rest := got[len(prefix):]
	var size int
	if flexible {
		n, k := binary.Uvarint(rest)
		if k <= 0 || n == 0 {
			t.Fatalf("bad compact records length % x", rest[:min(len(rest), 5)])
		}
		size, rest = int(n-1), rest[k:]
	} else {
		size, rest = int(int32(binary.BigEndian.Uint32(rest))), rest[4:]
	}
	if size < 61 || size > len(rest) { // 61: the v2 batch header
		t.Fatalf("records length %d with %d bytes left", size, len(rest))
	}
	if magic := rest[16]; magic != 2 {
		t.Errorf("record batch magic %d", magic)
	}
	if tail := rest[size:]; !bytes.Equal(tail, suffix) {
		t.Errorf("request ends with % x, want % x", tail, suffix)
	}
}

func TestProduceGoldenV3(t *testing.T) {
	got := prototest.RequestBody(t, 3, false, request(""))
	prefix := prototest.Wire{}.I16(-1).I16(-1).I32(500). // null transactional ID, acks, timeout
								I32(1).String("t").I32(1).I32(1)
	checkRequest(t, got, prefix, nil, false)

	res := &produce.Response{
		Topics:         []produce.ResponseTopic{{Topic: "t", Partitions: []produce.ResponsePartition{{Partition: 1, ErrorCode: 0, BaseOffset: 42, LogAppendTime: -1}}}},
		ThrottleTimeMs: 9,
	}
	want := prototest.Wire{}.I32(1).String("t").I32(1).I32(1).I16(0).I64(42).I64(-1).I32(9)
	if got := prototest.ResponseBody(t, 3, false, res); !bytes.Equal(got, want) {
		t.Errorf("v3 response:\ngot  % x\nwant % x", got, want)
	}
	if got := prototest.ReadResponse(t, protocol.Produce, 3, false, want); !reflect.DeepEqual(got, res) {
		t.Errorf("v3 response decoded as %+v", got)
	}
}

func TestProduceGoldenV10(t *testing.T) {
	got := prototest.RequestBody(t, 10, true, request("x"))
	prefix := prototest.Wire{}.CompactString("x").I16(-1).I32(500).Uvarint(2).CompactString("t").Uvarint(2).I32(1)
	// After the records: the partition's, the topic's and the request's
	// empty tagged-field sections.
	checkRequest(t, got, prefix, []byte{0, 0, 0}, true)

	res := &produce.Response{
		Topics: []produce.ResponseTopic{{Topic: "t", Partitions: []produce.ResponsePartition{{
			Partition:      1,
			ErrorCode:      6,
			BaseOffset:     -1,
			LogAppendTime:  -1,
			LogStartOffset: -1,
			RecordErrors:   []produce.ResponseError{{BatchIndex: 0, BatchIndexErrorMessage: "e"}},
			CurrentLeader:  produce.ResponseCurrentLeader{LeaderID: 2, LeaderEpoch: 5},
		}}}},
		NodeEndpoints: []produce.ResponseNodeEndpoint{{NodeID: 2, Host: "h", Port: 9093}},
	}
	leader := prototest.Wire{}.I32(2).I32(5).Uvarint(0)
	nodes := prototest.Wire{}.Uvarint(2).I32(2).CompactString("h").I32(9093).Uvarint(0).Uvarint(0) // rack null
	want := prototest.Wire{}.
		Uvarint(2).CompactString("t").Uvarint(2).
		I32(1).I16(6).I64(-1).I64(-1).I64(-1).
		Uvarint(2).I32(0).CompactString("e").Uvarint(0). // record errors
		Uvarint(0).                                      // null error message
		Uvarint(1).Uvarint(0).Uvarint(uint64(len(leader))).Raw(leader...).
		Uvarint(0). // topic tags
		I32(0).
		Uvarint(1).Uvarint(0).Uvarint(uint64(len(nodes))).Raw(nodes...)
	if got := prototest.ResponseBody(t, 10, true, res); !bytes.Equal(got, want) {
		t.Errorf("v10 response:\ngot  % x\nwant % x", got, want)
	}
	if got := prototest.ReadResponse(t, protocol.Produce, 10, true, want); !reflect.DeepEqual(got, res) {
		t.Errorf("v10 response decoded as %+v", got)
	}
}

func TestProducePrepare(t *testing.T) {
	r := &produce.Request{Topics: []produce.RequestTopic{{Partitions: []produce.RequestPartition{{}, {RecordSet: protocol.RecordSet{Version: 1}}}}}}
	r.Prepare(2)
	if v := r.Topics[0].Partitions[0].RecordSet.Version; v != 1 {
		t.Errorf("v2: record format %d, want 1", v)
	}
	r.Topics[0].Partitions[0].RecordSet.Version = 0
	r.Prepare(9)
	if v := r.Topics[0].Partitions[0].RecordSet.Version; v != 2 {
		t.Errorf("v9: record format %d, want 2", v)
	}
	if v := r.Topics[0].Partitions[1].RecordSet.Version; v != 1 {
		t.Errorf("a format chosen by the caller changed to %d", v)
	}

	if (&produce.Request{Acks: 0}).HasResponse() || !(&produce.Request{Acks: -1}).HasResponse() {
		t.Error("HasResponse must be false exactly for acks=0")
	}
}

func TestProduceBroker(t *testing.T) {
	cluster := protocol.Cluster{
		Brokers: map[int32]protocol.Broker{1: {ID: 1, Host: "a"}, 2: {ID: 2, Host: "b"}},
		Topics: map[string]protocol.Topic{"t": {Name: "t", Partitions: map[int32]protocol.Partition{
			0: {ID: 0, Leader: 1}, 1: {ID: 1, Leader: 1}, 2: {ID: 2, Leader: 2}, 3: {ID: 3, Leader: 9},
		}}},
	}
	req := func(parts ...int32) *produce.Request {
		r := &produce.Request{Topics: []produce.RequestTopic{{Topic: "t"}}}
		for _, p := range parts {
			r.Topics[0].Partitions = append(r.Topics[0].Partitions, produce.RequestPartition{Partition: p})
		}
		return r
	}

	b, err := req(0, 1).Broker(cluster)
	if err != nil || b.ID != 1 {
		t.Errorf("partitions 0,1: broker %v, error %v", b, err)
	}

	var perr *produce.Error
	if _, err := req(0, 2).Broker(cluster); !errors.As(err, &perr) {
		t.Errorf("partitions with different leaders: error %v", err)
	}
	if _, err := req(5).Broker(cluster); !errors.Is(err, protocol.ErrNoPartition) {
		t.Errorf("unknown partition: error %v", err)
	}
	if _, err := req(3).Broker(cluster); !errors.Is(err, protocol.ErrNoLeader) {
		t.Errorf("partition without a known leader: error %v", err)
	}
	other := &produce.Request{Topics: []produce.RequestTopic{{Topic: "nope", Partitions: []produce.RequestPartition{{}}}}}
	if _, err := other.Broker(cluster); !errors.Is(err, protocol.ErrNoTopic) {
		t.Errorf("unknown topic: error %v", err)
	}
}

// CurrentLeader defaults to {-1, -1}: a leader 0 at epoch 0 is sent, the
// default is not, and a partition without the tag reads as the default.
func TestProduceCurrentLeaderDefault(t *testing.T) {
	res := &produce.Response{Topics: []produce.ResponseTopic{{Topic: "t", Partitions: []produce.ResponsePartition{{
		Partition: 1, BaseOffset: 5, LogAppendTime: -1, LogStartOffset: 0,
		RecordErrors: []produce.ResponseError{},
	}}}}}
	leader := prototest.Wire{}.I32(0).I32(0).Uvarint(0)
	partition := func(tags prototest.Wire) prototest.Wire {
		return prototest.Wire{}.I32(1).I16(0).I64(5).I64(-1).I64(0).
			Uvarint(1). // no record errors
			Uvarint(0). // null error message
			Raw(tags...)
	}
	zero := prototest.Wire{}.Uvarint(2).CompactString("t").Uvarint(2).
		Raw(partition(prototest.Wire{}.Uvarint(1).Uvarint(0).Uvarint(uint64(len(leader))).Raw(leader...))...).
		Uvarint(0).I32(0).Uvarint(0)
	if got := prototest.ResponseBody(t, 11, true, res); !bytes.Equal(got, zero) {
		t.Errorf("leader {0, 0}:\ngot  % x\nwant % x", got, zero)
	}
	if got := prototest.ReadResponse(t, protocol.Produce, 11, true, zero); !reflect.DeepEqual(got, res) {
		t.Errorf("leader {0, 0} decoded as %+v", got)
	}

	res.Topics[0].Partitions[0].CurrentLeader = produce.ResponseCurrentLeader{LeaderID: -1, LeaderEpoch: -1}
	absent := prototest.Wire{}.Uvarint(2).CompactString("t").Uvarint(2).Raw(partition(prototest.Wire{}.Uvarint(0))...).Uvarint(0).I32(0).Uvarint(0)
	if got := prototest.ResponseBody(t, 11, true, res); !bytes.Equal(got, absent) {
		t.Errorf("default leader:\ngot  % x\nwant % x", got, absent)
	}
	if got := prototest.ReadResponse(t, protocol.Produce, 10, true, absent); !reflect.DeepEqual(got, res) {
		t.Errorf("absent leader decoded as %+v", got)
	}
}
