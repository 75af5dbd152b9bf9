package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unsafe"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func check(t *testing.T, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Fatalf(format, args...)
	}
}

// ownedBatches returns n v2 batches of sampleRecords(10) each, with attrs,
// numbered from base 0, 10, 20, ... (base offsets are outside the CRC).
func ownedBatches(t *testing.T, n int, attrs Attributes) ([]byte, []testRecord) {
	t.Helper()
	var all bytes.Buffer
	var wantAll []testRecord
	for i := 0; i < n; i++ {
		recs, want := sampleRecords(10) // writing consumes the values
		var one bytes.Buffer
		_, err := (&RecordSet{Version: 2, Attributes: attrs, Records: NewRecordReader(recs...)}).WriteTo(&one)
		must(t, err)
		b := one.Bytes()
		putInt64(b, int64(10*i))
		all.Write(b)
		for _, w := range want {
			w.Offset += int64(10 * i)
			wantAll = append(wantAll, w)
		}
	}
	return all.Bytes(), wantAll
}

func putInt64(b []byte, v int64) {
	for i := 0; i < 8; i++ {
		b[i] = byte(uint64(v) >> (56 - 8*i))
	}
}

// A response decoded from its frame reads the same records as ReadFrom,
// for every codec.
func TestRecordSetReadOwnedSameRecords(t *testing.T) {
	for _, attrs := range []Attributes{0, Gzip, Snappy, Lz4, Zstd} {
		data, want := ownedBatches(t, 3, attrs)
		var rs RecordSet
		must(t, rs.readOwned(append([]byte(nil), data...)))
		check(t, rs.Version == 2 && rs.Attributes.Compression() == attrs.Compression(), "%v: version %d, attributes %v", attrs, rs.Version, rs.Attributes)
		checkRecords(t, rs.Records, want)
	}
}

// Uncompressed batches are read where the frame holds them: a fetch
// response is not held twice.
func TestRecordSetReadOwnedKeepsFrame(t *testing.T) {
	data, _ := ownedBatches(t, 1, 0)
	var rs RecordSet
	must(t, rs.readOwned(data))
	rec, err := rs.Records.ReadRecord()
	must(t, err)
	v := rec.Value.(*rbBytes).data
	p, lo, hi := uintptr(unsafe.Pointer(unsafe.SliceData(v))), uintptr(unsafe.Pointer(&data[0])), uintptr(unsafe.Pointer(&data[len(data)-1]))
	check(t, p >= lo && p <= hi, "value copied out of the frame")
}

// A compressed batch is decompressed by its first read, not before, and
// its buffer goes back when its last record was read: a consumer holds
// one decompressed batch at a time, not a whole decompressed response.
func TestRecordSetReadOwnedDecompressesOneBatchAtATime(t *testing.T) {
	data, _ := ownedBatches(t, 3, Zstd)
	var rs RecordSet
	must(t, rs.readOwned(data))
	batches := rs.Records.(*RecordStream).Records
	check(t, len(batches) == 3, "%d batches", len(batches))
	reader := func(i int) *rbV2Reader { return batches[i].(*RecordBatch).Records.(*rbV2Reader) }
	for i := range batches {
		check(t, reader(i).codec != 0, "batch %d decompressed before it was read", i)
		check(t, batches[i].(*RecordBatch).RecordCount == 10, "batch %d: RecordCount %d", i, batches[i].(*RecordBatch).RecordCount)
	}
	rec, err := batches[0].ReadRecord()
	must(t, err)
	rbCloseRecord(rec)
	check(t, reader(0).codec == 0, "batch 0 read without decompressing")
	check(t, reader(1).codec != 0, "reading batch 0 decompressed batch 1")
	for {
		rec, err := batches[0].ReadRecord()
		if errors.Is(err, io.EOF) {
			break
		}
		must(t, err)
		rbCloseRecord(rec)
	}
	check(t, reader(0).owner == nil, "batch 0 still holds its buffer after its last record")
	check(t, reader(2).codec != 0, "batch 2 decompressed before it was read")
}

