package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"strings"
	"testing"
	"time"
)

// twoBatches returns two v2 batches back to back (offsets 0-1 and 100-101).
func twoBatches(t testing.TB) (a, b []byte) {
	a = goldenV2(goldenT0.UnixMilli())
	b = goldenV2(goldenT0.UnixMilli() + 10)
	binary.BigEndian.PutUint64(b, 100)
	return a, b
}

func TestRecordSetReadFromEmpty(t *testing.T) {
	var rs RecordSet
	rs.Version = 2
	n, err := rs.ReadFrom(bytes.NewReader(nil))
	if n != 0 || err != nil || rs.Records != nil || rs.Version != 0 {
		t.Fatalf("n=%d err=%v rs=%+v", n, err, rs)
	}
}

func TestRecordSetReadFromTruncated(t *testing.T) {
	a, b := twoBatches(t)
	in := append(append([]byte{}, a...), b...)
	for cut := 1; cut < len(in); cut++ {
		var rs RecordSet
		n, err := rs.ReadFrom(bytes.NewReader(in[:cut]))
		if n != int64(cut) {
			t.Fatalf("cut %d: consumed %d", cut, n)
		}
		if cut < len(a) {
			// Nothing whole to return: the caller must learn that the batch
			// did not fit.
			if !errors.Is(err, io.ErrUnexpectedEOF) || rs.Records != nil {
				t.Fatalf("cut %d: err=%v records=%v", cut, err, rs.Records)
			}
			continue
		}
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		got := readRecords(t, rs.Records)
		if len(got) != 2 || got[0].Offset != 0 || got[1].Offset != 1 {
			t.Fatalf("cut %d: %+v", cut, got)
		}
	}
}

func TestRecordSetReadFromCRCMismatch(t *testing.T) {
	a, b := twoBatches(t)
	for i := 21; i < len(a); i++ { // every byte under the CRC
		bad := append([]byte{}, a...)
		bad[i] ^= 0x40
		var rs RecordSet
		_, err := rs.ReadFrom(bytes.NewReader(bad))
		if err == nil || !strings.Contains(err.Error(), "crc32") {
			t.Fatalf("byte %d flipped: err=%v", i, err)
		}
	}

	// A bad second batch: the first is still returned, so that a consumer
	// moves up to the bad one (and sees the error when fetching from it).
	bad := append([]byte{}, b...)
	bad[70] ^= 1
	rs := readSet(t, append(append([]byte{}, a...), bad...))
	if got := readRecords(t, rs.Records); len(got) != 2 || got[1].Offset != 1 {
		t.Fatalf("%+v", got)
	}

	msg := legacyMessage(0, 1, 0, 0, []byte("k"), []byte("v"))
	msg[len(msg)-1] ^= 1
	var legacy RecordSet
	if _, err := legacy.ReadFrom(bytes.NewReader(msg)); err == nil || !strings.Contains(err.Error(), "crc32") {
		t.Fatalf("legacy message: err=%v", err)
	}
}

// resign recomputes the CRC of a v2 batch after a test altered it.
func resign(b []byte) []byte {
	binary.BigEndian.PutUint32(b[17:], crc32cBitwise(b[21:]))
	return b
}

func TestRecordSetReadFromMalformed(t *testing.T) {
	golden := func() []byte { return goldenV2(goldenT0.UnixMilli()) }
	tests := []struct {
		name string
		in   []byte
	}{
		{"unknown magic", func() []byte { b := golden(); b[16] = 3; return b }()},
		{"batch length below header", func() []byte { b := golden(); binary.BigEndian.PutUint32(b[8:], 48); return b }()},
		{"negative batch length", func() []byte { b := golden(); binary.BigEndian.PutUint32(b[8:], 0x80000000); return b }()},
		{"negative record count", func() []byte { b := golden(); binary.BigEndian.PutUint32(b[57:], 0xffffffff); return resign(b) }()},
		{"huge record count", func() []byte { b := golden(); binary.BigEndian.PutUint32(b[57:], 1<<30); return resign(b) }()},
		{"more records than claimed", func() []byte { b := golden(); binary.BigEndian.PutUint32(b[57:], 1); return resign(b) }()},
		{"fewer records than claimed", func() []byte { b := golden(); binary.BigEndian.PutUint32(b[57:], 3); return resign(b) }()},
		{"record length past batch", func() []byte { b := golden(); b[61] = 0x7e; return resign(b) }()},
		{"key length past record", func() []byte { b := golden(); b[65] = 0x40; return resign(b) }()},
		{"key length below -1", func() []byte { b := golden(); b[65] = 0x03; return resign(b) }()},
		{"header count past record", func() []byte { b := golden(); b[70] = 0x7e; return resign(b) }()},
		{"unknown codec", func() []byte { b := golden(); b[22] = 7; return resign(b) }()},
		{"corrupt gzip payload", func() []byte { b := golden(); b[22] = byte(Gzip); return resign(b) }()},
		{"legacy size below minimum", func() []byte {
			b := legacyMessage(0, 1, 0, 0, nil, nil)
			binary.BigEndian.PutUint32(b[8:], 10)
			return b
		}()},
		{"legacy key past message", func() []byte {
			b := legacyMessage(0, 1, 0, 0, []byte("k"), nil)
			binary.BigEndian.PutUint32(b[26:], 1000)
			binary.BigEndian.PutUint32(b[12:], crc32.ChecksumIEEE(b[16:]))
			return b
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rs RecordSet
			n, err := rs.ReadFrom(bytes.NewReader(tt.in))
			if err == nil {
				t.Fatalf("accepted: %+v", rs)
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("malformed input reported as truncated: %v", err)
			}
			if n != int64(len(tt.in)) || rs.Records != nil {
				t.Fatalf("n=%d records=%v", n, rs.Records)
			}
		})
	}
}

