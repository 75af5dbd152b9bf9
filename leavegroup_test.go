package kafka

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/leavegroup"
)

// Brokers speaking LeaveGroup v0-v2 answer without a member list (kfake
// speaks v5, so this is checked against a fake RoundTripper): the member of
// the request is reported, so that the answer has the same shape whatever
// the version.
func TestClientLeaveGroupWithoutMemberList(t *testing.T) {
	client, rt := adminFakeClient(func(req protocol.Message) (protocol.Message, error) {
		return &leavegroup.Response{ThrottleTimeMS: 3, ErrorCode: int16(UnknownMemberId)}, nil
	})
	res, err := client.LeaveGroup(context.Background(), &LeaveGroupRequest{
		GroupID: "g",
		Members: []LeaveGroupRequestMember{{ID: "m1", GroupInstanceID: "i1"}, {ID: "m2"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	wantReq := &leavegroup.Request{GroupID: "g", Members: []leavegroup.RequestMember{{MemberID: "m1", GroupInstanceID: "i1"}, {MemberID: "m2"}}}
	if !reflect.DeepEqual(rt.sent[0], wantReq) {
		t.Errorf("sent %+v, want %+v", rt.sent[0], wantReq)
	}
	if !errors.Is(res.Error, UnknownMemberId) || res.Throttle.Milliseconds() != 3 {
		t.Errorf("answer %+v", res)
	}
	if want := []LeaveGroupResponseMember{{ID: "m1", GroupInstanceID: "i1"}}; !reflect.DeepEqual(res.Members, want) {
		t.Errorf("members %+v, want %+v", res.Members, want)
	}

	// Without members in the request either, there is nobody to report
	// (and nothing to crash on).
	res, err = client.LeaveGroup(context.Background(), &LeaveGroupRequest{GroupID: "g"})
	if err != nil || len(res.Members) != 0 {
		t.Fatalf("leaving without members: %+v, %v", res, err)
	}

	boom := errors.New("boom")
	client, _ = adminFakeClient(func(protocol.Message) (protocol.Message, error) { return nil, boom })
	if _, err := client.LeaveGroup(context.Background(), &LeaveGroupRequest{GroupID: "g"}); !errors.Is(err, boom) || err.Error() != "kafka.(*Client).LeaveGroup: boom" {
		t.Errorf("transport error: %v", err)
	}
}
