package joingroup_test

import (
	"bytes"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/joingroup"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

var meta = []byte{0, 1, 0, 0, 0, 1, 0, 1, 't', 0xff, 0xff, 0xff, 0xff}

func TestJoinGroupRoundTrip(t *testing.T) {
	protocols := []joingroup.RequestProtocol{{Name: "range", Metadata: meta}, {Name: "roundrobin", Metadata: []byte{}}}
	prototest.TestRequest(t, 0, &joingroup.Request{GroupID: "g", SessionTimeoutMS: 10000, MemberID: "", ProtocolType: "consumer", Protocols: protocols})
	prototest.TestRequest(t, 5, &joingroup.Request{GroupID: "g", SessionTimeoutMS: 10000, RebalanceTimeoutMS: 60000, MemberID: "m", GroupInstanceID: "i", ProtocolType: "consumer", Protocols: protocols})
	prototest.TestRequest(t, 6, &joingroup.Request{GroupID: "g", SessionTimeoutMS: 10000, RebalanceTimeoutMS: 60000, MemberID: "m", ProtocolType: "consumer", Protocols: protocols})
	prototest.TestRequest(t, 9, &joingroup.Request{GroupID: "g", SessionTimeoutMS: 10000, RebalanceTimeoutMS: 60000, MemberID: "m", GroupInstanceID: "i", ProtocolType: "consumer", Protocols: protocols, Reason: "rejoin"})

	members := []joingroup.ResponseMember{{MemberID: "m1", Metadata: meta}, {MemberID: "m2", Metadata: meta}}
	prototest.TestResponse(t, 0, &joingroup.Response{ErrorCode: 0, GenerationID: 3, ProtocolName: "range", LeaderID: "m1", MemberID: "m1", Members: members})
	members[1].GroupInstanceID = "i2"
	prototest.TestResponse(t, 5, &joingroup.Response{ThrottleTimeMS: 1, GenerationID: 3, ProtocolName: "range", LeaderID: "m1", MemberID: "m1", Members: members})
	prototest.TestResponse(t, 9, &joingroup.Response{ThrottleTimeMS: 1, GenerationID: 3, ProtocolType: "consumer", ProtocolName: "range", LeaderID: "m1", SkipAssignment: true, MemberID: "m1", Members: members})
}

// The protocol metadata is opaque BYTES: COMPACT_BYTES from v6.
func TestJoinGroupProtocolMetadataBytes(t *testing.T) {
	req := &joingroup.Request{GroupID: "g", MemberID: "m", ProtocolType: "consumer", Protocols: []joingroup.RequestProtocol{{Name: "range", Metadata: meta}}}
	for _, c := range []struct {
		v      int16
		length []byte
	}{{5, []byte{0, 0, 0, byte(len(meta))}}, {6, []byte{byte(len(meta) + 1)}}} {
		var buf bytes.Buffer
		if err := protocol.WriteRequest(&buf, c.v, 1, "c", req); err != nil {
			t.Fatal(err)
		}
		want := append(append([]byte("range"), c.length...), meta...)
		if !bytes.Contains(buf.Bytes(), want) {
			t.Errorf("v%d: request % x does not hold the length-prefixed metadata % x", c.v, buf.Bytes(), want)
		}
	}
}

func TestJoinGroupGroup(t *testing.T) {
	if g := (&joingroup.Request{GroupID: "g"}).Group(); g != "g" {
		t.Errorf("Group() = %q", g)
	}
}