// A compressed batch whose CRC is right but whose content does not
// decompress (a broken producer) fails its first read, not the decoding,
// and the batches before it are read in full.
func TestRecordSetReadOwnedCorruptCompressedBatch(t *testing.T) {
	good, want := ownedBatches(t, 1, Zstd)
	bad, _ := ownedBatches(t, 1, Zstd)
	putInt64(bad, 10)
	for i := rbV2HeaderSize; i < len(bad); i++ {
		bad[i] = 0
	}
	resign(bad)
	var rs RecordSet
	must(t, rs.readOwned(append(append([]byte(nil), good...), bad...)))
	batches := rs.Records.(*RecordStream).Records
	check(t, len(batches) == 2, "%d batches", len(batches))
	checkRecords(t, batches[0], want)
	_, err := batches[1].ReadRecord()
	check(t, err != nil && strings.Contains(err.Error(), "decompressing zstd"), "corrupt batch: %v", err)
	_, err = batches[1].ReadRecord()
	check(t, errors.Is(err, io.EOF), "a failed batch must end, not %v", err)

	// ReadFrom keeps checking everything up front.
	var eager RecordSet
	_, err = eager.ReadFrom(bytes.NewReader(bad))
	check(t, err != nil, "ReadFrom accepted the corrupt batch")
}

// A frame of a size below frameWhole is read into one buffer of its size
// once its first chunk arrived, not through doublings.
func TestReadFrameOneBuffer(t *testing.T) {
	const size = 1_000_000
	frame := make([]byte, 4+size)
	binary.BigEndian.PutUint32(frame, size)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, got, err := readFrame(iotest.HalfReader(bytes.NewReader(frame)))
	runtime.ReadMemStats(&after)
	must(t, err)
	check(t, len(got) == size, "frame of %d bytes", len(got))
	// The first chunk and the whole frame: 1.06 MB; doubling took 2 MB.
	n := after.TotalAlloc - before.TotalAlloc
	check(t, n < uint64(size+frameChunk+64<<10), "%d bytes allocated to read a frame of %d", n, size)
}

// ReadRecordFields yields the records ReadRecord does (null and empty keys
// and values, headers, offsets, times), for plain and compressed batches,
// mixed with ReadRecord on the same reader.
func TestRecordFieldsSameRecords(t *testing.T) {
	for _, attrs := range []Attributes{0, Zstd} {
		data, want := ownedBatches(t, 2, attrs)
		var rs RecordSet
		must(t, rs.readOwned(data))
		var got []testRecord
		for _, b := range rs.Records.(*RecordStream).Records {
			fr, ok := b.(*RecordBatch).Records.(RecordFieldsReader)
			check(t, ok, "%T is no RecordFieldsReader", b.(*RecordBatch).Records)
			for i := 0; ; i++ {
				if i%3 == 2 { // every third record through ReadRecord
					rec, err := b.ReadRecord()
					if errors.Is(err, io.EOF) {
						break
					}
					must(t, err)
					got = append(got, testRecord{Offset: rec.Offset, Time: rec.Time, Key: bytesString(rec.Key), Value: bytesString(rec.Value), Headers: rec.Headers})
					rbCloseRecord(rec)
					continue
				}
				var f RecordFields
				err := fr.ReadRecordFields(&f)
				if errors.Is(err, io.EOF) {
					break
				}
				must(t, err)
				got = append(got, testRecord{Offset: f.Offset, Time: f.Time, Key: sliceString(f.Key), Value: sliceString(f.Value), Headers: f.Headers})
			}
		}
		check(t, len(got) == len(want), "%v: %d records, want %d", attrs, len(got), len(want))
		for i := range got {
			g, w := got[i], want[i]
			check(t, g.Offset == w.Offset && g.Time.Equal(w.Time) && g.Key == w.Key && g.Value == w.Value && headersEqual(g.Headers, w.Headers),
				"%v record %d:\n got %+v\nwant %+v", attrs, i, g, w)
		}
	}
}

func sliceString(b []byte) string {
	if b == nil {
		return "<nil>"
	}
	return string(b)
}

