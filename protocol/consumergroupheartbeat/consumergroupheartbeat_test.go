package consumergroupheartbeat_test

import (
	"bytes"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/consumergroupheartbeat"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

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
	want := prototest.Wire{}.CompactString("g").CompactString("m").I32(0).CompactString("i")
	want = want.Uvarint(0)                    // rack
	want = want.I32(30000)                    // rebalance timeout
	want = want.Uvarint(2).CompactString("t") // subscribed topics
	want = want.Uvarint(0)                    // server assignor
	want = want.Uvarint(1)                    // owned partitions: empty
	want = want.Uvarint(0)                    // tagged fields
	if got := prototest.RequestBody(t, 0, true, req); !bytes.Equal(got, want) {
		t.Fatalf("request\n got % x\nwant % x", got, want)
	}

	req = &consumergroupheartbeat.Request{GroupID: "g", MemberID: "m", MemberEpoch: 4, RebalanceTimeoutMs: -1,
		TopicPartitions: []consumergroupheartbeat.TopicPartitions{{TopicID: topicA, Partitions: []int32{3}}}}
	want = prototest.Wire{}.
		CompactString("g").CompactString("m").I32(4).Uvarint(0).Uvarint(0).I32(-1).Uvarint(0).
		Uvarint(0). // v1: regex
		Uvarint(0).
		Uvarint(2).Raw(topicA[:]...).Uvarint(2).I32(3).Uvarint(0).
		Uvarint(0)
	if got := prototest.RequestBody(t, 1, true, req); !bytes.Equal(got, want) {
		t.Fatalf("v1 request\n got % x\nwant % x", got, want)
	}
}

// The assignment is a nullable struct: -1 when absent, 1 and the struct
// when present.
func TestResponseAssignment(t *testing.T) {
	body := prototest.Wire{}.I32(0).I16(0).Uvarint(0).CompactString("m").I32(5).I32(3000).
		I8(1).Uvarint(2).Raw(topicA[:]...).Uvarint(3).I32(0).I32(2).Uvarint(0).Uvarint(0). // assignment
		Uvarint(0)
	res := prototest.ReadResponse(t, protocol.ConsumerGroupHeartbeat, 0, true, body).(*consumergroupheartbeat.Response)
	if res.MemberID != "m" || res.MemberEpoch != 5 || res.HeartbeatIntervalMs != 3000 || res.Assignment == nil {
		t.Fatalf("%+v", res)
	}
	tps := res.Assignment.TopicPartitions
	if len(tps) != 1 || tps[0].TopicID != topicA || len(tps[0].Partitions) != 2 || tps[0].Partitions[1] != 2 {
		t.Fatalf("assignment %+v", tps)
	}

	body = prototest.Wire{}.I32(0).I16(113).CompactString("stale").Uvarint(0).I32(5).I32(3000).I8(-1).Uvarint(0)
	res = prototest.ReadResponse(t, protocol.ConsumerGroupHeartbeat, 1, true, body).(*consumergroupheartbeat.Response)
	if res.Assignment != nil || res.ErrorCode != 113 || res.ErrorMessage != "stale" {
		t.Fatalf("%+v", res)
	}
}
