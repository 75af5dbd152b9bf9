package findcoordinator_test

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/findcoordinator"
	"github.com/segmentio/kafka-go/protocol/prototest"
	"github.com/stretchr/testify/assert"
)

// wire builds expected bytes by hand, following the Kafka spec's primitive
// types, independently of the codec under test.
type wire []byte

func (w wire) i8(v int8) wire   { return append(w, byte(v)) }
func (w wire) i16(v int16) wire { return binary.BigEndian.AppendUint16(w, uint16(v)) }
func (w wire) i32(v int32) wire { return binary.BigEndian.AppendUint32(w, uint32(v)) }
func (w wire) uv(v uint64) wire { return binary.AppendUvarint(w, v) }

// str is STRING (int16 length), cstr COMPACT_STRING (uvarint length+1).
func (w wire) str(s string) wire  { return append(w.i16(int16(len(s))), s...) }
func (w wire) cstr(s string) wire { return append(w.uv(uint64(len(s))+1), s...) }

// requestBody encodes req at version v and strips the request header
// (client ID "c"; header v2 adds an empty tagged-field section).
func requestBody(t *testing.T, v int16, flexible bool, req protocol.Message) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := protocol.WriteRequest(&buf, v, 7, "c", req); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if got := int(binary.BigEndian.Uint32(b)); got != len(b)-4 {
		t.Fatalf("frame size %d, frame has %d bytes", got, len(b)-4)
	}
	hdr := 4 + 2 + 2 + 4 + 2 + 1
	if flexible {
		if b[hdr] != 0 {
			t.Fatalf("request header tagged fields: got %#x", b[hdr])
		}
		hdr++
	}
	return b[hdr:]
}

// responseBody encodes res at version v and strips the response header
// (header v1 adds an empty tagged-field section).
func responseBody(t *testing.T, v int16, taggedHeader bool, res protocol.Message) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := protocol.WriteResponse(&buf, v, 7, res); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if got := int(binary.BigEndian.Uint32(b)); got != len(b)-4 {
		t.Fatalf("frame size %d, frame has %d bytes", got, len(b)-4)
	}
	hdr := 8
	if taggedHeader {
		if b[hdr] != 0 {
			t.Fatalf("response header tagged fields: got %#x", b[hdr])
		}
		hdr++
	}
	return b[hdr:]
}

// readResponse frames body as a response of version v and decodes it.
func readResponse(t *testing.T, key protocol.ApiKey, v int16, taggedHeader bool, body []byte) protocol.Message {
	t.Helper()
	frame := wire{}.i32(0).i32(7)
	if taggedHeader {
		frame = frame.uv(0)
	}
	frame = append(frame, body...)
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	id, msg, err := protocol.ReadResponse(bytes.NewReader(frame), key, v)
	if err != nil {
		t.Fatal(err)
	}
	if id != 7 {
		t.Fatalf("correlation ID %d", id)
	}
	return msg
}

// readRequestBody frames body as a request of version v and decodes it.
func readRequestBody(t *testing.T, key protocol.ApiKey, v int16, flexible bool, body []byte) protocol.Message {
	t.Helper()
	frame := wire{}.i32(0).i16(int16(key)).i16(v).i32(7).str("c")
	if flexible {
		frame = frame.uv(0)
	}
	frame = append(frame, body...)
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	gotV, _, _, msg, err := protocol.ReadRequest(bytes.NewReader(frame))
	if err != nil {
		t.Fatal(err)
	}
	if gotV != v {
		t.Fatalf("version %d", gotV)
	}
	return msg
}

func TestFindCoordinatorRoundTrip(t *testing.T) {
	prototest.TestRequest(t, 0, &findcoordinator.Request{Key: "group"})
	prototest.TestRequest(t, 1, &findcoordinator.Request{Key: "txn", KeyType: 1})
	prototest.TestRequest(t, 3, &findcoordinator.Request{Key: "txn", KeyType: 1})

	prototest.TestResponse(t, 0, &findcoordinator.Response{ErrorCode: 15, NodeID: 1, Host: "h", Port: 9092})
	prototest.TestResponse(t, 1, &findcoordinator.Response{ThrottleTimeMs: 2, ErrorCode: 15, ErrorMessage: "m", NodeID: -1, Port: -1})
	prototest.TestResponse(t, 3, &findcoordinator.Response{ThrottleTimeMs: 2, ErrorMessage: "m", NodeID: 1, Host: "h", Port: 9092})
}

