package deletegroups_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol/deletegroups"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestDeleteGroupsRoundTrip(t *testing.T) {
	for _, v := range []int16{0, 1, 2} {
		prototest.TestRequest(t, v, &deletegroups.Request{GroupIDs: []string{"a", "b"}})
		prototest.TestResponse(t, v, &deletegroups.Response{ThrottleTimeMs: 1, Responses: []deletegroups.ResponseGroup{{GroupID: "a"}, {GroupID: "b", ErrorCode: 68}}})
	}
	if g := (&deletegroups.Request{GroupIDs: []string{"a", "b"}}).Group(); g != "a" {
		t.Errorf("Group() = %q", g)
	}
	if g := (&deletegroups.Request{}).Group(); g != "" {
		t.Errorf("Group() of no groups = %q", g)
	}
}
