package protocol

import (
	"encoding/binary"
	"time"
)

// ControlBatch is a v2 record batch with the Control attribute: its records
// are transaction markers (and other broker-written control records), not
// application data. LastOffsetDelta and RecordCount are as in RecordBatch.
type ControlBatch struct {
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

// LastOffset is the offset of the batch's last record (BaseOffset +
// LastOffsetDelta).
func (c *ControlBatch) LastOffset() int64 { return c.BaseOffset + int64(c.LastOffsetDelta) }

func (c *ControlBatch) ReadRecord() (*Record, error) { return c.Records.ReadRecord() }

// ReadControlRecord reads the next record of the batch and decodes it as a
// control record.
func (c *ControlBatch) ReadControlRecord() (*ControlRecord, error) {
	rec, err := c.ReadRecord()
	if err != nil {
		return nil, err
	}
	return ReadControlRecord(rec)
}

// Offset is the offset of the first record of the batch.
func (c *ControlBatch) Offset() int64 { return c.BaseOffset }

// Version is the message format of the batch, always 2.
func (c *ControlBatch) Version() int { return 2 }

// NewControlBatch returns a control batch holding records. Only Records is
// set; the header fields are left for the caller to fill in.
func NewControlBatch(records ...ControlRecord) *ControlBatch {
	recs := make([]Record, 0, len(records))
	for i := range records {
		recs = append(recs, records[i].Record())
	}
	return &ControlBatch{Records: NewRecordReader(recs...)}
}

// ControlRecord is a decoded control record. On the wire its key is the
// int16 Version followed by the int16 Type (0 abort, 1 commit for
// transaction markers); Data is the raw value.
type ControlRecord struct {
	Offset  int64
	Time    time.Time
	Version int16
	Type    int16
	Data    []byte
	Headers []Header
}

// ReadControlRecord decodes r as a control record. It consumes and closes
// r's key and value.
func ReadControlRecord(r *Record) (*ControlRecord, error) {
	key, err := rbReadAndClose(r.Key)
	if err != nil {
		rbClose(r.Value)
		return nil, err
	}
	value, err := rbReadAndClose(r.Value)
	if err != nil {
		return nil, err
	}
	switch {
	case key == nil:
		return nil, Error("invalid control record with nil key")
	case len(key) != 4:
		return nil, Errorf("invalid control record with key of size %d", len(key))
	}
	return &ControlRecord{
		Offset:  r.Offset,
		Time:    r.Time,
		Version: int16(binary.BigEndian.Uint16(key)),
		Type:    int16(binary.BigEndian.Uint16(key[2:])),
		Data:    value,
		Headers: r.Headers,
	}, nil
}

// Key returns the encoded key of the control record (version and type).
func (cr *ControlRecord) Key() Bytes {
	var k [4]byte
	binary.BigEndian.PutUint16(k[:], uint16(cr.Version))
	binary.BigEndian.PutUint16(k[2:], uint16(cr.Type))
	return NewBytes(k[:])
}

// Value returns Data as Bytes (nil when Data is nil).
func (cr *ControlRecord) Value() Bytes { return NewBytes(cr.Data) }

// Record returns cr as a plain record, with its key encoded.
func (cr *ControlRecord) Record() Record {
	r := Record{Key: cr.Key(), Value: cr.Value()}
	r.Offset, r.Time, r.Headers = cr.Offset, cr.Time, cr.Headers
	return r
}

func rbReadAndClose(b Bytes) ([]byte, error) {
	if b == nil {
		return nil, nil
	}
	defer b.Close()
	return ReadAll(b)
}

func rbClose(b Bytes) {
	if b != nil {
		b.Close()
	}
}
