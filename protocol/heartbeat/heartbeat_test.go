package heartbeat_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/heartbeat"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestHeartbeatRoundTrip(t *testing.T) {
	prototest.TestRequest(t, 0, &heartbeat.Request{GroupID: "g", GenerationID: 4, MemberID: "m"})
	prototest.TestRequest(t, 3, &heartbeat.Request{GroupID: "g", GenerationID: 4, MemberID: "m", GroupInstanceID: "i"})
	prototest.TestRequest(t, 4, &heartbeat.Request{GroupID: "g", GenerationID: 4, MemberID: "m", GroupInstanceID: "i"})

	prototest.TestResponse(t, 0, &heartbeat.Response{ErrorCode: 27})
	prototest.TestResponse(t, 2, &heartbeat.Response{ThrottleTimeMs: 3, ErrorCode: 27})
	prototest.TestResponse(t, 4, &heartbeat.Response{ThrottleTimeMs: 3, ErrorCode: 27})
}

// The spec puts the throttle time before the error code.
func TestHeartbeatResponseFieldOrder(t *testing.T) {
	var buf bytes.Buffer
	if err := protocol.WriteResponse(&buf, 1, 1, &heartbeat.Response{ThrottleTimeMs: 0x01020304, ErrorCode: 0x0506}); err != nil {
		t.Fatal(err)
	}
	body := buf.Bytes()[8:]
	want := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint32(nil, 0x01020304), 0x0506)
	if !bytes.Equal(body, want) {
		t.Errorf("v1 response body % x, want % x", body, want)
	}
}
