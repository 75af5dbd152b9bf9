package protocol

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
)

func TestNewRecordReaderCopies(t *testing.T) {
	recs := []Record{{Offset: 1}, {Offset: 2}}
	r := NewRecordReader(recs...)
	recs[0].Offset = 100
	for _, want := range []int64{1, 2} {
		rec, err := r.ReadRecord()
		if err != nil || rec.Offset != want {
			t.Fatalf("rec=%+v err=%v, want offset %d", rec, err, want)
		}
	}
	for i := 0; i < 2; i++ {
		if _, err := r.ReadRecord(); !errors.Is(err, io.EOF) {
			t.Fatalf("after the end: %v", err)
		}
	}
	if _, err := NewRecordReader().ReadRecord(); !errors.Is(err, io.EOF) {
		t.Fatalf("empty reader: %v", err)
	}
}

func TestMultiRecordReader(t *testing.T) {
	m := MultiRecordReader(
		NewRecordReader(Record{Offset: 1}),
		NewRecordReader(),
		NewRecordReader(Record{Offset: 2}, Record{Offset: 3}),
	)
	var got []int64
	for {
		rec, err := m.ReadRecord()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rec.Offset)
	}
	if !equalSlices(got, []int64{1, 2, 3}) {
		t.Errorf("offsets %v", got)
	}
	if _, err := MultiRecordReader().ReadRecord(); !errors.Is(err, io.EOF) {
		t.Errorf("empty: %v", err)
	}
	one := NewRecordReader()
	if MultiRecordReader(one) != one {
		t.Error("a single reader is not returned as is")
	}
	boom := errors.New("boom")
	if _, err := MultiRecordReader(NewRecordReader(), failingReader{boom}).ReadRecord(); !errors.Is(err, boom) {
		t.Errorf("error: %v", err)
	}
}

func TestRecordStreamSkipsControlBatches(t *testing.T) {
	s := &RecordStream{Records: []RecordReader{
		&RecordBatch{Records: NewRecordReader(Record{Offset: 1})},
		NewControlBatch(ControlRecord{Offset: 2, Type: 1}),
		&MessageSet{Records: NewRecordReader(Record{Offset: 3})},
		NewRecordReader(Record{Offset: 4}),
	}}
	var got []int64
	for {
		rec, err := s.ReadRecord()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rec.Offset)
	}
	if !equalSlices(got, []int64{1, 3, 4}) {
		t.Errorf("offsets %v", got)
	}
}

func TestNewBytesAndReadAll(t *testing.T) {
	if NewBytes(nil) != nil {
		t.Error("NewBytes(nil) is not nil")
	}
	if b, err := ReadAll(nil); b != nil || err != nil {
		t.Errorf("ReadAll(nil) = %v, %v", b, err)
	}
	e := NewBytes([]byte{})
	if b, err := ReadAll(e); b == nil || len(b) != 0 || err != nil {
		t.Errorf("ReadAll(empty) = %#v, %v", b, err)
	}
	src := []byte("hello")
	b := NewBytes(src)
	if b.Len() != 5 {
		t.Errorf("Len %d", b.Len())
	}
	var head [2]byte
	io.ReadFull(b, head[:])
	if b.Len() != 3 {
		t.Errorf("Len after reading 2: %d", b.Len())
	}
	rest, _ := ReadAll(b)
	if string(rest) != "llo" || b.Close() != nil {
		t.Errorf("rest %q", rest)
	}
}

