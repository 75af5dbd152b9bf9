package protocol

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"
)

// Test-only APIs, registered under keys no real API uses.
const (
	testKey    ApiKey = 1000
	testKeyAlt ApiKey = 1001
)

type testItem struct {
	Key   string  `kafka:"v0+"`
	Value uint16  `kafka:"v0+"`
	F     float64 `kafka:"v1+"`
	T     int8    `kafka:"v2+,tag=1"`
}

type testRequest struct {
	_       struct{}   `kafka:"versions=v0-3,flexible=v2"`
	Name    string     `kafka:"v0+,nullable=v1+"`
	Count   int32      `kafka:"v0+"`
	Old     int16      `kafka:"v0-1"`
	Data    []byte     `kafka:"v0+,nullable"`
	IDs     []int32    `kafka:"v1+,nullable"`
	Items   []testItem `kafka:"v0+"`
	UUID    [16]byte   `kafka:"v3+"`
	Flag    bool       `kafka:"v0+"`
	Extra   string     `kafka:"v2+,tag=0"`
	More    int64      `kafka:"v3+,tag=5"`
	Ignored string     // not on the wire: no tag
	Skipped int32      `kafka:"-"`
}

func (*testRequest) ApiKey() ApiKey { return testKey }

type testResponse struct {
	_      struct{} `kafka:"versions=v0-3,flexible=v2"`
	Error  int16    `kafka:"v0+"`
	Names  []string `kafka:"v0+"`
	Nested struct {
		A int32  `kafka:"v0+"`
		B string `kafka:"v3+,tag=2"`
	} `kafka:"v1+"`
	Meta testMeta `kafka:"v3+,tag=4"`
}

// testMeta is a tagged field that has tagged fields of its own.
type testMeta struct {
	X int32      `kafka:"v3+"`
	Y string     `kafka:"v3+,tag=0"`
	Z []testItem `kafka:"v3+,tag=1"`
}

func (*testResponse) ApiKey() ApiKey { return testKey }

