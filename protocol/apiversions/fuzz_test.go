package apiversions_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	_ "github.com/segmentio/kafka-go/protocol/apiversions"
)

// FuzzApiVersionsResponse feeds arbitrary response bodies to the decoder at
// every version: it must fail cleanly, never panic or over-allocate, and
// what it accepts must encode again.
func FuzzApiVersionsResponse(f *testing.F) {
	f.Add(uint8(0), []byte{})
	f.Add(uint8(4), []byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Add(uint8(0), []byte{0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, v uint8, body []byte) {
		version := int16(v) % 5 // v0..v4
		// Size and correlation ID only: an ApiVersions response keeps
		// header v0 even at the flexible versions (v3+), because a client
		// must be able to read it before it knows what the broker speaks.
		frame := binary.BigEndian.AppendUint32(nil, uint32(4+len(body)))
		frame = binary.BigEndian.AppendUint32(frame, 1)
		frame = append(frame, body...)
		_, msg, err := protocol.ReadResponse(bytes.NewReader(frame), protocol.ApiVersions, version)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := protocol.WriteResponse(&out, version, 1, msg); err != nil {
			t.Fatalf("v%d: decoded response does not encode: %v", version, err)
		}
	})
}
