package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

// commitMarker is the value of a transaction marker: version int16 and
// coordinator epoch int32.
var commitMarker = []byte{0, 0, 0, 0, 0, 9}

func TestControlRecordKeyValue(t *testing.T) {
	cr := ControlRecord{Offset: 4, Time: goldenT0, Version: 0x0102, Type: 0x0304, Data: []byte("d"),
		Headers: []Header{{Key: "h"}}}
	if k, _ := ReadAll(cr.Key()); !bytes.Equal(k, []byte{1, 2, 3, 4}) {
		t.Errorf("key %x", k)
	}
	if v, _ := ReadAll(cr.Value()); string(v) != "d" {
		t.Errorf("value %q", v)
	}
	if (&ControlRecord{}).Value() != nil {
		t.Error("nil Data gives a non-null value")
	}
	rec := cr.Record()
	back, err := ReadControlRecord(&rec)
	if err != nil {
		t.Fatal(err)
	}
	if back.Offset != 4 || !back.Time.Equal(goldenT0) || back.Version != 0x0102 || back.Type != 0x0304 ||
		string(back.Data) != "d" || len(back.Headers) != 1 {
		t.Errorf("%+v", back)
	}
}

func TestReadControlRecordErrors(t *testing.T) {
	if _, err := ReadControlRecord(&Record{Value: NewBytes([]byte("x"))}); err == nil || err.Error() != "invalid control record with nil key" {
		t.Errorf("nil key: %v", err)
	}
	if _, err := ReadControlRecord(&Record{Key: NewBytes([]byte{0, 0, 1})}); err == nil || err.Error() != "invalid control record with key of size 3" {
		t.Errorf("short key: %v", err)
	}
}

func TestNewControlBatch(t *testing.T) {
	batch := NewControlBatch(
		ControlRecord{Offset: 1, Version: 0, Type: 1, Data: commitMarker},
		ControlRecord{Offset: 2, Version: 0, Type: 0},
	)
	if batch.Attributes != 0 || batch.Offset() != 0 || batch.Version() != 2 {
		t.Errorf("%+v", batch)
	}
	for _, want := range []int16{1, 0} {
		cr, err := batch.ReadControlRecord()
		if err != nil {
			t.Fatal(err)
		}
		if cr.Type != want {
			t.Errorf("type %d, want %d", cr.Type, want)
		}
	}
	if _, err := batch.ReadControlRecord(); !errors.Is(err, io.EOF) {
		t.Errorf("after the last record: %v", err)
	}
}

// TestRecordSetControlBatch writes a transactional data batch and its commit
// marker, reads them back, and checks that the stream hides the marker while
// the batch list exposes it.
func TestRecordSetControlBatch(t *testing.T) {
	var in bytes.Buffer
	data := RecordSet{Version: 2, Attributes: Transactional, Records: NewRecordReader(
		Record{Time: goldenT0, Value: NewBytes([]byte("a"))},
		Record{Time: goldenT0, Value: NewBytes([]byte("b"))},
	)}
	if _, err := data.WriteTo(&in); err != nil {
		t.Fatal(err)
	}
	marker := RecordSet{Version: 2, Attributes: Transactional | Control, Records: NewControlBatch(
		ControlRecord{Time: goldenT0, Version: 0, Type: 1, Data: commitMarker})}
	at := in.Len()
	if _, err := marker.WriteTo(&in); err != nil {
		t.Fatal(err)
	}
	b := in.Bytes()
	binary.BigEndian.PutUint64(b[at:], 2) // the marker follows the data
	binary.BigEndian.PutUint64(b[at+43:], 77)
	binary.BigEndian.PutUint32(b[at+17:], crc32cBitwise(b[at+21:]))

	rs := readSet(t, b)
	if !rs.Attributes.Control() || !rs.Attributes.Transactional() {
		t.Errorf("attributes %v", rs.Attributes)
	}
	batches := rs.Records.(*RecordStream).Records
	if len(batches) != 2 {
		t.Fatalf("%d batches", len(batches))
	}
	if rb, ok := batches[0].(*RecordBatch); !ok || !rb.Attributes.Transactional() || rb.Attributes.Control() {
		t.Fatalf("first batch %#v", batches[0])
	}
	cb, ok := batches[1].(*ControlBatch)
	if !ok {
		t.Fatalf("second batch is %T", batches[1])
	}
	if cb.BaseOffset != 2 || cb.ProducerID != 77 || !cb.Attributes.Control() || cb.Offset() != 2 {
		t.Errorf("control batch %+v", cb)
	}
	checkRecords(t, rs.Records, []testRecord{
		{Offset: 0, Time: goldenT0, Key: "<nil>", Value: "a"},
		{Offset: 1, Time: goldenT0, Key: "<nil>", Value: "b"},
	})
	cr, err := cb.ReadControlRecord()
	if err != nil {
		t.Fatal(err)
	}
	if cr.Offset != 2 || cr.Type != 1 || cr.Version != 0 || !bytes.Equal(cr.Data, commitMarker) || !cr.Time.Equal(goldenT0) {
		t.Errorf("control record %+v", cr)
	}
	if _, err := cb.ReadControlRecord(); !errors.Is(err, io.EOF) {
		t.Errorf("after the marker: %v", err)
	}
}

func TestAttributesString(t *testing.T) {
	tests := map[Attributes]string{
		0:                                "uncompressed",
		Gzip:                             "gzip",
		Zstd | Transactional:             "zstd+transactional",
		Snappy | Transactional | Control: "snappy+transactional+control",
	}
	for a, want := range tests {
		if got := a.String(); got != want {
			t.Errorf("%d: %q, want %q", a, got, want)
		}
	}
	if (Lz4|Control).Compression() != 3 || !(Lz4 | Control).Control() || (Lz4 | Control).Transactional() {
		t.Error("Lz4|Control accessors")
	}
}
