package consumergroupheartbeat_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/consumergroupheartbeat"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

// wire builds expected bytes by hand from the spec's primitive types,
// independently of the codec under test.
type wire []byte

func (w wire) i8(v int8) wire     { return append(w, byte(v)) }
func (w wire) i16(v int16) wire   { return binary.BigEndian.AppendUint16(w, uint16(v)) }
func (w wire) i32(v int32) wire   { return binary.BigEndian.AppendUint32(w, uint32(v)) }
func (w wire) uv(v uint64) wire   { return binary.AppendUvarint(w, v) }
func (w wire) cstr(s string) wire { return append(w.uv(uint64(len(s))+1), s...) }
func (w wire) null() wire         { return w.uv(0) }
func (w wire) raw(b ...byte) wire { return append(w, b...) }

var topicA = [16]byte{0: 0xA0, 15: 0x0A}

func TestRoundTrip(t *testing.T) {
	for v := int16(0); v <= 1; v++ {
		prototest.TestRequest(t, v, &consumergroupheartbeat.Request{
			GroupID: "g", MemberID: "m", MemberEpoch: 0, InstanceID: "i", RackID: "r",
			RebalanceTimeoutMs: 30000, SubscribedTopicNames: []string{"a", "b"}, ServerAssignor: "uniform",
			TopicPartitions: []consumergroupheartbeat.TopicPartitions{},
		})
		prototest.TestRequest(t, v, &consumergroupheartbeat.Request{
			GroupID: "g", MemberID: "m", MemberEpoch: 7, RebalanceTimeoutMs: -1,
			TopicPartitions: []consumergroupheartbeat.TopicPartitions{{TopicID: topicA, Partitions: []int32{0, 2}}},
		})
		prototest.TestResponse(t, v, &consumergroupheartbeat.Response{
			ThrottleTimeMs: 1, MemberID: "m", MemberEpoch: 3, HeartbeatIntervalMs: 5000,
			Assignment: &consumergroupheartbeat.Assignment{TopicPartitions: []consumergroupheartbeat.TopicPartitions{
				{TopicID: topicA, Partitions: []int32{1}},
			}},
		})
		prototest.TestResponse(t, v, &consumergroupheartbeat.Response{ErrorCode: 110, ErrorMessage: "fenced", MemberEpoch: 3})
	}
	prototest.TestRequest(t, 1, &consumergroupheartbeat.Request{GroupID: "g", MemberID: "m", MemberEpoch: 2, SubscribedTopicRegex: "a.*"})
}

// A join carries every field; unchanged ones are null, and a join's owned
// partitions are an empty array, not null (brokers refuse null there).
func TestRequestBytes(t *testing.T) {
	req := &consumergroupheartbeat.Request{
		GroupID: "g", MemberID: "m", MemberEpoch: 0, InstanceID: "i",
		RebalanceTimeoutMs: 30000, SubscribedTopicNames: []string{"t"},
		TopicPartitions: []consumergroupheartbeat.TopicPartitions{},
	}
	var buf bytes.Buffer
	if err := protocol.WriteRequest(&buf, 0, 9, "c", req); err != nil {
		t.Fatal(err)
	}
	want := wire{}.i16(68).i16(0).i32(9).i16(1).raw('c').uv(0) // header v2
	want = want.cstr("g").cstr("m").i32(0).cstr("i")
	want = want.null()          // rack
	want = want.i32(30000)      // rebalance timeout
	want = want.uv(2).cstr("t") // subscribed topics
	want = want.null()          // server assignor
	want = want.uv(1)           // owned partitions: empty
	want = want.uv(0)           // tagged fields
	got := buf.Bytes()[4:]
	if !bytes.Equal(got, want) {
		t.Fatalf("request\n got % x\nwant % x", got, want)
	}

	req = &consumergroupheartbeat.Request{GroupID: "g", MemberID: "m", MemberEpoch: 4, RebalanceTimeoutMs: -1,
		TopicPartitions: []consumergroupheartbeat.TopicPartitions{{TopicID: topicA, Partitions: []int32{3}}}}
	buf.Reset()
	if err := protocol.WriteRequest(&buf, 1, 9, "c", req); err != nil {
		t.Fatal(err)
	}
	want = wire{}.i16(68).i16(1).i32(9).i16(1).raw('c').uv(0).
		cstr("g").cstr("m").i32(4).null().null().i32(-1).null().
		null(). // v1: regex
		null().
		uv(2).raw(topicA[:]...).uv(2).i32(3).uv(0).
		uv(0)
	if got := buf.Bytes()[4:]; !bytes.Equal(got, want) {
		t.Fatalf("v1 request\n got % x\nwant % x", got, want)
	}
}

// The assignment is a nullable struct: -1 when absent, 1 and the struct
// when present.
func TestResponseAssignment(t *testing.T) {
	body := wire{}.i32(0).i16(0).null().cstr("m").i32(5).i32(3000).
		i8(1).uv(2).raw(topicA[:]...).uv(3).i32(0).i32(2).uv(0).uv(0). // assignment
		uv(0)
	res := decode(t, 0, body).(*consumergroupheartbeat.Response)
	if res.MemberID != "m" || res.MemberEpoch != 5 || res.HeartbeatIntervalMs != 3000 || res.Assignment == nil {
		t.Fatalf("%+v", res)
	}
	tps := res.Assignment.TopicPartitions
	if len(tps) != 1 || tps[0].TopicID != topicA || len(tps[0].Partitions) != 2 || tps[0].Partitions[1] != 2 {
		t.Fatalf("assignment %+v", tps)
	}

	body = wire{}.i32(0).i16(113).cstr("stale").null().i32(5).i32(3000).i8(-1).uv(0)
	res = decode(t, 1, body).(*consumergroupheartbeat.Response)
	if res.Assignment != nil || res.ErrorCode != 113 || res.ErrorMessage != "stale" {
		t.Fatalf("%+v", res)
	}
}

func decode(t *testing.T, v int16, body []byte) protocol.Message {
	t.Helper()
	frame := wire{}.i32(int32(4 + 1 + len(body))).i32(1).uv(0)
	frame = append(frame, body...)
	_, msg, err := protocol.ReadResponse(bytes.NewReader(frame), protocol.ConsumerGroupHeartbeat, v)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}
