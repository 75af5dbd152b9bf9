package createacls_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol/createacls"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestCreateAclsRoundTrip(t *testing.T) {
	acl := createacls.RequestACLs{ResourceType: 2, ResourceName: "t", Principal: "User:alice", Host: "*", Operation: 3, PermissionType: 3}
	prototest.TestRequest(t, 0, &createacls.Request{Creations: []createacls.RequestACLs{acl}})
	acl.ResourcePatternType = 3
	prototest.TestRequest(t, 1, &createacls.Request{Creations: []createacls.RequestACLs{acl}})
	prototest.TestRequest(t, 3, &createacls.Request{Creations: []createacls.RequestACLs{acl, acl}})
	for _, v := range []int16{0, 2, 3} {
		prototest.TestResponse(t, v, &createacls.Response{ThrottleTimeMs: 1, Results: []createacls.ResponseACLs{{}, {ErrorCode: 31, ErrorMessage: "denied"}}})
	}
}
