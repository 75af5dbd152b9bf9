package fetch_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/fetch"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

// wire builds expected bytes by hand, following the Kafka spec's primitive
// types, independently of the codec under test.
type wire []byte

func (w wire) i8(v int8) wire   { return append(w, byte(v)) }
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

// readRequestBody frames body as a request of version v and decodes it.
func readRequestBody(t *testing.T, key protocol.ApiKey, v int16, flexible bool, body []byte) protocol.Message {
	t.Helper()
	frame := wire{}.i32(0).i16(int16(key)).i16(v).i32(7).str("c")
	if flexible {
		frame = frame.uv(0)
	}
	frame = append(frame, body...)
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	gotV, _, _, msg, err := protocol.ReadRequest(bytes.NewReader(frame))
	if err != nil {
		t.Fatal(err)
	}
	if gotV != v {
		t.Fatalf("version %d", gotV)
	}
	return msg
}

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
	want := wire{}.i32(-1).i32(250).i32(1).i32(1000).i8(1).
		i32(1).str("t").i32(1).i32(2).i64(77).i32(500)
	if got := requestBody(t, 4, false, req); !bytes.Equal(got, want) {
		t.Errorf("v4 request:\ngot  % x\nwant % x", got, want)
	}

	// A partition with an error and no records: the records are null.
	body := wire{}.i32(0).
		i32(1).str("t").i32(1).
		i32(2).i16(1).i64(-1).i64(-1).
		i32(1).i64(8).i64(40). // one aborted transaction
		i32(-1)
	res := readResponse(t, protocol.Fetch, 4, false, body).(*fetch.Response)
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
	want := wire{}.i32(-1).i32(250).i32(1).i32(1000).i8(0).i32(0).i32(-1).
		uv(2).cstr("t").uv(2).i32(2).i32(6).i64(77).i32(5).i64(-1).i32(500).uv(0).uv(0).
		uv(2).cstr("f").uv(2).i32(3).uv(0).
		cstr("r").
		uv(1).uv(0).uv(2).cstr("c") // tagged ClusterID
	if got := requestBody(t, 12, true, req); !bytes.Equal(got, want) {
		t.Errorf("v12 request:\ngot  % x\nwant % x", got, want)
	}
	if got := readRequestBody(t, protocol.Fetch, 12, true, want); !reflect.DeepEqual(got, req) {
		t.Errorf("v12 request decoded as %+v", got)
	}
	// Without a cluster ID the tagged field is left out.
	req.ClusterID = ""
	if got := requestBody(t, 12, true, req); !bytes.Equal(got, append(want[:len(want)-5:len(want)-5], 0)) {
		t.Errorf("v12 request without cluster ID ends with % x", got[len(got)-3:])
	}

	diverging := wire{}.i32(2).i64(9).uv(0)
	leader := wire{}.i32(1).i32(3).uv(0)
	body := wire{}.i32(0).i16(0).i32(0).
		uv(2).cstr("t").uv(2).
		i32(2).i16(0).i64(12).i64(12).i64(0).
		uv(0).   // null aborted transactions
		i32(-1). // preferred read replica
		uv(0).   // null records
		uv(2).   // two tagged fields
		uv(0).uv(uint64(len(diverging))).raw(diverging...).
		uv(1).uv(uint64(len(leader))).raw(leader...).
		uv(0). // topic tags
		uv(0)
	res := readResponse(t, protocol.Fetch, 12, true, body).(*fetch.Response)
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
	zeros := wire{}.i32(0).i64(0).uv(0)
	leader := wire{}.i32(0).i32(0).uv(0)
	snapshot := wire{}.i64(0).i32(0).uv(0)
	partition := func(tags wire) wire {
		return wire{}.i32(2).i16(0).i64(12).i64(12).i64(0).
			uv(0).   // null aborted transactions
			i32(-1). // preferred read replica
			uv(0).   // null records
			raw(tags...)
	}
	body := func(tags wire) wire {
		return wire{}.i32(0).i16(0).i32(0).uv(2).cstr("t").uv(2).raw(partition(tags)...).uv(0).uv(0)
	}
	sent := body(wire{}.uv(3).
		uv(0).uv(uint64(len(zeros))).raw(zeros...).
		uv(1).uv(uint64(len(leader))).raw(leader...).
		uv(2).uv(uint64(len(snapshot))).raw(snapshot...))
	if got := responseBody(t, 12, true, res); !bytes.Equal(got, sent) {
		t.Errorf("zero tagged fields:\ngot  % x\nwant % x", got, sent)
	}
	if got := readResponse(t, protocol.Fetch, 12, true, sent); !reflect.DeepEqual(got, res) {
		t.Errorf("zero tagged fields decoded as %+v", got)
	}

	p := &res.Topics[0].Partitions[0]
	p.DivergingEpoch = fetch.ResponseEpochEndOffset{Epoch: -1, EndOffset: -1}
	p.CurrentLeader = fetch.ResponseLeader{LeaderID: -1, LeaderEpoch: -1}
	p.SnapshotID = fetch.ResponseSnapshotID{EndOffset: -1, Epoch: -1}
	absent := body(wire{}.uv(0))
	if got := responseBody(t, 12, true, res); !bytes.Equal(got, absent) {
		t.Errorf("default tagged fields:\ngot  % x\nwant % x", got, absent)
	}
	if got := readResponse(t, protocol.Fetch, 12, true, absent); !reflect.DeepEqual(got, res) {
		t.Errorf("absent tagged fields decoded as %+v", got)
	}
}
