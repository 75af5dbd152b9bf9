package consumergroupheartbeat_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
)

// FuzzConsumerGroupHeartbeatResponse feeds arbitrary response bodies to the
// decoder at both versions: it must fail cleanly, never panic or
// over-allocate, and what it accepts must encode again.
func FuzzConsumerGroupHeartbeatResponse(f *testing.F) {
	f.Add(uint8(0), []byte{})
	f.Add(uint8(1), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0x13, 0x88, 1, 2})
	f.Add(uint8(0), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0x13, 0x88, 0xff, 0})
	f.Fuzz(func(t *testing.T, v uint8, body []byte) {
		version := int16(v % 2)
		frame := binary.BigEndian.AppendUint32(nil, uint32(5+len(body)))
		frame = binary.BigEndian.AppendUint32(frame, 1)
		frame = append(frame, 0) // response header v1
		frame = append(frame, body...)
		_, msg, err := protocol.ReadResponse(bytes.NewReader(frame), protocol.ConsumerGroupHeartbeat, version)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := protocol.WriteResponse(&out, version, 1, msg); err != nil {
			t.Fatalf("v%d: decoded response does not encode: %v", version, err)
		}
	})
}
