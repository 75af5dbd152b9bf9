package protocol

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"
)

// encodedTestRecords are records with what the encoding must keep apart:
// null and empty keys and values, headers with null and empty values, and
// timestamps before and after the first one.
func encodedTestRecords() []Record {
	base := time.UnixMilli(1_700_000_000_123)
	return []Record{
		{Time: base, Key: NewBytes([]byte("k0")), Value: NewBytes([]byte("first"))},
		{Time: base.Add(-3 * time.Second), Key: nil, Value: NewBytes([]byte{})},
		{Time: base.Add(time.Hour), Key: NewBytes([]byte{}), Value: nil},
		{Time: base.Add(2 * time.Millisecond), Key: NewBytes(bytes.Repeat([]byte("k"), 300)), Value: NewBytes(bytes.Repeat([]byte("v"), 20000)),
			Headers: []Header{{Key: "a", Value: []byte("1")}, {Key: "null", Value: nil}, {Key: "", Value: []byte{}}}},
	}
}

// appendEncoded encodes recs (re-created by encodedTestRecords, since their
// Bytes are read once) into an EncodedRecords.
func appendEncoded(t testing.TB) *EncodedRecords {
	t.Helper()
	var e EncodedRecords
	for _, r := range encodedTestRecords() {
		e.Append(r.Time, readAllOf(r.Key), readAllOf(r.Value), r.Headers)
	}
	return &e
}

// TestEncodedRecordsWriteSameBytes checks that records encoded as they are
// added write the very bytes RecordSet.WriteTo writes from the records
// themselves, in every format version and with every codec.
func TestEncodedRecordsWriteSameBytes(t *testing.T) {
	codecs := append([]Attributes{0}, Gzip, Snappy, Lz4, Zstd)
	for _, version := range []int8{0, 1, 2} {
		for _, attrs := range codecs {
			t.Run(fmt.Sprintf("v%d/codec%d", version, attrs), func(t *testing.T) {
				var want bytes.Buffer
				rs := RecordSet{Version: version, Attributes: attrs, Records: NewRecordReader(encodedTestRecords()...)}
				if _, err := rs.WriteTo(&want); err != nil {
					t.Fatal(err)
				}
				e := appendEncoded(t)
				for attempt := 0; attempt < 2; attempt++ { // a retry writes the same bytes again
					var got bytes.Buffer
					rs := RecordSet{Version: version, Attributes: attrs, Records: e.Reader()}
					if _, err := rs.WriteTo(&got); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got.Bytes(), want.Bytes()) {
						t.Fatalf("attempt %d: encoded records wrote %d bytes differing from the records' %d", attempt, got.Len(), want.Len())
					}
				}
			})
		}
	}
}

// TestEncodedRecordsReadBack decodes the encoded records one by one (the
// legacy path) and through Each, and compares them with what was added.
func TestEncodedRecordsReadBack(t *testing.T) {
	e := appendEncoded(t)
	want := encodedTestRecords()
	if e.Len() != len(want) {
		t.Fatalf("Len %d, want %d", e.Len(), len(want))
	}
	r := e.Reader()
	for i := range want {
		got, err := r.ReadRecord()
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		w := &want[i]
		if !got.Time.Equal(w.Time) || got.Offset != int64(i) {
			t.Errorf("record %d: time %v offset %d, want %v %d", i, got.Time, got.Offset, w.Time, i)
		}
		checkBytes(t, i, "key", readAllOf(got.Key), readAllOf(w.Key))
		checkBytes(t, i, "value", readAllOf(got.Value), readAllOf(w.Value))
		if len(got.Headers) != len(w.Headers) {
			t.Fatalf("record %d: %d headers, want %d", i, len(got.Headers), len(w.Headers))
		}
		for j, h := range w.Headers {
			if got.Headers[j].Key != h.Key {
				t.Errorf("record %d header %d: key %q, want %q", i, j, got.Headers[j].Key, h.Key)
			}
			checkBytes(t, i, "header value", got.Headers[j].Value, h.Value)
		}
	}
	if _, err := r.ReadRecord(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last record: %v, want io.EOF", err)
	}

	want = encodedTestRecords()
	n := 0
	if err := e.Each(func(i int, key, value []byte) {
		n++
		checkBytes(t, i, "key (Each)", key, readAllOf(want[i].Key))
		checkBytes(t, i, "value (Each)", value, readAllOf(want[i].Value))
	}); err != nil {
		t.Fatal(err)
	}
	if n != len(want) {
		t.Fatalf("Each saw %d records, want %d", n, len(want))
	}
}

