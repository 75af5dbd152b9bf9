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
