package protocol

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// A compacted batch keeps the offset range it was written with: its header
// says where it ends even when its last records are gone.
func TestRecordBatchLastOffsetDelta(t *testing.T) {
	gold := goldenV2(goldenT0.UnixMilli())
	binary.BigEndian.PutUint64(gold[rbV2BaseOffset:], 100)
	binary.BigEndian.PutUint32(gold[rbV2LastOffsetDelta:], 9) // offsets 102..109 compacted away
	binary.BigEndian.PutUint32(gold[rbV2CRC:], crc32cBitwise(gold[rbV2Attributes:]))

	var in bytes.Buffer
	in.Write(gold)
	marker := RecordSet{Version: 2, Attributes: Transactional | Control, Records: NewControlBatch(
		ControlRecord{Time: goldenT0, Version: 0, Type: 1, Data: commitMarker})}
	at := in.Len()
	if _, err := marker.WriteTo(&in); err != nil {
		t.Fatal(err)
	}
	b := in.Bytes()
	binary.BigEndian.PutUint64(b[at:], 110)
	binary.BigEndian.PutUint32(b[at+rbV2CRC:], crc32cBitwise(b[at+rbV2Attributes:]))

	rs := readSet(t, b)
	batches := rs.Records.(*RecordStream).Records
	if len(batches) != 2 {
		t.Fatalf("%d batches", len(batches))
	}
	rb, ok := batches[0].(*RecordBatch)
	if !ok {
		t.Fatalf("first batch is %T", batches[0])
	}
	if rb.LastOffsetDelta != 9 || rb.RecordCount != 2 || rb.LastOffset() != 109 {
		t.Errorf("record batch: last offset delta %d, count %d, last offset %d", rb.LastOffsetDelta, rb.RecordCount, rb.LastOffset())
	}
	cb, ok := batches[1].(*ControlBatch)
	if !ok {
		t.Fatalf("second batch is %T", batches[1])
	}
	if cb.LastOffsetDelta != 0 || cb.RecordCount != 1 || cb.LastOffset() != 110 {
		t.Errorf("control batch: last offset delta %d, count %d, last offset %d", cb.LastOffsetDelta, cb.RecordCount, cb.LastOffset())
	}
	rbDrain(&rs)
}

// Writing ignores the decoded header fields: the records are renumbered.
func TestRecordBatchLastOffsetDeltaNotWritten(t *testing.T) {
	src := RecordSet{Version: 2, Records: &RecordBatch{LastOffsetDelta: 50, RecordCount: 7, Records: NewRecordReader(
		Record{Time: goldenT0, Value: NewBytes([]byte("a"))},
		Record{Time: goldenT0, Value: NewBytes([]byte("b"))},
	)}}
	var out bytes.Buffer
	if _, err := src.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	b := out.Bytes()
	if d, n := binary.BigEndian.Uint32(b[rbV2LastOffsetDelta:]), binary.BigEndian.Uint32(b[rbV2RecordCount:]); d != 1 || n != 2 {
		t.Fatalf("written last offset delta %d, count %d", d, n)
	}
}
