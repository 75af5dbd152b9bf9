package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
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

// recordsFrame frames the body of a testRecordsRequest at version v.
func recordsFrame(t *testing.T, v int16, body string) []byte {
	t.Helper()
	hdr := "03eb 0000 00000001 0000"
	if v == 1 {
		hdr = "03eb 0001 00000001 ffff 00" // header v2 writes an empty client ID as null
	}
	frame := mustHex(t, "00000000 "+hdr+" "+body)
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	return frame
}

// Empty records (length 0, what a broker sends for a partition without new
// records) are not null: they decode to a set without records that writes
// back as empty, for RecordSet and RawRecordSet, in both encodings.
func TestRecordsFieldEmptyRoundTrip(t *testing.T) {
	for v := int16(0); v <= 1; v++ {
		body := "0007 00000000 00000000 0009"
		if v == 1 {
			body = "0007 01 01 0009 00"
		}
		in := recordsFrame(t, v, body)
		_, _, _, dec, err := ReadRequest(bytes.NewReader(in))
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		got := dec.(*testRecordsRequest)
		if got.Records.Records != nil || readValues(t, got.Records) != nil {
			t.Fatalf("v%d: empty records decoded as %+v", v, got.Records)
		}
		if got.Raw.Reader == nil {
			t.Fatalf("v%d: empty raw records decoded as null", v)
		}
		// As produce.Request.Prepare does to a decoded request.
		got.Records.Version = 2
		var out bytes.Buffer
		if err := WriteRequest(&out, v, 1, "", got); err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if !bytes.Equal(out.Bytes(), in) {
			t.Fatalf("v%d: wrote %x, want %x", v, out.Bytes(), in)
		}

		// Null stays null next to empty.
		nullBody := "0007 ffffffff 00000000 0009"
		if v == 1 {
			nullBody = "0007 00 01 0009 00"
		}
		in = recordsFrame(t, v, nullBody)
		if _, _, _, dec, err = ReadRequest(bytes.NewReader(in)); err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		out.Reset()
		if err := WriteRequest(&out, v, 1, "", dec); err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if !bytes.Equal(out.Bytes(), in) {
			t.Fatalf("v%d: wrote %x, want %x", v, out.Bytes(), in)
		}
	}
}

// Records given by the caller that turn out to hold nothing: an uncompressed
// legacy set is written empty, as upstream kafka-go does; a v2 batch cannot
// be empty, and the request fails with ErrNoRecord instead of being sent
// (upstream's behaviour too).
func TestRecordsFieldNoRecordsGiven(t *testing.T) {
	var buf bytes.Buffer
	msg := &testRecordsRequest{Records: RecordSet{Version: 1, Records: NewRecordReader()}}
	if err := WriteRequest(&buf, 0, 1, "", msg); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.Bytes(), recordsFrame(t, 0, "0000 00000000 ffffffff 0000"); !bytes.Equal(got, want) {
		t.Fatalf("v1 set without records: %x, want %x", got, want)
	}
	for _, rs := range []RecordSet{
		{Version: 2, Records: NewRecordReader()},
		{Version: 2, Records: &RecordStream{}},
		{Version: 1, Attributes: Gzip, Records: NewRecordReader()},
	} {
		buf.Reset()
		err := WriteRequest(&buf, 1, 1, "", &testRecordsRequest{Records: rs})
		if !errors.Is(err, ErrNoRecord) {
			t.Errorf("%+v: error %v, want ErrNoRecord", rs, err)
		}
		if buf.Len() != 0 {
			t.Errorf("%+v: %d bytes written", rs, buf.Len())
		}
	}
}

func TestRecordSetEmptyWritesBack(t *testing.T) {
	var rs RecordSet
	if n, err := rs.ReadFrom(bytes.NewReader(nil)); n != 0 || err != nil {
		t.Fatalf("n=%d err=%v", n, err)
	}
	var out bytes.Buffer
	if n, err := rs.WriteTo(&out); n != 0 || err != nil || out.Len() != 0 {
		t.Fatalf("empty set written: n=%d err=%v bytes=%x", n, err, out.Bytes())
	}
	// Reading a non-empty set over it forgets the emptiness.
	full := testRecordSet()
	var batches bytes.Buffer
	if _, err := full.WriteTo(&batches); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.ReadFrom(&batches); err != nil {
		t.Fatal(err)
	}
	rbDrain(&rs)
	rs.Records = nil
	if _, err := rs.WriteTo(&out); !errors.Is(err, ErrNoRecord) {
		t.Fatalf("set without records after a full read: %v", err)
	}
	// A failed read is not an empty set either.
	boom := errors.New("boom")
	if _, err := rs.ReadFrom(errReader{boom}); !errors.Is(err, boom) {
		t.Fatalf("err=%v", err)
	}
	if _, err := rs.WriteTo(&out); !errors.Is(err, ErrNoRecord) {
		t.Fatalf("set after a failed read: %v", err)
	}
}
