package protocol

import "time"

// RecordFields is a record whose key and value are windows on the buffers
// of the batch it was read from, for consumers that copy them out at once
// (kafka-go's Reader does): reading them this way makes no Bytes per key
// and value and keeps no reference count per record.
type RecordFields struct {
	Offset int64
	Time   time.Time
	// Key and Value are nil when null. They are valid until the next read
	// from the same reader, and must not be written to.
	Key, Value []byte
	// Headers are as in Record: the caller may keep them.
	Headers []Header
}

// RecordFieldsReader is implemented by the record readers of decoded v2
// batches (the Records of a *RecordBatch from RecordSet.ReadFrom or a
// fetch response). ReadRecordFields and ReadRecord may be mixed; both
// return io.EOF after the last record.
type RecordFieldsReader interface {
	ReadRecordFields(f *RecordFields) error
}

// ReadRecordFields sets f to the next record.
func (r *rbV2Reader) ReadRecordFields(f *RecordFields) error {
	rec, err := r.next()
	if err != nil {
		return err
	}
	ts := r.firstTS + rec.tsDelta
	if r.logTime {
		ts = r.maxTS
	}
	*f = RecordFields{Offset: r.base + rec.offsetDelta, Time: time.UnixMilli(ts), Key: rec.key, Value: rec.value}
	if rec.numHeaders != 0 {
		f.Headers = r.nextHeaders(rec)
	}
	return nil
}

// RecordFieldsKeeper is implemented by the record readers of decoded v2
// batches. KeepFields, called before the first read, asks for keys and
// values the caller may keep: valid after later reads and the caller's to
// write to, each within its own length. It reports whether the reader
// does so; a compressed batch not read yet does (it is decompressed into
// memory of its own, which the keys and values then share, instead of a
// recycled buffer), others do not (their fields are windows on buffers
// that are reused), and their fields must be copied as before.
//
// A key or value kept holds the memory of its whole decompressed batch.
type RecordFieldsKeeper interface {
	KeepFields() bool
}

// KeepFields implements RecordFieldsKeeper.
func (r *rbV2Reader) KeepFields() bool {
	if r.codec == 0 {
		return false // decompressed already, or never compressed
	}
	r.keep = true
	return true
}