func TestRecordSetReadFromHugeBatchLengthIsTruncation(t *testing.T) {
	b := goldenV2(goldenT0.UnixMilli())
	binary.BigEndian.PutUint32(b[8:], 0x7fffffff)
	var rs RecordSet
	if _, err := rs.ReadFrom(bytes.NewReader(b)); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err=%v", err)
	}
}

func TestRecordSetReadFromDecompressionLimit(t *testing.T) {
	defer func(n int) { rbMaxDecompressed = n }(rbMaxDecompressed)
	rbMaxDecompressed = 1000
	rs := RecordSet{Version: 2, Attributes: Gzip, Records: NewRecordReader(
		Record{Time: goldenT0, Value: NewBytes(make([]byte, 2000))})}
	var buf bytes.Buffer
	if _, err := rs.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	var out RecordSet
	if _, err := out.ReadFrom(&buf); err == nil || !strings.Contains(err.Error(), "more than 1000 bytes") {
		t.Fatalf("err=%v", err)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestRecordSetReadFromReaderError(t *testing.T) {
	boom := errors.New("boom")
	var rs RecordSet
	if _, err := rs.ReadFrom(io.MultiReader(bytes.NewReader(goldenV2(0)), errReader{boom})); !errors.Is(err, boom) {
		t.Fatalf("err=%v", err)
	}
}

func TestRecordSetWriteToErrors(t *testing.T) {
	var buf bytes.Buffer
	if _, err := (&RecordSet{Version: 2}).WriteTo(&buf); !errors.Is(err, ErrNoRecord) {
		t.Errorf("nil records: %v", err)
	}
	if _, err := (&RecordSet{Version: 2, Records: NewRecordReader()}).WriteTo(&buf); !errors.Is(err, ErrNoRecord) {
		t.Errorf("no records, v2: %v", err)
	}
	if _, err := (&RecordSet{Version: 1, Attributes: Gzip, Records: NewRecordReader()}).WriteTo(&buf); !errors.Is(err, ErrNoRecord) {
		t.Errorf("no records, v1 compressed: %v", err)
	}
	if n, err := (&RecordSet{Version: 1, Records: NewRecordReader()}).WriteTo(&buf); n != 0 || err != nil {
		t.Errorf("no records, v1: n=%d err=%v", n, err)
	}
	one := func() RecordReader { return NewRecordReader(Record{Value: NewBytes([]byte("x"))}) }
	if _, err := (&RecordSet{Version: 3, Records: one()}).WriteTo(&buf); err == nil {
		t.Error("version 3 accepted")
	}
	if _, err := (&RecordSet{Version: 2, Attributes: 6, Records: one()}).WriteTo(&buf); err == nil {
		t.Error("unknown codec accepted")
	}
	lying := Record{Value: &shortBytes{Bytes: NewBytes([]byte("ab")), claim: 5}}
	for _, v := range []int8{1, 2} {
		if _, err := (&RecordSet{Version: v, Records: NewRecordReader(lying)}).WriteTo(&buf); err == nil {
			t.Errorf("v%d: value shorter than its Len accepted", v)
		}
	}
	boom := errors.New("boom")
	if _, err := (&RecordSet{Version: 2, Records: MultiRecordReader(one(), failingReader{boom})}).WriteTo(&buf); !errors.Is(err, boom) {
		t.Errorf("reader error: %v", err)
	}
	if buf.Len() != 0 {
		t.Errorf("failed writes wrote %d bytes", buf.Len())
	}
}

type shortBytes struct {
	Bytes
	claim int
}

func (s *shortBytes) Len() int { return s.claim }

type failingReader struct{ err error }

func (r failingReader) ReadRecord() (*Record, error) { return nil, r.err }

// closeCounter counts the Close calls of the Bytes it hands out.
type closeCounter struct {
	Bytes
	closed *int
}

func (c closeCounter) Close() error { *c.closed++; return c.Bytes.Close() }

func TestRecordSetWriteToClosesKeysAndValues(t *testing.T) {
	for _, v := range []int8{1, 2} {
		closed := 0
		rs := RecordSet{Version: v, Records: NewRecordReader(
			Record{Key: closeCounter{NewBytes([]byte("k")), &closed}, Value: closeCounter{NewBytes([]byte("v")), &closed}},
			Record{Value: closeCounter{NewBytes([]byte("w")), &closed}},
		)}
		if _, err := rs.WriteTo(io.Discard); err != nil {
			t.Fatal(err)
		}
		if closed != 3 {
			t.Errorf("v%d: %d closed, want 3", v, closed)
		}
	}
}

func TestRecordSetWriteToZeroTimeIsNow(t *testing.T) {
	before := time.Now().Truncate(time.Millisecond)
	for _, v := range []int8{1, 2} {
		rs := RecordSet{Version: v, Records: NewRecordReader(Record{Value: NewBytes([]byte("x"))})}
		var buf bytes.Buffer
		if _, err := rs.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		after := time.Now()
		got := readRecords(t, readSet(t, buf.Bytes()).Records)
		if len(got) != 1 || got[0].Time.Before(before) || got[0].Time.After(after) {
			t.Errorf("v%d: time %v not in [%v, %v]", v, got[0].Time, before, after)
		}
	}
}