// A response's batches are parsed once, as they are read: the records
// before a malformed one are read, the malformed one fails the read, and
// a batch with bytes after its last record fails at its end. Headers that
// start mid-batch get their memory then, for the rest of the batch.
func TestRecordSetReadOwnedChecksAsItReads(t *testing.T) {
	recs := make([]Record, 8)
	for i := range recs {
		recs[i] = Record{Time: goldenT0, Value: NewBytes([]byte(fmt.Sprint("value-", i)))}
		if i >= 5 {
			recs[i].Headers = []Header{{Key: fmt.Sprint("h", i), Value: []byte(fmt.Sprint(i))}}
		}
	}
	var buf bytes.Buffer
	_, err := (&RecordSet{Version: 2, Records: NewRecordReader(recs...)}).WriteTo(&buf)
	must(t, err)
	good := buf.Bytes()

	read := func(data []byte) (n int, err error) {
		var rs RecordSet
		if err := rs.readOwned(data); err != nil {
			return 0, err
		}
		fr := rs.Records.(*RecordStream).Records[0].(*RecordBatch).Records.(RecordFieldsReader)
		for {
			var f RecordFields
			if err := fr.ReadRecordFields(&f); err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				return n, err
			}
			if string(f.Value) != fmt.Sprint("value-", n) {
				t.Fatalf("record %d: value %q", n, f.Value)
			}
			if n >= 5 && (len(f.Headers) != 1 || f.Headers[0].Key != fmt.Sprint("h", n) || string(f.Headers[0].Value) != fmt.Sprint(n)) {
				t.Fatalf("record %d: headers %v", n, f.Headers)
			}
			n++
		}
	}
	n, err := read(append([]byte(nil), good...))
	check(t, n == 8 && err == nil, "good batch: %d records, %v", n, err)

	// Record 2's value length overruns its record.
	bad := append([]byte(nil), good...)
	pos := rbV2HeaderSize
	for i := 0; i < 2; i++ {
		_, size, err := rbParseRecordV2(bad[pos:], true)
		must(t, err)
		pos += size
	}
	_, k := binary.Varint(bad[pos:])
	bad[pos+k+4] = 0x7e // after length, attributes, ts and offset deltas, key length: the value length
	resign(bad)
	n, err = read(bad)
	check(t, n == 2 && err != nil && strings.Contains(err.Error(), "record 2"), "malformed record 2: %d records, %v", n, err)

	// Bytes after the last record: seen when the rest of the batch is
	// sized for its headers (at record 5), or at its end without headers.
	withExtra := func(b []byte) []byte {
		b = append(append([]byte(nil), b...), 0, 0)
		binary.BigEndian.PutUint32(b[8:], binary.BigEndian.Uint32(b[8:])+2)
		return resign(b)
	}
	extra := withExtra(good)
	n, err = read(extra)
	check(t, n == 5 && err != nil && strings.Contains(err.Error(), "after its 8 records"), "trailing bytes: %d records, %v", n, err)
	for i := range recs {
		recs[i] = Record{Time: goldenT0, Value: NewBytes([]byte(fmt.Sprint("value-", i)))}
	}
	buf.Reset()
	_, err = (&RecordSet{Version: 2, Records: NewRecordReader(recs[:5]...)}).WriteTo(&buf)
	must(t, err)
	n, err = read(withExtra(buf.Bytes()))
	check(t, n == 5 && err != nil && strings.Contains(err.Error(), "after its 5 records"), "trailing bytes, no headers: %d records, %v", n, err)

	// ReadFrom still refuses both up front.
	for _, in := range [][]byte{bad, extra} {
		var rs RecordSet
		_, err := rs.ReadFrom(bytes.NewReader(in))
		check(t, err != nil, "ReadFrom accepted a malformed batch")
	}
}

// The compressed batches of a response decoded from its frame do not keep
// the frame: it can be collected once decoded, while its batches are still
// unread, so a consumer holds the batches it has not reached rather than
// the whole response.
func TestRecordSetReadOwnedCompressedDropsFrame(t *testing.T) {
	data, want := ownedBatches(t, 3, Zstd)
	frame := make([]byte, len(data))
	copy(frame, data)
	collected := make(chan struct{})
	runtime.SetFinalizer(&frame[0], func(*byte) { close(collected) })
	var rs RecordSet
	must(t, rs.readOwned(frame))
	frame = nil
	for i := 0; i < 200; i++ { // finalizers run on their own goroutine
		runtime.GC()
		select {
		case <-collected:
			i = 200
		default:
			time.Sleep(5 * time.Millisecond)
		}
	}
	select {
	case <-collected:
	default:
		t.Fatal("the frame is still referenced after its compressed batches were decoded")
	}
	checkRecords(t, rs.Records, want)
}
