package leavegroup_test

import (
	"reflect"
	"testing"

	"github.com/segmentio/kafka-go/protocol/leavegroup"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestLeaveGroupRoundTrip(t *testing.T) {
	prototest.TestRequest(t, 0, &leavegroup.Request{GroupID: "g", MemberID: "m"})
	prototest.TestRequest(t, 3, &leavegroup.Request{GroupID: "g", Members: []leavegroup.RequestMember{{MemberID: "m1"}, {MemberID: "m2", GroupInstanceID: "i"}}})
	prototest.TestRequest(t, 5, &leavegroup.Request{GroupID: "g", Members: []leavegroup.RequestMember{{MemberID: "m1", Reason: "bye"}}})

	prototest.TestResponse(t, 0, &leavegroup.Response{ErrorCode: 25})
	prototest.TestResponse(t, 3, &leavegroup.Response{ThrottleTimeMS: 1, Members: []leavegroup.ResponseMember{{MemberID: "m1", ErrorCode: 25}, {MemberID: "m2", GroupInstanceID: "i"}}})
	prototest.TestResponse(t, 5, &leavegroup.Response{ThrottleTimeMS: 1, Members: []leavegroup.ResponseMember{{MemberID: "m1", GroupInstanceID: "i"}}})
}

func TestLeaveGroupPrepare(t *testing.T) {
	r := &leavegroup.Request{GroupID: "g", Members: []leavegroup.RequestMember{{MemberID: "m1"}}}
	r.Prepare(2)
	if r.MemberID != "m1" {
		t.Errorf("v2: MemberID = %q", r.MemberID)
	}
	r = &leavegroup.Request{GroupID: "g", MemberID: "m"}
	r.Prepare(4)
	if !reflect.DeepEqual(r.Members, []leavegroup.RequestMember{{MemberID: "m"}}) {
		t.Errorf("v4: Members = %+v", r.Members)
	}
	if r.Group() != "g" {
		t.Errorf("Group() = %q", r.Group())
	}
}
