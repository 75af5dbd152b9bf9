package kafka

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/consumer"
	"github.com/segmentio/kafka-go/protocol/syncgroup"
)

func TestClientSyncGroupAssignments(t *testing.T) {
	var answer []byte
	var code int16
	client, rt := adminFakeClient(func(req protocol.Message) (protocol.Message, error) {
		return &syncgroup.Response{ThrottleTimeMS: 2, ErrorCode: code, ProtocolType: "consumer", ProtocolName: "range", Assignments: answer}, nil
	})
	ctx := context.Background()

	// What the leader sends decodes, in the consumer protocol's format, to
	// the assignments given, topics sorted.
	answer, _ = protocol.Marshal(0, consumer.Assignment{
		Version:            0,
		AssignedPartitions: []consumer.TopicPartition{{Topic: "x", Partitions: []int32{4, 1}}, {Topic: "y", Partitions: []int32{}}},
		UserData:           []byte{9},
	})
	res, err := client.SyncGroup(ctx, &SyncGroupRequest{
		GroupID: "g", GenerationID: 7, MemberID: "m", GroupInstanceID: "i", ProtocolType: "consumer", ProtocolName: "range",
		Assignments: []SyncGroupRequestAssignment{
			{MemberID: "m", Assignment: GroupProtocolAssignment{AssignedPartitions: map[string][]int{"y": {2}, "x": {0, 1}}, UserData: []byte("u")}},
			{MemberID: "n"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	sent := rt.sent[0].(*syncgroup.Request)
	if sent.GroupID != "g" || sent.GenerationID != 7 || sent.MemberID != "m" || sent.GroupInstanceID != "i" ||
		sent.ProtocolType != "consumer" || sent.ProtocolName != "range" || len(sent.Assignments) != 2 {
		t.Fatalf("sent %+v", sent)
	}
	wantAssign := []consumer.Assignment{
		{Version: 1, AssignedPartitions: []consumer.TopicPartition{{Topic: "x", Partitions: []int32{0, 1}}, {Topic: "y", Partitions: []int32{2}}}, UserData: []byte("u")},
		{Version: 1, AssignedPartitions: []consumer.TopicPartition{}},
	}
	for i, a := range sent.Assignments {
		var got consumer.Assignment
		if err := protocol.Unmarshal(a.Assignment, 1, &got); err != nil {
			t.Fatalf("assignment %d: %v", i, err)
		}
		if a.MemberID != []string{"m", "n"}[i] || !reflect.DeepEqual(got, wantAssign[i]) {
			t.Errorf("assignment %d for %s: %+v, want %+v", i, a.MemberID, got, wantAssign[i])
		}
	}
	want := &SyncGroupResponse{
		Throttle: 2e6, ProtocolType: "consumer", ProtocolName: "range",
		Assignment: GroupProtocolAssignment{AssignedPartitions: map[string][]int{"x": {4, 1}, "y": {}}, UserData: []byte{9}},
	}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("answer %+v, want %+v", res, want)
	}

	// A failed sync carries no assignment: the broker's error is returned,
	// not a decoding error.
	answer, code = nil, int16(RebalanceInProgress)
	res, err = client.SyncGroup(ctx, &SyncGroupRequest{GroupID: "g"})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res.Error, RebalanceInProgress) || res.Assignment.AssignedPartitions == nil || len(res.Assignment.AssignedPartitions) != 0 {
		t.Errorf("failed sync mapped to %+v", res)
	}

	// Truncated assignments are an error.
	answer, code = []byte{0, 1, 0, 0, 0, 1}, 0
	if _, err := client.SyncGroup(ctx, &SyncGroupRequest{GroupID: "g"}); err == nil {
		t.Error("a truncated assignment was accepted")
	}
	answer = []byte{0xff, 0xff}
	if _, err := client.SyncGroup(ctx, &SyncGroupRequest{GroupID: "g"}); err == nil {
		t.Error("a negative assignment version was accepted")
	}
}
