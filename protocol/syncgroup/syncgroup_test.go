package syncgroup_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol/prototest"
	"github.com/segmentio/kafka-go/protocol/syncgroup"
)

func TestSyncGroupRoundTrip(t *testing.T) {
	assignments := []syncgroup.RequestAssignment{{MemberID: "m1", Assignment: []byte{0, 1, 2}}, {MemberID: "m2", Assignment: []byte{}}}
	prototest.TestRequest(t, 0, &syncgroup.Request{GroupID: "g", GenerationID: 1, MemberID: "m1", Assignments: assignments})
	prototest.TestRequest(t, 3, &syncgroup.Request{GroupID: "g", GenerationID: 1, MemberID: "m1", GroupInstanceID: "i", Assignments: assignments})
	prototest.TestRequest(t, 4, &syncgroup.Request{GroupID: "g", GenerationID: 1, MemberID: "m1", Assignments: assignments})
	prototest.TestRequest(t, 5, &syncgroup.Request{GroupID: "g", GenerationID: 1, MemberID: "m1", GroupInstanceID: "i", ProtocolType: "consumer", ProtocolName: "range", Assignments: assignments})

	prototest.TestResponse(t, 0, &syncgroup.Response{ErrorCode: 27, Assignments: []byte{9, 9}})
	prototest.TestResponse(t, 3, &syncgroup.Response{ThrottleTimeMS: 2, Assignments: []byte{9, 9}})
	prototest.TestResponse(t, 5, &syncgroup.Response{ThrottleTimeMS: 2, ProtocolType: "consumer", ProtocolName: "range", Assignments: []byte{9, 9}})
}