func checkBytes(t *testing.T, i int, what string, got, want []byte) {
	t.Helper()
	if (got == nil) != (want == nil) || !bytes.Equal(got, want) {
		t.Errorf("record %d: %s %q (nil %v), want %q (nil %v)", i, what, got, got == nil, want, want == nil)
	}
}

// TestEncodedRecordsZeroTime gives records without a time the same current
// time, as WriteTo does for a set, and keeps their deltas from the first.
func TestEncodedRecordsZeroTime(t *testing.T) {
	before := time.Now().UnixMilli()
	var e EncodedRecords
	e.Append(time.Time{}, nil, []byte("a"), nil)
	e.Append(time.UnixMilli(before-1000), nil, []byte("b"), nil)
	e.Append(time.Time{}, nil, []byte("c"), nil)
	after := time.Now().UnixMilli()
	r := e.Reader()
	var times []int64
	for {
		rec, err := r.ReadRecord()
		if err != nil {
			break
		}
		times = append(times, rec.Time.UnixMilli())
	}
	if len(times) != 3 || times[0] < before || times[0] > after || times[2] != times[0] || times[1] != before-1000 {
		t.Fatalf("times %v: want the current time (between %d and %d) for both zero times, %d for the second", times, before, after, before-1000)
	}
}

// TestEncodedRecordsEmptyAndFit: an empty set writes no v2 batch, and Fit
// keeps the records while dropping spare capacity.
func TestEncodedRecordsEmptyAndFit(t *testing.T) {
	var e EncodedRecords
	rs := RecordSet{Version: 2, Records: e.Reader()}
	if _, err := rs.WriteTo(io.Discard); !errors.Is(err, ErrNoRecord) {
		t.Fatalf("empty encoded records: %v, want ErrNoRecord", err)
	}
	e.Grow(1 << 16)
	e.Append(time.UnixMilli(5), []byte("k"), []byte("v"), nil)
	size := e.Size()
	e.Fit(64)
	if e.Cap() != size || e.Size() != size || e.Len() != 1 {
		t.Fatalf("after Fit: cap %d size %d len %d, want cap = size = %d, 1 record", e.Cap(), e.Size(), e.Len(), size)
	}
	e.Reset()
	if e.Len() != 0 || e.Size() != 0 || e.Cap() != 0 {
		t.Fatalf("after Reset: len %d size %d cap %d", e.Len(), e.Size(), e.Cap())
	}
}

// TestEncodedRecordsIdempotentBatch: a type embedding the reader keeps its
// ProducerBatch in the header while the records go as encoded.
func TestEncodedRecordsIdempotentBatch(t *testing.T) {
	e := appendEncoded(t)
	var plain, stamped bytes.Buffer
	if _, err := (&RecordSet{Version: 2, Records: e.Reader()}).WriteTo(&plain); err != nil {
		t.Fatal(err)
	}
	if _, err := (&RecordSet{Version: 2, Records: &stampedEncoded{e.Reader()}}).WriteTo(&stamped); err != nil {
		t.Fatal(err)
	}
	p, s := plain.Bytes(), stamped.Bytes()
	if len(p) != len(s) || !bytes.Equal(p[rbV2RecordCount:], s[rbV2RecordCount:]) {
		t.Fatal("the stamped batch's records differ from the plain one's")
	}
	if got := s[rbV2ProducerID : rbV2ProducerID+8]; !bytes.Equal(got, []byte{0, 0, 0, 0, 0, 0, 0, 7}) {
		t.Fatalf("producer ID bytes %x, want 7", got)
	}
	if _, err := (&RecordSet{Version: 1, Records: &stampedEncoded{e.Reader()}}).WriteTo(io.Discard); !errors.Is(err, errProducerLegacy) {
		t.Fatalf("idempotent records in a legacy set: %v, want errProducerLegacy", err)
	}
}

