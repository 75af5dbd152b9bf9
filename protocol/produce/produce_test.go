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

// wire builds expected bytes by hand, following the Kafka spec's primitive
// types, independently of the codec under test.
type wire []byte

func (w wire) i16(v int16) wire { return binary.BigEndian.AppendUint16(w, uint16(v)) }
func (w wire) i32(v int32) wire { return binary.BigEndian.AppendUint32(w, uint32(v)) }
func (w wire) i64(v int64) wire { return binary.BigEndian.AppendUint64(w, uint64(v)) }
func (w wire) uv(v uint64) wire { return binary.AppendUvarint(w, v) }

// str is STRING (int16 length), cstr COMPACT_STRING (uvarint length+1).
func (w wire) str(s string) wire  { return append(w.i16(int16(len(s))), s...) }
func (w wire) cstr(s string) wire { return append(w.uv(uint64(len(s))+1), s...) }

// raw appends bytes as they are (tagged-field sections, UUIDs, ...).
func (w wire) raw(b ...byte) wire { return append(w, b...) }

// requestBody encodes req at version v and strips the request header
// (client ID "c"; header v2 adds an empty tagged-field section).
func requestBody(t *testing.T, v int16, flexible bool, req protocol.Message) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := protocol.WriteRequest(&buf, v, 7, "c", req); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if got := int(binary.BigEndian.Uint32(b)); got != len(b)-4 {
		t.Fatalf("frame size %d, frame has %d bytes", got, len(b)-4)
	}
	hdr := 4 + 2 + 2 + 4 + 2 + 1
	if flexible {
		if b[hdr] != 0 {
			t.Fatalf("request header tagged fields: got %#x", b[hdr])
		}
		hdr++
	}
	return b[hdr:]
}

// responseBody encodes res at version v and strips the response header
// (header v1 adds an empty tagged-field section).
func responseBody(t *testing.T, v int16, taggedHeader bool, res protocol.Message) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := protocol.WriteResponse(&buf, v, 7, res); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if got := int(binary.BigEndian.Uint32(b)); got != len(b)-4 {
		t.Fatalf("frame size %d, frame has %d bytes", got, len(b)-4)
	}
	hdr := 8
	if taggedHeader {
		if b[hdr] != 0 {
			t.Fatalf("response header tagged fields: got %#x", b[hdr])
		}
		hdr++
	}
	return b[hdr:]
}

// readResponse frames body as a response of version v and decodes it.
func readResponse(t *testing.T, key protocol.ApiKey, v int16, taggedHeader bool, body []byte) protocol.Message {
	t.Helper()
	frame := wire{}.i32(0).i32(7)
	if taggedHeader {
		frame = frame.uv(0)
	}
	frame = append(frame, body...)
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	id, msg, err := protocol.ReadResponse(bytes.NewReader(frame), key, v)
	if err != nil {
		t.Fatal(err)
	}
	if id != 7 {
		t.Fatalf("correlation ID %d", id)
	}
	return msg
}

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
	got := requestBody(t, 3, false, request(""))
	prefix := wire{}.i16(-1).i16(-1).i32(500). // null transactional ID, acks, timeout
							i32(1).str("t").i32(1).i32(1)
	checkRequest(t, got, prefix, nil, false)

	res := &produce.Response{
		Topics:         []produce.ResponseTopic{{Topic: "t", Partitions: []produce.ResponsePartition{{Partition: 1, ErrorCode: 0, BaseOffset: 42, LogAppendTime: -1}}}},
		ThrottleTimeMs: 9,
	}
	want := wire{}.i32(1).str("t").i32(1).i32(1).i16(0).i64(42).i64(-1).i32(9)
	if got := responseBody(t, 3, false, res); !bytes.Equal(got, want) {
		t.Errorf("v3 response:\ngot  % x\nwant % x", got, want)
	}
	if got := readResponse(t, protocol.Produce, 3, false, want); !reflect.DeepEqual(got, res) {
		t.Errorf("v3 response decoded as %+v", got)
	}
}

func TestProduceGoldenV10(t *testing.T) {
	got := requestBody(t, 10, true, request("x"))
	prefix := wire{}.cstr("x").i16(-1).i32(500).uv(2).cstr("t").uv(2).i32(1)
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
	leader := wire{}.i32(2).i32(5).uv(0)
	nodes := wire{}.uv(2).i32(2).cstr("h").i32(9093).uv(0).uv(0) // rack null
	want := wire{}.
		uv(2).cstr("t").uv(2).
		i32(1).i16(6).i64(-1).i64(-1).i64(-1).
		uv(2).i32(0).cstr("e").uv(0). // record errors
		uv(0).                        // null error message
		uv(1).uv(0).uv(uint64(len(leader))).raw(leader...).
		uv(0). // topic tags
		i32(0).
		uv(1).uv(0).uv(uint64(len(nodes))).raw(nodes...)
	if got := responseBody(t, 10, true, res); !bytes.Equal(got, want) {
		t.Errorf("v10 response:\ngot  % x\nwant % x", got, want)
	}
	if got := readResponse(t, protocol.Produce, 10, true, want); !reflect.DeepEqual(got, res) {
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
	leader := wire{}.i32(0).i32(0).uv(0)
	partition := func(tags wire) wire {
		return wire{}.i32(1).i16(0).i64(5).i64(-1).i64(0).
			uv(1). // no record errors
			uv(0). // null error message
			raw(tags...)
	}
	zero := wire{}.uv(2).cstr("t").uv(2).
		raw(partition(wire{}.uv(1).uv(0).uv(uint64(len(leader))).raw(leader...))...).
		uv(0).i32(0).uv(0)
	if got := responseBody(t, 11, true, res); !bytes.Equal(got, zero) {
		t.Errorf("leader {0, 0}:\ngot  % x\nwant % x", got, zero)
	}
	if got := readResponse(t, protocol.Produce, 11, true, zero); !reflect.DeepEqual(got, res) {
		t.Errorf("leader {0, 0} decoded as %+v", got)
	}

	res.Topics[0].Partitions[0].CurrentLeader = produce.ResponseCurrentLeader{LeaderID: -1, LeaderEpoch: -1}
	absent := wire{}.uv(2).cstr("t").uv(2).raw(partition(wire{}.uv(0))...).uv(0).i32(0).uv(0)
	if got := responseBody(t, 11, true, res); !bytes.Equal(got, absent) {
		t.Errorf("default leader:\ngot  % x\nwant % x", got, absent)
	}
	if got := readResponse(t, protocol.Produce, 10, true, absent); !reflect.DeepEqual(got, res) {
		t.Errorf("absent leader decoded as %+v", got)
	}
}