func init() {
	Register(&testRequest{}, &testResponse{})
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWriteRequestGoldenV0(t *testing.T) {
	msg := &testRequest{
		Name:    "ab",
		Count:   1,
		Old:     2,
		Items:   []testItem{{Key: "k", Value: 9, F: 2.5}},
		IDs:     []int32{7}, // v1+: absent from v0
		Flag:    true,
		Extra:   "x", // tagged: absent from non-flexible versions
		Ignored: "no",
		Skipped: 3,
	}
	var buf bytes.Buffer
	if err := WriteRequest(&buf, 0, 7, "c", msg); err != nil {
		t.Fatal(err)
	}
	want := mustHex(t, `
		00000023
		03e8 0000 00000007 0001 63
		0002 6162
		00000001
		0002
		ffffffff
		00000001 0001 6b 0009
		01`)
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("wrong bytes\ngot:  %x\nwant: %x", buf.Bytes(), want)
	}

	v, id, client, got, err := ReadRequest(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if v != 0 || id != 7 || client != "c" {
		t.Fatalf("header: v%d id=%d client=%q", v, id, client)
	}
	exp := &testRequest{Name: "ab", Count: 1, Old: 2, Items: []testItem{{Key: "k", Value: 9}}, Flag: true}
	if !reflect.DeepEqual(got, exp) {
		t.Fatalf("decoded %+v, want %+v", got, exp)
	}
}

func TestWriteRequestGoldenFlexible(t *testing.T) {
	msg := &testRequest{
		Name:  "ab",
		Count: 1,
		Old:   2, // v0-1 only
		IDs:   []int32{5},
		Items: []testItem{{Key: "k", Value: 9, F: 1.5, T: 3}},
		Flag:  true,
		Extra: "x",
	}
	var buf bytes.Buffer
	if err := WriteRequest(&buf, 2, 7, "", msg); err != nil {
		t.Fatal(err)
	}
	want := mustHex(t, `
		0000002f
		03e8 0002 00000007 ffff 00
		03 6162
		00000001
		00
		02 00000005
		02 02 6b 0009 3ff8000000000000 01 01 01 03
		01
		01 00 02 0278`)
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("wrong bytes\ngot:  %x\nwant: %x", buf.Bytes(), want)
	}
	v, id, client, got, err := ReadRequest(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if v != 2 || id != 7 || client != "" {
		t.Fatalf("header: v%d id=%d client=%q", v, id, client)
	}
	msg.Old = 0
	if !reflect.DeepEqual(got, msg) {
		t.Fatalf("decoded %+v, want %+v", got, msg)
	}
}

func TestRequestRoundTripAllVersions(t *testing.T) {
	for v := int16(0); v <= 3; v++ {
		msg := &testRequest{
			Name:  "name",
			Count: -5,
			Data:  []byte("data"),
			Items: []testItem{{Key: "a", Value: math.MaxUint16}, {Key: "b", Value: 1}},
			Flag:  true,
		}
		if v <= 1 {
			msg.Old = 12
		}
		if v >= 1 {
			msg.IDs = []int32{1, 2, 3}
			msg.Items[0].F = -0.25
		}
		if v >= 2 {
			msg.Extra = "tagged"
			msg.Items[1].T = -1
		}
		if v >= 3 {
			msg.UUID = [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
			msg.More = math.MinInt64
		}
		var buf bytes.Buffer
		if err := WriteRequest(&buf, v, 99, "client", msg); err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		_, _, _, got, err := ReadRequest(&buf)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if !reflect.DeepEqual(got, msg) {
			t.Fatalf("v%d: decoded %+v, want %+v", v, got, msg)
		}
		if buf.Len() != 0 {
			t.Fatalf("v%d: %d bytes left over", v, buf.Len())
		}
	}
}

func TestNullableVersions(t *testing.T) {
	// Name is nullable from v1 only: "" is an empty string in v0 and null
	// in v1; Data (nullable) keeps nil and empty apart.
	cases := []struct {
		v    int16
		msg  *testRequest
		body string
	}{
		{0, &testRequest{Data: []byte{}}, "0000 00000000 0000 00000000 00000000 00"},
		{1, &testRequest{}, "ffff 00000000 0000 ffffffff ffffffff 00000000 00"},
		{2, &testRequest{IDs: []int32{}}, "00 00000000 00 01 01 00 00"},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		if err := WriteRequest(&buf, c.v, 0, "", c.msg); err != nil {
			t.Fatal(err)
		}
		hdr := 10
		if c.v >= 2 {
			hdr = 11
		}
		body := buf.Bytes()[4+hdr:]
		if want := mustHex(t, c.body); !bytes.Equal(body, want) {
			t.Errorf("v%d: body %x, want %x", c.v, body, want)
		}
		_, _, _, got, err := ReadRequest(&buf)
		if err != nil {
			t.Fatal(err)
		}
		g := got.(*testRequest)
		if (g.Data == nil) != (c.msg.Data == nil) || (g.IDs == nil) != (c.msg.IDs == nil) {
			t.Errorf("v%d: null-ness lost: %#v", c.v, g)
		}
	}
}

func TestResponseHeaders(t *testing.T) {
	res := &testResponse{Error: 3, Names: []string{"x"}}
	res.Nested.A = 4
	res.Nested.B = "tb"

	var buf bytes.Buffer
	if err := WriteResponse(&buf, 3, 42, res); err != nil {
		t.Fatal(err)
	}
	want := mustHex(t, `00000015 0000002a 00
		0003
		02 02 78
		00000004 01 02 03 037462
		00`)
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("got %x\nwant %x", buf.Bytes(), want)
	}
	id, got, err := ReadResponse(&buf, testKey, 3)
	if err != nil || id != 42 {
		t.Fatalf("id=%d err=%v", id, err)
	}
	if !reflect.DeepEqual(got, res) {
		t.Fatalf("decoded %+v, want %+v", got, res)
	}

	buf.Reset()
	if err := WriteResponse(&buf, 0, 42, res); err != nil {
		t.Fatal(err)
	}
	want = mustHex(t, `0000000d 0000002a 0003 00000001 0001 78`)
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("v0: got %x\nwant %x", buf.Bytes(), want)
	}
}

func TestVersionOutOfRange(t *testing.T) {
	var buf bytes.Buffer
	err := WriteRequest(&buf, 4, 0, "", &testRequest{})
	if err == nil || !strings.Contains(err.Error(), "v4 not in range v0-v3") {
		t.Fatalf("err = %v", err)
	}
	if _, _, err := ReadResponse(&buf, testKey, -1); err == nil {
		t.Fatal("no error for version -1")
	}
	if _, _, err := ReadResponse(&buf, ApiKey(999), 0); err == nil {
		t.Fatal("no error for an unregistered API")
	}
}

