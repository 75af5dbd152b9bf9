package prototest

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
)

// Wire builds expected bytes by hand from the Kafka spec's primitive types,
// so that golden tests do not check the codec against itself.
type Wire []byte

func (w Wire) I8(v int8) Wire        { return append(w, byte(v)) }
func (w Wire) I16(v int16) Wire      { return binary.BigEndian.AppendUint16(w, uint16(v)) }
func (w Wire) I32(v int32) Wire      { return binary.BigEndian.AppendUint32(w, uint32(v)) }
func (w Wire) I64(v int64) Wire      { return binary.BigEndian.AppendUint64(w, uint64(v)) }
func (w Wire) Uvarint(v uint64) Wire { return binary.AppendUvarint(w, v) }
func (w Wire) Raw(b ...byte) Wire    { return append(w, b...) }
func (w Wire) String(s string) Wire  { return append(w.I16(int16(len(s))), s...) }
func (w Wire) CompactString(s string) Wire {
	return append(w.Uvarint(uint64(len(s))+1), s...)
}

func (w Wire) Bool(b bool) Wire {
	if b {
		return append(w, 1)
	}
	return append(w, 0)
}

// The request header these helpers write and expect: correlation ID 7,
// client ID "c".
const (
	wireCorrelationID = 7
	wireClientID      = "c"
)

// RequestBody encodes req at version v and returns what follows the request
// header; flexible says the header carries a tagged-field section (v2),
// which must be empty.
func RequestBody(t testing.TB, v int16, flexible bool, req protocol.Message) []byte {
	t.Helper()
	b := encodeFrame(t, func(buf *bytes.Buffer) error {
		return protocol.WriteRequest(buf, v, wireCorrelationID, wireClientID, req)
	})
	hdr := 4 + 2 + 2 + 4 + 2 + len(wireClientID)
	return stripTags(t, b, hdr, flexible)
}

// ResponseBody encodes res at version v and returns what follows the
// response header; taggedHeader says the header is v1 (an empty tagged-field
// section after the correlation ID).
func ResponseBody(t testing.TB, v int16, taggedHeader bool, res protocol.Message) []byte {
	t.Helper()
	b := encodeFrame(t, func(buf *bytes.Buffer) error {
		return protocol.WriteResponse(buf, v, wireCorrelationID, res)
	})
	return stripTags(t, b, 4+4, taggedHeader)
}

func encodeFrame(t testing.TB, write func(*bytes.Buffer) error) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if size := int(binary.BigEndian.Uint32(b)); size != len(b)-4 {
		t.Fatalf("size field says %d bytes, %d follow it", size, len(b)-4)
	}
	return b
}

func stripTags(t testing.TB, b []byte, hdr int, tagged bool) []byte {
	t.Helper()
	if tagged {
		if b[hdr] != 0 {
			t.Fatalf("header's tagged-field section is not empty: %#x", b[hdr])
		}
		hdr++
	}
	return b[hdr:]
}

// ReadResponse puts body behind a response header (v1 when taggedHeader)
// and decodes it as a response of API key at version v.
func ReadResponse(t testing.TB, key protocol.ApiKey, v int16, taggedHeader bool, body []byte) protocol.Message {
	t.Helper()
	frame := Wire{}.I32(0).I32(wireCorrelationID)
	if taggedHeader {
		frame = frame.Uvarint(0)
	}
	frame = sized(append(frame, body...))
	id, msg, err := protocol.ReadResponse(bytes.NewReader(frame), key, v)
	if err != nil {
		t.Fatal(err)
	}
	if id != wireCorrelationID {
		t.Fatalf("correlation ID %d, want %d", id, wireCorrelationID)
	}
	return msg
}

// ReadRequestBody puts body behind a request header (v2 when flexible) and
// decodes it as a request of API key at version v.
func ReadRequestBody(t testing.TB, key protocol.ApiKey, v int16, flexible bool, body []byte) protocol.Message {
	t.Helper()
	frame := Wire{}.I32(0).I16(int16(key)).I16(v).I32(wireCorrelationID).String(wireClientID)
	if flexible {
		frame = frame.Uvarint(0)
	}
	frame = sized(append(frame, body...))
	got, _, _, msg, err := protocol.ReadRequest(bytes.NewReader(frame))
	if err != nil {
		t.Fatal(err)
	}
	if got != v {
		t.Fatalf("request decoded as version %d, want %d", got, v)
	}
	return msg
}

// sized fills in the frame's leading size field.
func sized(frame Wire) Wire {
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	return frame
}
