package describeacls_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/describeacls"
	"github.com/segmentio/kafka-go/protocol/prototest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Decoding fills Filter, the field upstream's users read, so a request
// comes back from the wire as it went in at every version.
func TestDescribeAclsRoundTrip(t *testing.T) {
	filter := describeacls.ACLFilter{ResourceTypeFilter: 2, ResourceNameFilter: "t", PrincipalFilter: "User:a", HostFilter: "*", Operation: 1, PermissionType: 1}
	prototest.TestRequest(t, 0, &describeacls.Request{Filter: filter})
	filter.ResourcePatternTypeFilter = 3 // v1+
	for v := int16(1); v <= 3; v++ {
		prototest.TestRequest(t, v, &describeacls.Request{Filter: filter})
	}
	// Empty filters travel as nulls and come back empty.
	prototest.TestRequest(t, 3, &describeacls.Request{Filter: describeacls.ACLFilter{ResourceTypeFilter: 1, ResourcePatternTypeFilter: 1, Operation: 1, PermissionType: 1}})

	resource := describeacls.Resource{ResourceType: 2, ResourceName: "t", ACLs: []describeacls.ResponseACL{{Principal: "User:a", Host: "*", Operation: 3, PermissionType: 3}}}
	prototest.TestResponse(t, 0, &describeacls.Response{ThrottleTimeMs: 1, Resources: []describeacls.Resource{resource}})
	resource.PatternType = 3
	prototest.TestResponse(t, 1, &describeacls.Response{ThrottleTimeMs: 1, ErrorCode: 31, ErrorMessage: "denied", Resources: []describeacls.Resource{resource}})
	prototest.TestResponse(t, 3, &describeacls.Response{ThrottleTimeMs: 1, Resources: []describeacls.Resource{resource}})
}

// The filter's fields sit directly in the request, with a single
// tagged-field section at the end in flexible versions. WriteRequest sends
// them straight from Filter: nothing has to be prepared first.
func TestDescribeAclsFilterLayout(t *testing.T) {
	req := &describeacls.Request{Filter: describeacls.ACLFilter{
		ResourceTypeFilter: 2, ResourceNameFilter: "t", ResourcePatternTypeFilter: 3, Operation: 4, PermissionType: 5,
	}}
	var buf bytes.Buffer
	require.NoError(t, protocol.WriteRequest(&buf, 2, 1, "c", req))
	body := buf.Bytes()[4+2+2+4+2+1+1:]
	// type, name, pattern, null principal, null host, op, perm, tags
	assert.Equal(t, []byte{2, 2, 't', 3, 0, 0, 4, 5, 0}, body, "v2 body")

	buf.Reset()
	require.NoError(t, protocol.WriteRequest(&buf, 1, 1, "c", req))
	body = buf.Bytes()[4+2+2+4+2+1:]
	assert.Equal(t, []byte{2, 0, 1, 't', 3, 0xff, 0xff, 0xff, 0xff, 4, 5}, body, "v1 body")
	assert.Equal(t, buf.Len()-4, int(binary.BigEndian.Uint32(buf.Bytes())), "frame size")
}

// protocol.RoundTrip, which calls no Prepare, puts the filter on the wire
// as set in Filter and reads the broker's answer.
func TestDescribeAclsRoundTripSendsFilter(t *testing.T) {
	filter := describeacls.ACLFilter{ResourceTypeFilter: 2, ResourceNameFilter: "t", ResourcePatternTypeFilter: 3, PrincipalFilter: "User:a", HostFilter: "h", Operation: 4, PermissionType: 3}
	want := &describeacls.Response{Resources: []describeacls.Resource{{ResourceType: 2, ResourceName: "t", PatternType: 3, ACLs: []describeacls.ResponseACL{}}}}
	for v := int16(1); v <= 3; v++ {
		var answer bytes.Buffer
		require.NoError(t, protocol.WriteResponse(&answer, v, 9, want))
		var sent bytes.Buffer
		conn := struct {
			io.Reader
			io.Writer
		}{&answer, &sent}

		res, err := protocol.RoundTrip(conn, v, 9, "c", &describeacls.Request{Filter: filter})
		require.NoError(t, err, "v%d", v)
		assert.Equal(t, want, res, "v%d response", v)

		gotV, _, _, got, err := protocol.ReadRequest(&sent)
		require.NoError(t, err, "v%d", v)
		assert.Equal(t, v, gotV)
		assert.Equal(t, filter, got.(*describeacls.Request).Filter, "v%d filter on the wire", v)
	}
}