func TestHostileLengths(t *testing.T) {
	frames := map[string]string{
		"array count 2^31-1":       "0000000a 00000001 0000 7fffffff",
		"string longer than frame": "0000000a 00000001 0000 00000001 7fff",
		"frame size 2^31-1":        "7fffffff 00000001",
		"negative frame size":      "ffffffff",
		"truncated":                "00000010 00000001",
	}
	for name, h := range frames {
		_, _, err := ReadResponse(bytes.NewReader(mustHex(t, h)), testKey, 0)
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	flexible := map[string]string{
		"compact array count huge": "0000000a 00000001 00 0000 ffffffff0f",
		"varint overflow":          "0000000b 00000001 00 0000 ffffffffff7f",
		"tag count huge":           "0000000c 00000001 00 0000 01 00000000 ff7f",
		"tagged field size huge":   "0000000e 00000001 00 0000 01 00000000 01 02 ff7f",
		"tagged field bad content": "00000010 00000001 00 0000 01 00000000 01 02 02 05 01",
	}
	for name, h := range flexible {
		_, _, err := ReadResponse(bytes.NewReader(mustHex(t, h)), testKey, 3)
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestUnknownTagsSkipped(t *testing.T) {
	// Response v3 with tags 7 (unknown, 3 bytes) and 2 (known) in the
	// nested struct, and an unknown tag 9 at the top level.
	frame := mustHex(t, `00000000 0000002a 00
		0005
		01
		00000001 02 07 03 aabbcc 02 02 0279
		01 09 01 ff`)
	frame[3] = byte(len(frame) - 4)
	id, got, err := ReadResponse(bytes.NewReader(frame), testKey, 3)
	if err != nil {
		t.Fatal(err)
	}
	res := got.(*testResponse)
	if id != 42 || res.Error != 5 || len(res.Names) != 0 || res.Nested.A != 1 || res.Nested.B != "y" {
		t.Fatalf("decoded %+v", res)
	}
}

func TestTLSDetection(t *testing.T) {
	// A TLS alert (handshake failure) as sent by a TLS listener.
	alert := mustHex(t, "15030300020228")
	_, _, err := ReadResponse(bytes.NewReader(alert), testKey, 0)
	if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "TLS") {
		t.Fatalf("err = %v", err)
	}
	_, _, err = ReadResponse(bytes.NewReader(mustHex(t, "000000100000")), testKey, 0)
	if !errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "TLS") {
		t.Fatalf("err = %v", err)
	}
}

func TestVarintEdges(t *testing.T) {
	for _, n := range []uint64{0, 1, 127, 128, 16383, 16384, 1<<21 - 1, 1 << 21, 1<<28 - 1, 1 << 28, math.MaxUint32} {
		w := wireWriter{}
		w.uvarint(n)
		if len(w.b) != wireUvarintSize(n) {
			t.Errorf("%d: %d bytes, size says %d", n, len(w.b), wireUvarintSize(n))
		}
		r := wireReader{b: w.b}
		if got := r.uvarint(); uint64(got) != n || r.err != nil || r.remaining() != 0 {
			t.Errorf("%d: read %d, err %v", n, got, r.err)
		}
	}
	for _, h := range []string{"80", "ffffffff10", "8080808080"} {
		r := wireReader{b: mustHex(t, h)}
		r.uvarint()
		if r.err == nil {
			t.Errorf("%s: no error", h)
		}
	}
}

func TestCompactLengths(t *testing.T) {
	// A 200-byte compact string has a two-byte length (201).
	s := strings.Repeat("z", 200)
	msg := &testRequest{Name: s}
	var buf bytes.Buffer
	if err := WriteRequest(&buf, 2, 0, "", msg); err != nil {
		t.Fatal(err)
	}
	body := buf.Bytes()[4+11:]
	if body[0] != 0xc9 || body[1] != 0x01 {
		t.Fatalf("length bytes %x", body[:2])
	}
	_, _, _, got, err := ReadRequest(&buf)
	if err != nil || got.(*testRequest).Name != s {
		t.Fatalf("err=%v", err)
	}
}

func TestStringTooLong(t *testing.T) {
	msg := &testRequest{Name: strings.Repeat("a", 1<<15)}
	if err := WriteRequest(io.Discard, 0, 0, "", msg); err == nil {
		t.Fatal("no error for a 32768-byte STRING")
	}
	if err := WriteRequest(io.Discard, 2, 0, "", msg); err != nil {
		t.Fatalf("compact strings have no such limit: %v", err)
	}
}

func TestNestedTaggedFields(t *testing.T) {
	res := &testResponse{Error: 1, Names: []string{}}
	res.Meta = testMeta{X: 2, Y: "y", Z: []testItem{{Key: "k", T: 5}}}
	var buf bytes.Buffer
	if err := WriteResponse(&buf, 3, 1, res); err != nil {
		t.Fatal(err)
	}
	want := mustHex(t, `00000000 00000001 00
		0001
		01
		00000000 00
		01 04 1c
		   00000002
		   02 00 02 0279
		      01 11 02 02 6b 0000 0000000000000000 01 01 01 05`)
	binary.BigEndian.PutUint32(want, uint32(len(want)-4))
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("got  %x\nwant %x", buf.Bytes(), want)
	}
	_, got, err := ReadResponse(&buf, testKey, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, res) {
		t.Fatalf("decoded %+v, want %+v", got, res)
	}
}
