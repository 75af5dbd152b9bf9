package protocol

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"
	"time"
)

const testRecordsKey ApiKey = 1003

type testRecordsRequest struct {
	_       struct{}     `kafka:"versions=v0-1,flexible=v1"`
	Before  int16        `kafka:"v0+"`
	Records RecordSet    `kafka:"v0+"`
	Raw     RawRecordSet `kafka:"v0+"`
	After   int16        `kafka:"v0+"`
}

func (*testRecordsRequest) ApiKey() ApiKey { return testRecordsKey }

type testRecordsResponse struct {
	_ struct{} `kafka:"versions=v0-1,flexible=v1"`
}

func (*testRecordsResponse) ApiKey() ApiKey { return testRecordsKey }

func init() {
	Register(&testRecordsRequest{}, &testRecordsResponse{})
}

func testRecordSet() RecordSet {
	return RecordSet{
		Version: 2,
		Records: NewRecordReader(
			Record{Offset: 0, Time: time.UnixMilli(1700000000000), Key: NewBytes([]byte("k")), Value: NewBytes([]byte("v1"))},
			Record{Offset: 1, Time: time.UnixMilli(1700000000001), Value: NewBytes([]byte("v2"))},
		),
	}
}

func readValues(t *testing.T, rs RecordSet) []string {
	t.Helper()
	var out []string
	if rs.Records == nil {
		return nil
	}
	for {
		r, err := rs.Records.ReadRecord()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := ReadAll(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
}

func TestRecordsFieldRoundTrip(t *testing.T) {
	for v := int16(0); v <= 1; v++ {
		rs := testRecordSet()
		var batches bytes.Buffer
		if _, err := rs.WriteTo(&batches); err != nil {
			t.Fatal(err)
		}
		rs = testRecordSet()
		msg := &testRecordsRequest{
			Before:  1,
			Records: rs,
			Raw:     RawRecordSet{Reader: bytes.NewReader(batches.Bytes())},
			After:   2,
		}
		var buf bytes.Buffer
		if err := WriteRequest(&buf, v, 1, "", msg); err != nil {
			t.Fatalf("v%d: %v", v, err)
		}

		// Both fields carry the very same batches behind their length.
		frame := buf.Bytes()
		body := frame[4+10:]
		if v == 1 {
			body = frame[4+11:]
		}
		body = body[2:] // Before
		n := len(batches.Bytes())
		for i := 0; i < 2; i++ {
			var got int
			if v == 0 {
				got = int(int32(binary.BigEndian.Uint32(body)))
				body = body[4:]
			} else {
				u, k := binary.Uvarint(body)
				got = int(u) - 1
				body = body[k:]
			}
			if got != n || !bytes.Equal(body[:n], batches.Bytes()) {
				t.Fatalf("v%d field %d: length %d, want %d", v, i, got, n)
			}
			body = body[n:]
		}

		_, _, _, dec, err := ReadRequest(&buf)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		got := dec.(*testRecordsRequest)
		if got.Before != 1 || got.After != 2 {
			t.Fatalf("v%d: %+v", v, got)
		}
		if vals := readValues(t, got.Records); len(vals) != 2 || vals[0] != "v1" || vals[1] != "v2" {
			t.Fatalf("v%d: records %q", v, vals)
		}
		raw, _ := io.ReadAll(got.Raw.Reader)
		if !bytes.Equal(raw, batches.Bytes()) {
			t.Fatalf("v%d: raw records differ", v)
		}
	}
}

func TestRecordsFieldNull(t *testing.T) {
	// No records: null on the wire, the zero value once decoded.
	for v := int16(0); v <= 1; v++ {
		var buf bytes.Buffer
		if err := WriteRequest(&buf, v, 1, "", &testRecordsRequest{Records: RecordSet{Version: 2}}); err != nil {
			t.Fatal(err)
		}
		want := "0000 ffffffff ffffffff 0000"
		if v == 1 {
			want = "0000 00 00 0000 00"
		}
		hdr := 10 + int(v)
		if got, w := buf.Bytes()[4+hdr:], mustHex(t, want); !bytes.Equal(got, w) {
			t.Fatalf("v%d: %x, want %x", v, got, w)
		}
		_, _, _, dec, err := ReadRequest(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if got := dec.(*testRecordsRequest); got.Records.Records != nil || got.Raw.Reader != nil {
			t.Fatalf("v%d: %+v", v, got)
		}
	}
}

func TestRecordsFieldCorrupt(t *testing.T) {
	// A records field whose bytes are not record batches fails the decode.
	frame := mustHex(t, "00000000 03eb 0000 00000001 0000 0000 00000003 abcdef ffffffff 0000")
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	if _, _, _, _, err := ReadRequest(bytes.NewReader(frame)); err == nil {
		t.Fatal("no error")
	}
}
