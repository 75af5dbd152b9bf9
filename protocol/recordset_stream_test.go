package protocol

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// streamRecord is what a consumer sees of a record, batch kind included.
type streamRecord struct {
	kind string
	rec  testRecord
}

func (r streamRecord) String() string {
	return fmt.Sprintf("%s %d %q %q %v", r.kind, r.rec.Offset, r.rec.Key, r.rec.Value, r.rec.Headers)
}

func batchKind(b RecordReader) string {
	switch b.(type) {
	case *RecordBatch:
		return "batch"
	case *ControlBatch:
		return "control"
	case *MessageSet:
		return "legacy"
	}
	return fmt.Sprintf("%T", b)
}

func recordOf(kind string, rec *Record) streamRecord {
	return streamRecord{kind: kind, rec: testRecord{
		Offset: rec.Offset, Time: rec.Time, Key: bytesString(rec.Key), Value: bytesString(rec.Value), Headers: rec.Headers,
	}}
}

func fieldsString(b []byte) string {
	if b == nil {
		return "<nil>"
	}
	return string(b)
}

// readBatches reads every record of every batch, through ReadRecordFields
// where the batch has it (as kafka-go's Reader does); it stops at the
// first error.
func readBatches(next func() (RecordReader, error)) (out []streamRecord, err error) {
	for {
		b, err := next()
		if err != nil {
			return out, err
		}
		kind := batchKind(b)
		var fr RecordFieldsReader
		if rb, ok := b.(*RecordBatch); ok {
			fr, _ = rb.Records.(RecordFieldsReader)
		}
		for {
			if fr != nil {
				var f RecordFields
				if err := fr.ReadRecordFields(&f); err != nil {
					if errors.Is(err, io.EOF) {
						break
					}
					return out, err
				}
				out = append(out, streamRecord{kind: kind, rec: testRecord{
					Offset: f.Offset, Time: f.Time, Key: fieldsString(f.Key), Value: fieldsString(f.Value), Headers: f.Headers,
				}})
				continue
			}
			rec, err := b.ReadRecord()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return out, err
			}
			out = append(out, recordOf(kind, rec))
		}
	}
}

// readFromBatches is readBatches over what RecordSet.ReadFrom decoded.
func readFromBatches(in []byte) ([]streamRecord, error) {
	var rs RecordSet
	if _, err := rs.ReadFrom(bytes.NewReader(in)); err != nil {
		return nil, err
	}
	stream, _ := rs.Records.(*RecordStream)
	if stream == nil {
		return nil, io.EOF
	}
	i := 0
	return readBatches(func() (RecordReader, error) {
		if i == len(stream.Records) {
			return nil, io.EOF
		}
		i++
		return stream.Records[i-1], nil
	})
}

// streamBatches reads in through a BatchStream over a small bufio buffer,
// followed by a trailer that must be where Close leaves the source.
func streamBatches(t testing.TB, in []byte, bufSize int) ([]streamRecord, error) {
	const trailer = "TRAILER"
	src := bufio.NewReaderSize(bytes.NewReader(append(append([]byte{}, in...), trailer...)), bufSize)
	s := NewBatchStream(src, len(in))
	out, err := readBatches(s.Next)
	if cerr := s.Close(); cerr != nil {
		t.Fatalf("Close: %v (after %v)", cerr, err)
	}
	rest, _ := io.ReadAll(src)
	if string(rest) != trailer {
		t.Fatalf("Close left the source at %q, want %q (after %v)", rest, trailer, err)
	}
	return out, err
}

func sameRecords(t testing.TB, what string, got, want []streamRecord) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d records, want %d:\n got %v\nwant %v", what, len(got), len(want), got, want)
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.kind != w.kind || g.rec.Offset != w.rec.Offset || !g.rec.Time.Equal(w.rec.Time) ||
			g.rec.Key != w.rec.Key || g.rec.Value != w.rec.Value || !headersEqual(g.rec.Headers, w.rec.Headers) {
			t.Fatalf("%s: record %d:\n got %v\nwant %v", what, i, g, w)
		}
	}
}

// Every kind of batch the decoder knows reads the same through the
// stream as through ReadFrom, with buffers smaller and larger than a
// record.
func TestBatchStreamSameRecords(t *testing.T) {
	for i, in := range fuzzSeeds(t) {
		for _, size := range []int{16, 4096} {
			t.Run(fmt.Sprintf("seed%d/buffer%d", i, size), func(t *testing.T) {
				checkStreamAgainstReadFrom(t, in, size)
			})
		}
	}
}

// checkStreamAgainstReadFrom reads in both ways. When the stream reads to
// the end, ReadFrom reads the same records; when ReadFrom reads some
// batches (stopping at a bad one, if any), the stream reads at least
// their records; when ReadFrom refuses the input, so does the stream.
func checkStreamAgainstReadFrom(t *testing.T, in []byte, size int) {
	want, werr := readFromBatches(in)
	got, gerr := streamBatches(t, in, size)
	switch {
	case gerr == nil:
		t.Fatal("the stream ended without io.EOF or an error")
	case gerr == io.EOF:
		if werr != io.EOF {
			t.Fatalf("the stream read everything, ReadFrom failed: %v", werr)
		}
		sameRecords(t, "complete", got, want)
	case werr == io.EOF:
		if len(got) < len(want) {
			t.Fatalf("the stream failed (%v) after %d records, ReadFrom read %d", gerr, len(got), len(want))
		}
		sameRecords(t, "prefix", got[:len(want)], want)
	}
}

func TestBatchStreamUncompressedMany(t *testing.T) {
	in, want := ownedBatches(t, 5, 0)
	got, err := streamBatches(t, in, 64)
	if !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].rec.Offset != want[i].Offset || got[i].rec.Key != want[i].Key || got[i].rec.Value != want[i].Value || !headersEqual(got[i].rec.Headers, want[i].Headers) {
			t.Fatalf("record %d: got %v want %+v", i, got[i], want[i])
		}
	}
}