type stampedEncoded struct{ *EncodedRecordReader }

func (*stampedEncoded) ProducerBatch() (int64, int16, int32) { return 7, 1, 42 }

func readAllOf(b Bytes) []byte {
	out, err := ReadAll(b)
	if err != nil {
		panic(err)
	}
	return out
}

// TestEncodedRecordsReaderOutlivesReset: a request still being encoded
// when its producer drops the batch (a reply lost, the batch retried or
// given up) must still read the records it was given.
func TestEncodedRecordsReaderOutlivesReset(t *testing.T) {
	e := appendEncoded(t)
	var want bytes.Buffer
	if _, err := (&RecordSet{Version: 2, Records: e.Reader()}).WriteTo(&want); err != nil {
		t.Fatal(err)
	}
	r1, r2 := e.Reader(), e.Reader()
	e.Reset()
	e.Append(time.UnixMilli(1), nil, []byte("other"), nil)
	var got bytes.Buffer
	if _, err := (&RecordSet{Version: 2, Records: r1}).WriteTo(&got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatal("a reader taken before Reset wrote other records")
	}
	n := 0
	for {
		if _, err := r2.ReadRecord(); err != nil {
			break
		}
		n++
	}
	if n != len(encodedTestRecords()) {
		t.Fatalf("a reader taken before Reset decoded %d records, want %d", n, len(encodedTestRecords()))
	}
}

// FuzzRecordKeyValueV2: Each's lean parse never panics on any bytes, and
// wherever the full record parser accepts a record, it finds the same
// key, value (null kept apart from empty) and record size.
func FuzzRecordKeyValueV2(f *testing.F) {
	e := appendEncoded(f)
	b := e.b
	for len(b) > 0 { // each record alone
		_, _, n := rbKeyValueV2(b)
		f.Add(b[:n])
		b = b[n:]
	}
	f.Add([]byte{0x02, 0})
	f.Add([]byte{0x0e, 0, 0, 0, 0x01, 0x02, 'v', 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		key, value, n := rbKeyValueV2(b)
		rec, wantN, err := rbParseRecordV2(b, false)
		if err != nil {
			return
		}
		if n != wantN {
			t.Fatalf("size %d, want %d", n, wantN)
		}
		checkBytes(t, 0, "key", key, rec.key)
		checkBytes(t, 0, "value", value, rec.value)
		if cap(key) != len(key) || cap(value) != len(value) {
			t.Fatal("key or value not capped: appending to it would overwrite the record")
		}
	})
}

// TestEncodedRecordsReleaseReuses: records grown after another set's
// Release hold only their own records, whether or not they got its array.
func TestEncodedRecordsReleaseReuses(t *testing.T) {
	value := bytes.Repeat([]byte("x"), 100)
	for round := 0; round < 20; round++ {
		var e EncodedRecords
		e.Grow(20 * 120)
		for i := 0; i < 20; i++ {
			e.Append(time.Time{}, []byte(fmt.Sprint("k", round, "-", i)), value, nil)
		}
		n := 0
		if err := e.Each(func(i int, key, v []byte) {
			n++
			checkBytes(t, i, "key", key, []byte(fmt.Sprint("k", round, "-", i)))
			checkBytes(t, i, "value", v, value)
		}); err != nil {
			t.Fatal(err)
		}
		if n != 20 {
			t.Fatalf("round %d: %d records, want 20", round, n)
		}
		e.Release()
		if e.Len() != 0 || e.Size() != 0 || e.Cap() != 0 {
			t.Fatalf("after Release: len %d size %d cap %d", e.Len(), e.Size(), e.Cap())
		}
	}
}

