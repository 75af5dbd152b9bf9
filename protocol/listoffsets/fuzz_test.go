package listoffsets_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	_ "github.com/segmentio/kafka-go/protocol/listoffsets"
)

// FuzzListOffsetsResponse feeds arbitrary response bodies to the decoder at
// every version: it must fail cleanly, never panic or over-allocate, and
// what it accepts must encode again.
func FuzzListOffsetsResponse(f *testing.F) {
	f.Add(uint8(0), []byte{})
	f.Add(uint8(10-1), []byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Add(uint8(0), []byte{0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, v uint8, body []byte) {
		version := int16(1) + int16(v)%(10-1+1)
		frame := binary.BigEndian.AppendUint32(nil, uint32(4+len(body)))
		frame = binary.BigEndian.AppendUint32(frame, 1)
		if version >= 6 && protocol.ListOffsets != protocol.ApiVersions {
			frame = append(frame, 0) // response header v1
			binary.BigEndian.PutUint32(frame, uint32(5+len(body)))
		}
		frame = append(frame, body...)
		_, msg, err := protocol.ReadResponse(bytes.NewReader(frame), protocol.ListOffsets, version)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := protocol.WriteResponse(&out, version, 1, msg); err != nil {
			t.Fatalf("v%d: decoded response does not encode: %v", version, err)
		}
	})
}
