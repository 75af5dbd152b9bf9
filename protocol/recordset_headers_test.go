package protocol

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"testing"
)

// streamHeaders writes recs as one v2 batch and reads their headers back
// through a BatchStream, record by record, as the Reader does.
func streamHeaders(t testing.TB, recs []Record) [][]Header {
	t.Helper()
	var buf bytes.Buffer
	if _, err := (&RecordSet{Version: 2, Records: NewRecordReader(recs...)}).WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	s := NewBatchStream(bufio.NewReaderSize(bytes.NewReader(buf.Bytes()), 4096), buf.Len())
	batch, err := s.Next()
	if err != nil {
		t.Fatal(err)
	}
	fr := batch.(*RecordBatch).Records.(RecordFieldsReader)
	var out [][]Header
	for {
		var f RecordFields
		if err := fr.ReadRecordFields(&f); err == io.EOF {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		out = append(out, f.Headers)
	}
}

// The headers of streamed records are the program's to keep: equal to what
// was written (a null value stays nil, an empty one empty), unchanged by the
// records read after them, and a value appended to cannot overwrite another
// header's, though they share arrays.
func TestStreamedHeadersOwned(t *testing.T) {
	big := bytes.Repeat([]byte("b"), 3*rbHeaderArenaBytes)
	var recs []Record
	for i := 0; i < 150; i++ {
		var hs []Header
		switch i % 5 {
		case 0: // the same keys as the previous record with headers
			hs = []Header{{Key: "trace-id", Value: []byte("t" + strconv.Itoa(i))}, {Key: "span", Value: []byte("s")}}
		case 1: // other keys, a null and an empty value
			hs = []Header{{Key: "k" + strconv.Itoa(i), Value: nil}, {Key: "span", Value: []byte{}}, {Key: "", Value: []byte("v")}}
		case 2: // none
		case 3: // a value larger than an array
			hs = []Header{{Key: "trace-id", Value: big}}
		case 4:
			hs = []Header{{Key: "trace-id", Value: []byte("t" + strconv.Itoa(i))}, {Key: "span", Value: []byte("s" + strconv.Itoa(i))}}
		}
		recs = append(recs, Record{Offset: int64(i), Value: NewBytes([]byte("x")), Headers: hs})
	}
	check := func(got [][]Header, when string) {
		t.Helper()
		for i, hs := range got {
			want := recs[i].Headers
			if len(hs) != len(want) {
				t.Fatalf("%s: record %d has %d headers, want %d", when, i, len(hs), len(want))
			}
			for j := range hs {
				if hs[j].Key != want[j].Key || !bytes.Equal(hs[j].Value, want[j].Value) || (hs[j].Value == nil) != (want[j].Value == nil) {
					t.Fatalf("%s: record %d header %d is %q=%q (nil %v), want %q=%q (nil %v)", when, i, j,
						hs[j].Key, hs[j].Value, hs[j].Value == nil, want[j].Key, want[j].Value, want[j].Value == nil)
				}
				if cap(hs[j].Value) != len(hs[j].Value) {
					t.Fatalf("%s: record %d header %d: capacity %d for %d bytes", when, i, j, cap(hs[j].Value), len(hs[j].Value))
				}
			}
		}
	}
	got := streamHeaders(t, recs)
	if len(got) != len(recs) {
		t.Fatalf("%d records, want %d", len(got), len(recs))
	}
	check(got, "as read")
	for _, hs := range got {
		for j := range hs {
			_ = append(hs[j].Value, "overwrite"...)
		}
		_ = append(hs, Header{Key: "extra"})
	}
	check(got, "after appending to every value and header list")
}

// Records whose headers repeat their keys take no allocation each: the
// keys are shared and the Header arrays and values come a few dozen records
// at a time.
func TestStreamedHeadersAllocations(t *testing.T) {
	recs := make([]Record, 1000)
	for i := range recs {
		recs[i] = Record{Value: NewBytes([]byte("v")), Headers: []Header{
			{Key: "trace-id", Value: []byte(fmt.Sprintf("%016x", i))}, {Key: "span", Value: []byte("0123")},
		}}
	}
	var buf bytes.Buffer
	if _, err := (&RecordSet{Version: 2, Records: NewRecordReader(recs...)}).WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	in := buf.Bytes()
	br := bufio.NewReaderSize(nil, 32<<10)
	var sink []Header
	allocs := testing.AllocsPerRun(20, func() {
		br.Reset(bytes.NewReader(in))
		s := NewBatchStream(br, len(in))
		batch, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		fr := batch.(*RecordBatch).Records.(RecordFieldsReader)
		var f RecordFields
		for fr.ReadRecordFields(&f) == nil {
			sink = f.Headers
		}
	})
	_ = sink
	// Per batch: the stream and batch themselves, the first record's two
	// keys, and for every 32 records an array of Headers and one of values.
	if limit := 10.0 + 2*float64(len(recs))/rbHeaderArenaRecords + 2; allocs > limit {
		t.Fatalf("%v allocations for %d records with headers, want at most %v", allocs, len(recs), limit)
	}
}

// A record the program keeps keeps no large header of the other records:
// records with headers of more than rbHeaderArenaMax bytes share no array.
// Keeping the first of 32 records with one 256 KiB header value each must
// keep about one value alive, not 32.
func TestStreamedHeadersKeptRecordHoldsOnlyItsLargeValue(t *testing.T) {
	const n, size = 32, 256 << 10
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{Offset: int64(i), Value: NewBytes([]byte("v")), Headers: []Header{{Key: "h", Value: bytes.Repeat([]byte{byte(i)}, size)}}}
	}
	var buf bytes.Buffer
	if _, err := (&RecordSet{Version: 2, Records: NewRecordReader(recs...)}).WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	recs = nil
	in := buf.Bytes()
	buf = bytes.Buffer{}
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	kept := func() []Header {
		s := NewBatchStream(bufio.NewReaderSize(bytes.NewReader(in), 4096), len(in))
		batch, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		fr := batch.(*RecordBatch).Records.(RecordFieldsReader)
		var first []Header
		for {
			var f RecordFields
			if err := fr.ReadRecordFields(&f); err == io.EOF {
				return first
			} else if err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = f.Headers
			}
		}
	}()
	after := heap()
	if grew := int64(after) - int64(before); grew > 4*size {
		t.Errorf("keeping one record's headers keeps %d KiB alive, want about %d KiB", grew>>10, size>>10)
	}
	if len(kept) != 1 || len(kept[0].Value) != size || kept[0].Value[0] != 0 {
		t.Fatalf("kept headers %d", len(kept))
	}
	runtime.KeepAlive(in)
}