// TestEncodedRecordsInRequestSameBytes encodes requests whose record set
// holds encoded records, which an uncompressed v2 batch copies into the
// frame straight from the records rather than through the size pass's
// buffer, and checks them byte for byte against the same request built
// from the records themselves: batch length, CRC and the fields around
// the set, in the plain and the flexible encoding, with every codec, for
// plain and idempotent batches.
func TestEncodedRecordsInRequestSameBytes(t *testing.T) {
	raw := func() RawRecordSet { return RawRecordSet{Reader: bytes.NewReader([]byte("raw-after"))} }
	for _, apiVersion := range []int16{0, 1} {
		for _, attrs := range []Attributes{0, Gzip, Snappy, Lz4, Zstd} {
			for _, stamped := range []bool{false, true} {
				t.Run(fmt.Sprintf("v%d/codec%d/stamped=%t", apiVersion, attrs, stamped), func(t *testing.T) {
					var wantRecs RecordReader = NewRecordReader(encodedTestRecords()...)
					var gotRecs RecordReader = appendEncoded(t).Reader()
					if stamped {
						wantRecs = &stampedRecords{wantRecs}
						gotRecs = &stampedEncoded{gotRecs.(*EncodedRecordReader)}
					}
					encode := func(recs RecordReader) []byte {
						t.Helper()
						var buf bytes.Buffer
						req := &testRecordsRequest{Before: 11, After: 22, Raw: raw(),
							Records: RecordSet{Version: 2, Attributes: attrs, Records: recs}}
						if err := WriteRequest(&buf, apiVersion, 5, "client", req); err != nil {
							t.Fatal(err)
						}
						return buf.Bytes()
					}
					want, got := encode(wantRecs), encode(gotRecs)
					if !bytes.Equal(got, want) {
						t.Fatalf("request with encoded records: %d bytes differing from the records' %d", len(got), len(want))
					}
				})
			}
		}
	}
}

type stampedRecords struct{ RecordReader }

func (*stampedRecords) ProducerBatch() (int64, int16, int32) { return 7, 1, 42 }

// BenchmarkEncodedRecordsInRequest encodes a request holding a batch of
// 100 encoded records (the Writer's produce requests): uncompressed, the
// records go into the frame in one copy.
func BenchmarkEncodedRecordsInRequest(b *testing.B) {
	for _, size := range []int{100, 1024} {
		b.Run(fmt.Sprintf("value=%d", size), func(b *testing.B) {
			var e EncodedRecords
			value := bytes.Repeat([]byte("v"), size)
			for i := 0; i < 100; i++ {
				e.Append(time.UnixMilli(1_700_000_000_000), nil, value, nil)
			}
			var buf bytes.Buffer
			b.SetBytes(int64(e.Size()))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				buf.Reset()
				req := &testRecordsRequest{Records: RecordSet{Version: 2, Records: e.Reader()}}
				if err := WriteRequest(&buf, 1, 1, "client", req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestEncodedRecordsGrowthDoubles: records appended one by one move to a
// new array at most once per doubling of their size, so that each byte is
// copied about once on the way, not three times as append's quarter steps
// did for large arrays.
func TestEncodedRecordsGrowthDoubles(t *testing.T) {
	var e EncodedRecords
	value := bytes.Repeat([]byte("v"), 1024)
	moves, lastCap := 0, 0
	for i := 0; i < 1000; i++ {
		e.Append(time.Time{}, nil, value, nil)
		if e.Cap() != lastCap {
			if lastCap != 0 && e.Cap() < 2*lastCap {
				t.Fatalf("record %d: the array grew from %d to %d bytes, less than double", i, lastCap, e.Cap())
			}
			moves++
			lastCap = e.Cap()
		}
	}
	// 1 KiB to about 1 MiB: eleven doublings, and the first array.
	if moves > 12 {
		t.Fatalf("%d arrays for 1000 records of 1 KiB, want at most 12", moves)
	}
}
