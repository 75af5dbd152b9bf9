package protocol

import (
	"bytes"
	"io"
)

// RawRecordSet is a record set already encoded: the raw record batches (as
// RecordSet.WriteTo writes them) are copied as they are.
type RawRecordSet struct {
	// Reader yields the encoded record batches.
	Reader io.Reader
}

// ReadFrom reads r to its end and keeps its bytes unchanged, after checking
// that they decode as a record set (the error is then RecordSet.ReadFrom's).
func (rrs *RawRecordSet) ReadFrom(r io.Reader) (int64, error) {
	var raw bytes.Buffer
	n, err := raw.ReadFrom(r)
	if err != nil {
		return 0, err
	}
	var rs RecordSet
	if _, err := rs.ReadFrom(bytes.NewReader(raw.Bytes())); err != nil {
		return 0, err
	}
	rbDrain(&rs)
	*rrs = RawRecordSet{Reader: &raw}
	return n, nil
}

// WriteTo copies the bytes of rrs.Reader to w.
func (rrs *RawRecordSet) WriteTo(w io.Writer) (int64, error) {
	if rrs.Reader == nil {
		return 0, ErrNoRecord
	}
	return io.Copy(w, rrs.Reader)
}

// rbDrain reads every record of every batch of a decoded set, control
// batches included, and closes them, so that its buffers go back to the pool.
func rbDrain(rs *RecordSet) {
	stream, ok := rs.Records.(*RecordStream)
	if !ok {
		return
	}
	for _, batch := range stream.Records {
		for {
			rec, err := batch.ReadRecord()
			if err != nil {
				break
			}
			rbCloseRecord(rec)
		}
	}
}