// A batch whose CRC does not match delivers its records (they are read
// before the CRC can be checked) and then fails; the stream stays usable
// up to its end.
func TestBatchStreamCRCMismatchAfterRecords(t *testing.T) {
	in, _ := ownedBatches(t, 2, 0)
	first := int(binary.BigEndian.Uint32(in[rbV2BatchLength:])) + rbV2LeaderEpoch
	in[rbV2HeaderSize+3] ^= 0x40 // in the first record of the first batch
	var rs RecordSet
	if _, err := rs.ReadFrom(bytes.NewReader(in)); err == nil || !strings.Contains(err.Error(), "crc32") {
		t.Fatalf("ReadFrom: %v, want a CRC error", err)
	}
	for _, size := range []int{16, 4096} {
		got, err := streamBatches(t, in, size)
		if err == nil || !strings.Contains(err.Error(), "crc32 checksum mismatch") {
			t.Fatalf("buffer %d: %v, want a CRC error", size, err)
		}
		if len(got) != 10 {
			t.Fatalf("buffer %d: %d records before the CRC error, want the batch's 10", size, len(got))
		}
	}
	if first >= len(in) {
		t.Fatal("test needs two batches")
	}
}

// Next skips the records of a batch that were not read.
func TestBatchStreamSkipsUnreadRecords(t *testing.T) {
	in, want := ownedBatches(t, 3, 0)
	src := bufio.NewReaderSize(bytes.NewReader(in), 16)
	s := NewBatchStream(src, len(in))
	for i := 0; i < 3; i++ {
		b, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		rec, err := b.ReadRecord()
		if err != nil {
			t.Fatal(err)
		}
		if rec.Offset != want[10*i].Offset || bytesString(rec.Key) != want[10*i].Key {
			t.Fatalf("batch %d starts with %d %q, want %d %q", i, rec.Offset, bytesString(rec.Key), want[10*i].Offset, want[10*i].Key)
		}
	}
	if _, err := s.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last batch: %v", err)
	}
	if n, _ := src.Read(make([]byte, 1)); n != 0 {
		t.Fatal("bytes left after the records")
	}
}

// A partial batch at the end is skipped; alone, it is io.ErrUnexpectedEOF.
func TestBatchStreamPartialBatch(t *testing.T) {
	in, _ := ownedBatches(t, 2, 0)
	first := int(binary.BigEndian.Uint32(in[rbV2BatchLength:])) + rbV2LeaderEpoch
	for _, cut := range []int{first + 5, first + 20, first + 61, len(in) - 1} {
		got, err := streamBatches(t, in[:cut], 32)
		if !errors.Is(err, io.EOF) || len(got) != 10 {
			t.Fatalf("cut at %d: %d records, %v", cut, len(got), err)
		}
	}
	for _, cut := range []int{5, 17, 61, first - 1} {
		got, err := streamBatches(t, in[:cut], 32)
		if !errors.Is(err, io.ErrUnexpectedEOF) || len(got) != 0 {
			t.Fatalf("only batch cut at %d: %d records, %v", cut, len(got), err)
		}
	}
}

// A source that ends in the middle of the records fails the read with an
// error that says so, never io.EOF (which would read as the end of the
// batch).
func TestBatchStreamSourceCut(t *testing.T) {
	in, _ := ownedBatches(t, 1, 0)
	// A buffer smaller than a record (records copied out) and one that
	// holds them whole (records parsed in place).
	for _, size := range []int{16, 4096} {
		for cut := 0; cut < len(in); cut += 7 {
			src := bufio.NewReaderSize(bytes.NewReader(in[:cut]), size)
			s := NewBatchStream(src, len(in))
			got, err := readBatches(s.Next)
			if err == nil || errors.Is(err, io.EOF) {
				t.Fatalf("buffer %d, cut at %d: %d records, then %v", size, cut, len(got), err)
			}
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("buffer %d, cut at %d: %v", size, cut, err)
			}
		}
	}
}

// Reading an uncompressed batch without headers allocates nothing per
// record once its buffer has grown.
func TestBatchStreamNoAllocsPerRecord(t *testing.T) {
	recs := make([]Record, 200)
	for i := range recs {
		recs[i] = Record{Key: NewBytes([]byte("key")), Value: NewBytes(bytes.Repeat([]byte("v"), 100))}
	}
	var buf bytes.Buffer
	if _, err := (&RecordSet{Version: 2, Records: NewRecordReader(recs...)}).WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	in := buf.Bytes()
	src := bufio.NewReaderSize(bytes.NewReader(nil), 4096)
	var f RecordFields
	allocs := testing.AllocsPerRun(20, func() {
		src.Reset(bytes.NewReader(in))
		s := NewBatchStream(src, len(in))
		b, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		fr := b.(*RecordBatch).Records.(RecordFieldsReader)
		for {
			if err := fr.ReadRecordFields(&f); err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatal(err)
				}
				break
			}
		}
	})
	// The stream, its batch, its reader and the reader's record buffer.
	if allocs > 6 {
		t.Fatalf("%.0f allocations for 200 records", allocs)
	}
}

// The stream never panics, always leaves its source right after the
// records (when the source holds them all), and reads what ReadFrom reads:
// the same records when ReadFrom reads all of them, and when ReadFrom
// stops at a bad batch, at least the records before it.
func FuzzBatchStream(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed, uint8(16))
	}
	f.Fuzz(func(t *testing.T, in []byte, size uint8) {
		checkStreamAgainstReadFrom(t, in, 16+int(size))
	})
}
