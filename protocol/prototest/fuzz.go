package prototest

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
)

// ResponseFuzz says how to frame fuzzed response bodies for one API.
type ResponseFuzz struct {
	Key        protocol.ApiKey
	MinVersion int16
	MaxVersion int16
	// TaggedHeaderFrom is the first version whose response header carries
	// a tagged-field section; negative when none does (ApiVersions keeps
	// header v0 so that a client can read it before it knows what the
	// broker speaks).
	TaggedHeaderFrom int16
	// EncodeMayFail, when set, is given a fresh decoding of the same frame
	// after the decoded response failed to encode, and returns true when
	// that failure is one the decoder leaves for later (record sets are
	// checked as they are read).
	EncodeMayFail func(again protocol.Message) bool
}

// FuzzResponse feeds arbitrary bodies to the response decoder at every
// version of spec: it must fail cleanly, never panic or over-allocate, and
// what it accepts must encode again.
func FuzzResponse(f *testing.F, spec ResponseFuzz) {
	versions := int(spec.MaxVersion-spec.MinVersion) + 1
	f.Add(uint8(0), []byte{})
	f.Add(uint8(versions-1), []byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Add(uint8(0), []byte{0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, v uint8, body []byte) {
		version := spec.MinVersion + int16(int(v)%versions)
		frame := binary.BigEndian.AppendUint32(nil, 0)
		frame = binary.BigEndian.AppendUint32(frame, 1)
		if spec.TaggedHeaderFrom >= 0 && version >= spec.TaggedHeaderFrom {
			frame = append(frame, 0)
		}
		frame = append(frame, body...)
		binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))

		_, msg, err := protocol.ReadResponse(bytes.NewReader(frame), spec.Key, version)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := protocol.WriteResponse(&out, version, 1, msg); err != nil {
			if spec.EncodeMayFail != nil {
				if _, again, derr := protocol.ReadResponse(bytes.NewReader(frame), spec.Key, version); derr == nil && spec.EncodeMayFail(again) {
					return
				}
			}
			t.Fatalf("v%d: decoded response does not encode: %v", version, err)
		}
	})
}
