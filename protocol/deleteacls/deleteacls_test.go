package deleteacls_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol/deleteacls"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestDeleteAclsRoundTrip(t *testing.T) {
	filter := deleteacls.RequestFilter{ResourceTypeFilter: 1, PrincipalFilter: "User:alice", Operation: 1, PermissionType: 1}
	match := deleteacls.MatchingACL{ResourceType: 2, ResourceName: "t", Principal: "User:alice", Host: "*", Operation: 3, PermissionType: 3}
	prototest.TestRequest(t, 0, &deleteacls.Request{Filters: []deleteacls.RequestFilter{filter}})
	prototest.TestResponse(t, 0, &deleteacls.Response{ThrottleTimeMs: 1, FilterResults: []deleteacls.FilterResult{{MatchingACLs: []deleteacls.MatchingACL{match}}}})
	filter.ResourcePatternTypeFilter = 1
	match.ResourcePatternType = 3
	for _, v := range []int16{1, 2, 3} {
		prototest.TestRequest(t, v, &deleteacls.Request{Filters: []deleteacls.RequestFilter{filter, {ResourceTypeFilter: 1, ResourceNameFilter: "x", HostFilter: "h", Operation: 1, PermissionType: 1, ResourcePatternTypeFilter: 1}}})
		prototest.TestResponse(t, v, &deleteacls.Response{ThrottleTimeMs: 1, FilterResults: []deleteacls.FilterResult{
			{MatchingACLs: []deleteacls.MatchingACL{match}}, {ErrorCode: 31, ErrorMessage: "denied"},
		}})
	}
}
