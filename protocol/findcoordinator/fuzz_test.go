package findcoordinator_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	_ "github.com/segmentio/kafka-go/protocol/findcoordinator"
)

// FuzzFindCoordinatorResponse feeds arbitrary response bodies to the decoder at
// every version: it must fail cleanly, never panic or over-allocate, and
// what it accepts must encode again.
func FuzzFindCoordinatorResponse(f *testing.F) {
	f.Add(uint8(0), []byte{})
	f.Add(uint8(3-0), []byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Add(uint8(0), []byte{0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, v uint8, body []byte) {
		version := int16(0) + int16(v)%(3-0+1)
		frame := binary.BigEndian.AppendUint32(nil, uint32(4+len(body)))
		frame = binary.BigEndian.AppendUint32(frame, 1)
		if version >= 3 && protocol.FindCoordinator != protocol.ApiVersions {
			frame = append(frame, 0) // response header v1
			binary.BigEndian.PutUint32(frame, uint32(5+len(body)))
		}
		frame = append(frame, body...)
		_, msg, err := protocol.ReadResponse(bytes.NewReader(frame), protocol.FindCoordinator, version)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := protocol.WriteResponse(&out, version, 1, msg); err != nil {
			t.Fatalf("v%d: decoded response does not encode: %v", version, err)
		}
	})
}
