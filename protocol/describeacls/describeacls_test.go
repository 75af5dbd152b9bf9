package describeacls_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/describeacls"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestDescribeAclsRoundTrip(t *testing.T) {
	prototest.TestRequest(t, 0, &describeacls.Request{ResourceTypeFilter: 2, ResourceNameFilter: "t", Operation: 1, PermissionType: 1})
	prototest.TestRequest(t, 1, &describeacls.Request{ResourceTypeFilter: 2, ResourcePatternTypeFilter: 1, PrincipalFilter: "User:a", HostFilter: "*", Operation: 1, PermissionType: 1})
	prototest.TestRequest(t, 3, &describeacls.Request{ResourceTypeFilter: 2, ResourcePatternTypeFilter: 1, Operation: 1, PermissionType: 1})

	resource := describeacls.Resource{ResourceType: 2, ResourceName: "t", ACLs: []describeacls.ResponseACL{{Principal: "User:a", Host: "*", Operation: 3, PermissionType: 3}}}
	prototest.TestResponse(t, 0, &describeacls.Response{ThrottleTimeMs: 1, Resources: []describeacls.Resource{resource}})
	resource.PatternType = 3
	prototest.TestResponse(t, 1, &describeacls.Response{ThrottleTimeMs: 1, ErrorCode: 31, ErrorMessage: "denied", Resources: []describeacls.Resource{resource}})
	prototest.TestResponse(t, 3, &describeacls.Response{ThrottleTimeMs: 1, Resources: []describeacls.Resource{resource}})
}

// The filter's fields sit directly in the request, with a single
// tagged-field section at the end in flexible versions.
func TestDescribeAclsFilterLayout(t *testing.T) {
	req := &describeacls.Request{Filter: describeacls.ACLFilter{
		ResourceTypeFilter: 2, ResourceNameFilter: "t", ResourcePatternTypeFilter: 3, Operation: 4, PermissionType: 5,
	}}
	req.Prepare(2)
	var buf bytes.Buffer
	if err := protocol.WriteRequest(&buf, 2, 1, "c", req); err != nil {
		t.Fatal(err)
	}
	body := buf.Bytes()[4+2+2+4+2+1+1:]
	want := []byte{2, 2, 't', 3, 0, 0, 4, 5, 0} // type, name, pattern, null principal, null host, op, perm, tags
	if !bytes.Equal(body, want) {
		t.Errorf("v2 body % x, want % x", body, want)
	}

	body = nil
	buf.Reset()
	if err := protocol.WriteRequest(&buf, 1, 1, "c", req); err != nil {
		t.Fatal(err)
	}
	body = buf.Bytes()[4+2+2+4+2+1:]
	want = []byte{2, 0, 1, 't', 3, 0xff, 0xff, 0xff, 0xff, 4, 5}
	if !bytes.Equal(body, want) {
		t.Errorf("v1 body % x, want % x", body, want)
	}
	if n := binary.BigEndian.Uint32(buf.Bytes()); int(n) != buf.Len()-4 {
		t.Errorf("frame size %d for %d bytes", n, buf.Len()-4)
	}
}
