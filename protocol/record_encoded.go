package protocol

import (
	"io"
	"slices"
	"time"
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
	e.b = rbAppendRecordV2Bytes(e.b, ts-e.first, int64(e.n), key, value, headers)
	e.n++
}

// Len returns the number of records.
func (e *EncodedRecords) Len() int { return int(e.n) }

// Size returns the size of the encoded records in bytes.
func (e *EncodedRecords) Size() int { return len(e.b) }

// Cap returns the bytes allocated for the records.
func (e *EncodedRecords) Cap() int { return cap(e.b) }

// Grow makes room for n more bytes of records without another allocation.
func (e *EncodedRecords) Grow(n int) { e.b = slices.Grow(e.b, n) }

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

// Each calls fn with the key and value of every record in order (nil for
// null), slices of e's bytes, valid as long as e is not appended to or
// reset. It returns an error if the bytes do not parse, which only bytes
// not written by Append can cause.
func (e *EncodedRecords) Each(fn func(i int, key, value []byte)) error {
	b := e.b
	for i := 0; len(b) > 0; i++ {
		rec, n, err := rbParseRecordV2(b, false)
		if err != nil {
			return err
		}
		fn(i, rec.key, rec.value)
		b = b[n:]
	}
	return nil
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
