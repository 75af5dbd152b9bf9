package protocol

import (
	"errors"
	"io"
)

// RecordBatch is a message format v2 record batch and its header fields.
//
// LastOffsetDelta and RecordCount come from the header of a decoded batch
// (they are ignored when writing): the batch covers offsets BaseOffset to
// LastOffset() even when compaction removed some of its records, so a
// consumer can skip a batch that ends before its fetch offset without
// reading its records.
type RecordBatch struct {
	Attributes           Attributes
	PartitionLeaderEpoch int32
	BaseOffset           int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	LastOffsetDelta      int32
	RecordCount          int32
	Records              RecordReader
}

// LastOffset is the offset of the last record the batch was written with
// (BaseOffset + LastOffsetDelta).
func (r *RecordBatch) LastOffset() int64 { return r.BaseOffset + int64(r.LastOffsetDelta) }

func (r *RecordBatch) ReadRecord() (*Record, error) { return r.Records.ReadRecord() }

// Offset is the offset of the first record of the batch.
func (r *RecordBatch) Offset() int64 { return r.BaseOffset }

// Version is the message format of the batch, always 2.
func (r *RecordBatch) Version() int { return 2 }

// MessageSet is a run of legacy (v0 or v1) messages, or the content of one
// compressed legacy wrapper message.
type MessageSet struct {
	Attributes Attributes
	BaseOffset int64
	Records    RecordReader
}

func (m *MessageSet) ReadRecord() (*Record, error) { return m.Records.ReadRecord() }

// Offset is the offset of the first message of the set.
func (m *MessageSet) Offset() int64 { return m.BaseOffset }

// Version is the legacy message format, reported as 1.
func (m *MessageSet) Version() int { return 1 }

// NewRecordReader returns a reader over a copy of records.
func NewRecordReader(records ...Record) RecordReader {
	if len(records) == 0 {
		return rbNoRecords{}
	}
	return &rbSliceReader{records: append([]Record(nil), records...)}
}

// MultiRecordReader reads the records of each of batches in turn.
func MultiRecordReader(batches ...RecordReader) RecordReader {
	if len(batches) == 0 {
		return rbNoRecords{}
	}
	if len(batches) == 1 {
		return batches[0]
	}
	return &rbChainReader{readers: append([]RecordReader(nil), batches...)}
}

type rbNoRecords struct{}

func (rbNoRecords) ReadRecord() (*Record, error) { return nil, io.EOF }

type rbSliceReader struct {
	records []Record
	next    int
}

func (r *rbSliceReader) ReadRecord() (*Record, error) {
	if r.next >= len(r.records) {
		return nil, io.EOF
	}
	r.next++
	return &r.records[r.next-1], nil
}

type rbChainReader struct {
	readers []RecordReader
}

func (c *rbChainReader) ReadRecord() (*Record, error) {
	for len(c.readers) != 0 {
		rec, err := c.readers[0].ReadRecord()
		if !errors.Is(err, io.EOF) {
			return rec, err
		}
		c.readers = c.readers[1:]
	}
	return nil, io.EOF
}

// RecordStream reads the records of a sequence of batches, as decoded by
// RecordSet.ReadFrom. Records of control batches (*ControlBatch) are not
// returned: type-assert the elements of Records to see them.
type RecordStream struct {
	Records []RecordReader
	index   int
}

func (s *RecordStream) ReadRecord() (*Record, error) {
	for ; s.index >= 0 && s.index < len(s.Records); s.index++ {
		batch := s.Records[s.index]
		if _, control := batch.(*ControlBatch); control {
			continue
		}
		rec, err := batch.ReadRecord()
		if !errors.Is(err, io.EOF) {
			return rec, err
		}
	}
	return nil, io.EOF
}
