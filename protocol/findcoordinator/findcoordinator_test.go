package findcoordinator_test

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/findcoordinator"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

// wire builds expected bytes by hand, following the Kafka spec's primitive
// types, independently of the codec under test.
type wire []byte

func (w wire) i8(v int8) wire   { return append(w, byte(v)) }
func (w wire) i16(v int16) wire { return binary.BigEndian.AppendUint16(w, uint16(v)) }
func (w wire) i32(v int32) wire { return binary.BigEndian.AppendUint32(w, uint32(v)) }
func (w wire) i64(v int64) wire { return binary.BigEndian.AppendUint64(w, uint64(v)) }
func (w wire) uv(v uint64) wire { return binary.AppendUvarint(w, v) }
func (w wire) boolean(b bool) wire {
	if b {
		return append(w, 1)
	}
	return append(w, 0)
}

// str is STRING (int16 length), cstr COMPACT_STRING (uvarint length+1).
func (w wire) str(s string) wire  { return append(w.i16(int16(len(s))), s...) }
func (w wire) cstr(s string) wire { return append(w.uv(uint64(len(s))+1), s...) }

// raw appends bytes as they are (tagged-field sections, UUIDs, ...).
func (w wire) raw(b ...byte) wire { return append(w, b...) }

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
	prototest.TestRequest(t, 3, &findcoordinator.Request{Key: "txn", KeyType: 1})
	prototest.TestRequest(t, 6, &findcoordinator.Request{KeyType: 0, CoordinatorKeys: []string{"g1", "g2"}})

	prototest.TestResponse(t, 0, &findcoordinator.Response{ErrorCode: 15, NodeID: 1, Host: "h", Port: 9092})
	prototest.TestResponse(t, 3, &findcoordinator.Response{ThrottleTimeMs: 2, ErrorMessage: "m", NodeID: 1, Host: "h", Port: 9092})
	prototest.TestResponse(t, 6, &findcoordinator.Response{ThrottleTimeMs: 2, Coordinators: []findcoordinator.ResponseCoordinator{
		{Key: "g1", NodeID: 1, Host: "h1", Port: 9092},
		{Key: "g2", NodeID: -1, Host: "", Port: -1, ErrorCode: 15, ErrorMessage: "not available"},
	}})
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
	want := wire{}.cstr("g").i8(0).uv(0)
	if got := requestBody(t, 3, true, &findcoordinator.Request{Key: "g"}); !bytes.Equal(got, want) {
		t.Errorf("v3 request:\ngot  % x\nwant % x", got, want)
	}
	res := &findcoordinator.Response{NodeID: 3, Host: "h", Port: 9094}
	want = wire{}.i32(0).i16(0).uv(0).i32(3).cstr("h").i32(9094).uv(0)
	if got := responseBody(t, 3, true, res); !bytes.Equal(got, want) {
		t.Errorf("v3 response:\ngot  % x\nwant % x", got, want)
	}
}

func TestFindCoordinatorGoldenV4(t *testing.T) {
	req := &findcoordinator.Request{KeyType: 1, CoordinatorKeys: []string{"a", "b"}}
	want := wire{}.i8(1).uv(3).cstr("a").cstr("b").uv(0)
	if got := requestBody(t, 4, true, req); !bytes.Equal(got, want) {
		t.Errorf("v4 request:\ngot  % x\nwant % x", got, want)
	}

	res := &findcoordinator.Response{Coordinators: []findcoordinator.ResponseCoordinator{
		{Key: "a", NodeID: 2, Host: "h", Port: 9093},
		{Key: "b", NodeID: -1, Port: -1, ErrorCode: 15, ErrorMessage: "x"},
	}}
	want = wire{}.i32(0).uv(3).
		cstr("a").i32(2).cstr("h").i32(9093).i16(0).uv(0).uv(0).
		cstr("b").i32(-1).cstr("").i32(-1).i16(15).cstr("x").uv(0).
		uv(0)
	if got := responseBody(t, 4, true, res); !bytes.Equal(got, want) {
		t.Errorf("v4 response:\ngot  % x\nwant % x", got, want)
	}
	if got := readResponse(t, protocol.FindCoordinator, 4, true, want); !reflect.DeepEqual(got, res) {
		t.Errorf("v4 response decoded as %+v", got)
	}
}

func TestFindCoordinatorPrepare(t *testing.T) {
	r := &findcoordinator.Request{Key: "g"}
	r.Prepare(4)
	if !reflect.DeepEqual(r.CoordinatorKeys, []string{"g"}) {
		t.Errorf("v4: CoordinatorKeys = %v", r.CoordinatorKeys)
	}
	r = &findcoordinator.Request{CoordinatorKeys: []string{"x", "y"}}
	r.Prepare(3)
	if r.Key != "x" {
		t.Errorf("v3: Key = %q", r.Key)
	}
	r = &findcoordinator.Request{Key: "k", CoordinatorKeys: []string{"x"}}
	r.Prepare(5)
	if !reflect.DeepEqual(r.CoordinatorKeys, []string{"x"}) {
		t.Errorf("explicit CoordinatorKeys replaced: %v", r.CoordinatorKeys)
	}
}

func TestFindCoordinatorResponseCoordinator(t *testing.T) {
	old := &findcoordinator.Response{NodeID: 4, Host: "h", Port: 1, ErrorCode: 0}
	if c, ok := old.Coordinator("g"); !ok || c.NodeID != 4 || c.Host != "h" || c.Key != "g" {
		t.Errorf("v0-3 form: %+v %v", c, ok)
	}
	batched := &findcoordinator.Response{Coordinators: []findcoordinator.ResponseCoordinator{{Key: "a", NodeID: 1}, {Key: "b", NodeID: 2}}}
	if c, ok := batched.Coordinator("b"); !ok || c.NodeID != 2 {
		t.Errorf("v4+ form, key b: %+v %v", c, ok)
	}
	if _, ok := batched.Coordinator("c"); ok {
		t.Error("v4+ form: found a coordinator for a key not in the response")
	}
}