// encodeValues returns a v2 batch (compressed with codec attrs) whose
// records have the given values and a header "i" holding the same value.
func encodeValues(t testing.TB, attrs Attributes, values ...string) []byte {
	recs := make([]Record, len(values))
	for i, v := range values {
		recs[i] = Record{Time: goldenT0, Key: NewBytes([]byte(v)), Value: NewBytes([]byte(v)),
			Headers: []Header{{Key: "i", Value: []byte(v)}}}
	}
	var buf bytes.Buffer
	rs := RecordSet{Version: 2, Attributes: attrs, Records: NewRecordReader(recs...)}
	if _, err := rs.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDecodedBytesOutliveRecycling keeps the keys, values and headers of one
// decoded set while many others are decoded and recycled through the same
// pools: what was kept must not change until it is closed.
func TestDecodedBytesOutliveRecycling(t *testing.T) {
	for _, attrs := range []Attributes{0, Gzip} {
		var values []string
		for i := 0; i < 50; i++ {
			values = append(values, fmt.Sprintf("value-%03d", i))
		}
		rs := readSet(t, encodeValues(t, attrs, values...))
		var keys, vals []Bytes
		var headers [][]Header
		for {
			rec, err := rs.Records.ReadRecord()
			if err != nil {
				break
			}
			keys, vals, headers = append(keys, rec.Key), append(vals, rec.Value), append(headers, rec.Headers)
		}
		// Read to EOF: the batch let go of its buffer; only keys and values hold it.
		for i := 0; i < 20; i++ {
			other := readSet(t, encodeValues(t, attrs, values[:10]...))
			for _, r := range readRecords(t, other.Records) {
				if r.Value[:6] != "value-" {
					t.Fatal(r)
				}
			}
		}
		var wg sync.WaitGroup
		for i := range values {
			wg.Add(1)
			go func(i int) { // closed from many goroutines: the count is atomic
				defer wg.Done()
				k, _ := ReadAll(keys[i])
				v, _ := ReadAll(vals[i])
				keys[i].Close()
				vals[i].Close()
				if string(k) != values[i] || string(v) != values[i] {
					t.Errorf("record %d: key %q value %q", i, k, v)
				}
			}(i)
		}
		wg.Wait()
		for i := 0; i < 20; i++ {
			readRecords(t, readSet(t, encodeValues(t, attrs, "xxxxxxxxx", "yyyyyyyyy")).Records)
		}
		for i := range values {
			if len(headers[i]) != 1 || headers[i][0].Key != "i" || string(headers[i][0].Value) != values[i] {
				t.Fatalf("headers of record %d changed: %+v", i, headers[i])
			}
		}
		if keys[0].Len() != 0 {
			t.Error("a closed key still has bytes")
		}
	}
}

// TestDecodedBufferReturnsToPool checks the reference count: the buffer of a
// batch is released once the batch was read to its end and every key and
// value was closed, not before.
func TestDecodedBufferReturnsToPool(t *testing.T) {
	for _, attrs := range []Attributes{0, Zstd} {
		rs := readSet(t, encodeValues(t, attrs, "a", "b"))
		reader := rs.Records.(*RecordStream).Records[0].(*RecordBatch).Records.(*rbV2Reader)
		owner := reader.owner
		var held []Bytes
		for {
			rec, err := rs.Records.ReadRecord()
			if err != nil {
				break
			}
			held = append(held, rec.Key, rec.Value)
		}
		if owner.buf == nil || owner.refs.Load() != 4 {
			t.Fatalf("%v: refs %d after reading, want 4 (two keys, two values)", attrs, owner.refs.Load())
		}
		for _, b := range held {
			b.Close()
			b.Close() // twice: no effect
		}
		if owner.buf != nil || owner.refs.Load() != 0 {
			t.Fatalf("%v: refs %d after closing everything", attrs, owner.refs.Load())
		}
	}
}

func TestRawRecordSet(t *testing.T) {
	in := goldenV2(goldenT0.UnixMilli())
	var raw RawRecordSet
	n, err := raw.ReadFrom(bytes.NewReader(in))
	if err != nil || n != int64(len(in)) {
		t.Fatalf("n=%d err=%v", n, err)
	}
	var out bytes.Buffer
	if _, err := raw.WriteTo(&out); err != nil || !bytes.Equal(out.Bytes(), in) {
		t.Fatalf("err=%v bytes changed", err)
	}
	bad := append([]byte{}, in...)
	bad[30] ^= 1
	if _, err := raw.ReadFrom(bytes.NewReader(bad)); err == nil {
		t.Error("corrupt batch accepted")
	}
	if _, err := (&RawRecordSet{}).WriteTo(&out); !errors.Is(err, ErrNoRecord) {
		t.Errorf("nil reader: %v", err)
	}
}

// TestRecordSetReencode writes decoded records again (a proxy or mirror
// does this), which reads keys and values straight from the decode buffer.
func TestRecordSetReencode(t *testing.T) {
	recs, want := sampleRecords(30)
	var buf bytes.Buffer
	if _, err := (&RecordSet{Version: 2, Attributes: Snappy, Records: NewRecordReader(recs...)}).WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	decoded := readSet(t, buf.Bytes())
	var again bytes.Buffer
	if _, err := (&RecordSet{Version: 2, Records: decoded.Records}).WriteTo(&again); err != nil {
		t.Fatal(err)
	}
	checkRecords(t, readSet(t, again.Bytes()).Records, want)
}