func TestFindCoordinatorGoldenV0(t *testing.T) {
	want := wire{}.str("g")
	if got := requestBody(t, 0, false, &findcoordinator.Request{Key: "g", KeyType: 1}); !bytes.Equal(got, want) {
		t.Errorf("v0 request (no key type):\ngot  % x\nwant % x", got, want)
	}
	res := &findcoordinator.Response{ErrorCode: 15, NodeID: -1, Port: -1}
	want = wire{}.i16(15).i32(-1).str("").i32(-1)
	if got := responseBody(t, 0, false, res); !bytes.Equal(got, want) {
		t.Errorf("v0 response:\ngot  % x\nwant % x", got, want)
	}
	if got := readResponse(t, protocol.FindCoordinator, 0, false, want); !reflect.DeepEqual(got, res) {
		t.Errorf("v0 response decoded as %+v", got)
	}
}

func TestFindCoordinatorGoldenV2(t *testing.T) {
	want := wire{}.str("g").i8(1)
	if got := requestBody(t, 2, false, &findcoordinator.Request{Key: "g", KeyType: 1}); !bytes.Equal(got, want) {
		t.Errorf("v2 request:\ngot  % x\nwant % x", got, want)
	}

	res := &findcoordinator.Response{ThrottleTimeMs: 1, NodeID: 3, Host: "h", Port: 9094}
	want = wire{}.i32(1).i16(0).i16(-1).i32(3).str("h").i32(9094)
	if got := responseBody(t, 2, false, res); !bytes.Equal(got, want) {
		t.Errorf("v2 response:\ngot  % x\nwant % x", got, want)
	}
	if got := readResponse(t, protocol.FindCoordinator, 2, false, want); !reflect.DeepEqual(got, res) {
		t.Errorf("v2 response decoded as %+v", got)
	}
}

func TestFindCoordinatorGoldenV3(t *testing.T) {
	req := &findcoordinator.Request{Key: "g"}
	want := wire{}.cstr("g").i8(0).uv(0)
	if got := requestBody(t, 3, true, req); !bytes.Equal(got, want) {
		t.Errorf("v3 request:\ngot  % x\nwant % x", got, want)
	}
	if got := readRequestBody(t, protocol.FindCoordinator, 3, true, want); !reflect.DeepEqual(got, req) {
		t.Errorf("v3 request decoded as %+v", got)
	}
	res := &findcoordinator.Response{NodeID: 3, Host: "h", Port: 9094}
	want = wire{}.i32(0).i16(0).uv(0).i32(3).cstr("h").i32(9094).uv(0)
	if got := responseBody(t, 3, true, res); !bytes.Equal(got, want) {
		t.Errorf("v3 response:\ngot  % x\nwant % x", got, want)
	}
	if got := readResponse(t, protocol.FindCoordinator, 3, true, want); !reflect.DeepEqual(got, res) {
		t.Errorf("v3 response decoded as %+v", got)
	}
}

// v4 and later batch several keys per request: not supported.
func TestFindCoordinatorNoV4(t *testing.T) {
	if v := protocol.FindCoordinator.MaxVersion(); v != 3 {
		t.Fatalf("max version %d, want 3", v)
	}
	var buf bytes.Buffer
	if err := protocol.WriteRequest(&buf, 4, 1, "c", &findcoordinator.Request{Key: "g"}); err == nil {
		t.Error("v4 request written")
	}
}

// Request and Response stay comparable, as upstream's are: code that
// compares them with == or uses them as map keys keeps compiling (the map
// types below do not compile otherwise), and equal values find each other.
func TestFindCoordinatorComparable(t *testing.T) {
	requests := map[findcoordinator.Request]int{{Key: "g"}: 1}
	responses := map[findcoordinator.Response]int{{NodeID: 1, Host: "h"}: 2}
	assert.Equal(t, 1, requests[findcoordinator.Request{Key: "g"}])
	assert.Equal(t, 2, responses[findcoordinator.Response{NodeID: 1, Host: "h"}])
	assert.Zero(t, requests[findcoordinator.Request{Key: "h"}])
	assert.Zero(t, responses[findcoordinator.Response{NodeID: 2, Host: "h"}])
}

func TestFindCoordinatorResponseCoordinator(t *testing.T) {
	res := &findcoordinator.Response{NodeID: 4, Host: "h", Port: 1, ErrorCode: 15, ErrorMessage: "m"}
	c, ok := res.Coordinator("g")
	want := findcoordinator.ResponseCoordinator{Key: "g", NodeID: 4, Host: "h", Port: 1, ErrorCode: 15, ErrorMessage: "m"}
	if !ok || c != want {
		t.Errorf("Coordinator(g) = %+v %v, want %+v", c, ok, want)
	}
}
