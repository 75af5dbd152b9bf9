package protocol

import (
	"encoding/binary"
	"io"
	"time"

	"github.com/segmentio/kafka-go/internal/bytepool"
)

// EncodedRecords are records encoded, one Append at a time, as the body of
// a v2 record batch holds them. A producer that encodes each record when it
// accepts it keeps these bytes instead of the records, so that what it holds
// is about the size of what it will send, without pointers for the garbage
// collector to follow, and it no longer needs the caller's keys and values.
// Written through an EncodedRecordReader, RecordSet.WriteTo puts the batch
// header before the bytes (compressed if the set's codec says so) without
// encoding the records again; legacy message sets decode them first.
//
// The zero value is empty. An EncodedRecords is not safe for concurrent use.
type EncodedRecords struct {
	b     []byte
	n     int32
	first int64 // timestamp of the first record (ms), the base of the deltas
	maxTS int64
	clock rbClock
}

// Append encodes one record at the end: t is its timestamp (the zero time
// stands for the current time, read once for the whole set, as WriteTo does
// for records without one), key and value are copied (nil is null), and so
// are the headers.
func (e *EncodedRecords) Append(t time.Time, key, value []byte, headers []Header) {
	ts := e.clock.millis(t)
	if e.n == 0 {
		e.first, e.maxTS = ts, ts
	}
	e.maxTS = max(e.maxTS, ts)
	delta := ts - e.first
	size := rbRecordV2Size(delta, int64(e.n), rbSliceLen(key), rbSliceLen(value), headers)
	if need := rbVarintLen(int64(size)) + size; cap(e.b)-len(e.b) < need {
		e.grow(need)
	}
	e.b = rbAppendRecordV2Bytes(e.b, size, delta, int64(e.n), key, value, headers)
	e.n++
}

// grow moves the records to a pooled array with room for at least need
// more bytes, and at least double the current one: append's own growth,
// a quarter at a time for large slices, copied a batch's records three
// times over on its way to 100 KB.
func (e *EncodedRecords) grow(need int) {
	b := bytepool.Get(max(len(e.b)+need, 2*cap(e.b)))
	e.b = append(b, e.b...)
}

// Len returns the number of records.
func (e *EncodedRecords) Len() int { return int(e.n) }

// Size returns the size of the encoded records in bytes.
func (e *EncodedRecords) Size() int { return len(e.b) }

// Cap returns the bytes allocated for the records.
func (e *EncodedRecords) Cap() int { return cap(e.b) }

// Grow makes room for n more bytes of records without another allocation.
// An empty e takes an array recycled by Release when one of the size is
// free.
func (e *EncodedRecords) Grow(n int) {
	if cap(e.b)-len(e.b) < n {
		e.grow(n)
	}
}

// Fit copies the records into an allocation of their size if the current
// one exceeds it by more than slack bytes.
func (e *EncodedRecords) Fit(slack int) {
	if cap(e.b)-len(e.b) > slack {
		b := make([]byte, len(e.b))
		copy(b, e.b)
		e.b = b
	}
}

// Reset empties e and drops its bytes.
func (e *EncodedRecords) Reset() { *e = EncodedRecords{} }

// Release empties e like Reset and gives its array to the Grow of another
// EncodedRecords. Only for records nothing refers to any more: no Reader
// still to be read, no key or value of Each kept.
func (e *EncodedRecords) Release() {
	bytepool.Put(e.b)
	*e = EncodedRecords{}
}

// Each calls fn with the key and value of every record in order (nil for
// null), slices of e's bytes, valid as long as e is not appended to or
// reset. It returns an error if the bytes do not parse, which only bytes
// not written by Append can cause.
func (e *EncodedRecords) Each(fn func(i int, key, value []byte)) error {
	b := e.b
	for i := 0; len(b) > 0; i++ {
		key, value, n := rbKeyValueV2(b)
		if n <= 0 {
			return Errorf("malformed record %d of encoded records", i)
		}
		fn(i, key, value)
		b = b[n:]
	}
	return nil
}

// rbKeyValueV2 returns the key and value of the v2 record at the start of
// b, and the record's size, or n <= 0 if it does not parse. Only the
// fields before the value are decoded (Each's callers need no more), so
// it costs a fraction of rbParseRecordV2.
func rbKeyValueV2(b []byte) (key, value []byte, n int) {
	length, k := binary.Varint(b)
	if k <= 0 || length < 1 || length > int64(len(b)-k) {
		return nil, nil, 0
	}
	n = k + int(length)
	body := b[k+1 : n]                // after the attributes
	for skip := 0; skip < 2; skip++ { // the timestamp and offset deltas
		j := 0
		for j < len(body) && body[j] >= 0x80 {
			j++
		}
		if j >= len(body) {
			return nil, nil, 0
		}
		body = body[j+1:]
	}
	var ok bool
	if key, body, ok = rbCutNullable(body); !ok {
		return nil, nil, 0
	}
	if value, _, ok = rbCutNullable(body); !ok {
		return nil, nil, 0
	}
	return key, value, n
}

// rbCutNullable splits varint-length bytes (nil for null) off b, capped
// so that appending to them never writes into b.
func rbCutNullable(b []byte) (field, rest []byte, ok bool) {
	l, k := binary.Varint(b)
	switch {
	case k <= 0 || l < -1 || l > int64(len(b)-k):
		return nil, b, false
	case l == -1:
		return nil, b[k:], true
	}
	end := k + int(l)
	return b[k:end:end], b[end:], true
}

// Reader returns a RecordReader of e's records for one RecordSet.WriteTo:
// a fresh reader is needed for each write, as for any RecordReader. The
// reader keeps the records as they are now: appending to e or resetting it
// afterwards does not change what the reader reads.
func (e *EncodedRecords) Reader() *EncodedRecordReader {
	return &EncodedRecordReader{recs: *e}
}

// EncodedRecordReader reads the records of an EncodedRecords. Through
// RecordSet.WriteTo of a v2 set, the encoded bytes are written as they are;
// ReadRecord decodes them one by one (for legacy message sets, or any other
// reader of records).
type EncodedRecordReader struct {
	recs EncodedRecords
	off  int
	rec  Record
}

// ReadRecord decodes the next record, or returns io.EOF.
func (r *EncodedRecordReader) ReadRecord() (*Record, error) {
	if r.off >= len(r.recs.b) {
		return nil, io.EOF
	}
	rec, n, err := rbParseRecordV2(r.recs.b[r.off:], true)
	if err != nil {
		return nil, err
	}
	r.off += n
	r.rec = Record{
		Offset: rec.offsetDelta,
		Time:   time.UnixMilli(r.recs.first + rec.tsDelta),
		Key:    NewBytes(rec.key),
		Value:  NewBytes(rec.value),
	}
	if rec.numHeaders > 0 {
		r.rec.Headers = make([]Header, 0, rec.numHeaders)
		h := rec.headers
		for i := 0; i < rec.numHeaders; i++ {
			var key, value []byte
			key, value, h = rbNextHeader(h)
			r.rec.Headers = append(r.rec.Headers, Header{Key: string(key), Value: value})
		}
	}
	return &r.rec, nil
}

func (r *EncodedRecordReader) encodedRecords() *EncodedRecords { return &r.recs }

// encodedRecordsReader is a RecordReader whose records are encoded already:
// an EncodedRecordReader, or a type embedding one (whose other methods,
// such as ProducerBatch, still apply).
type encodedRecordsReader interface {
	RecordReader
	encodedRecords() *EncodedRecords
}
