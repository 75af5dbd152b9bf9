package protocol

import (
	"bytes"
	"errors"
	"testing"
)

type producerRecords struct {
	RecordReader
	id    int64
	epoch int16
	seq   int32
}

func (p *producerRecords) ProducerBatch() (int64, int16, int32) { return p.id, p.epoch, p.seq }

// An idempotent producer's batch carries its producer ID, epoch and base
// sequence in the header, for every codec, and reads back as written.
func TestRecordSetWriteToProducerBatch(t *testing.T) {
	for _, codec := range append([]Attributes{0}, Gzip, Snappy, Lz4, Zstd) {
		t.Run(codec.String(), func(t *testing.T) {
			recs, want := sampleRecords(7)
			rs := RecordSet{Version: 2, Attributes: codec, Records: &producerRecords{
				RecordReader: NewRecordReader(recs...), id: 1<<40 + 3, epoch: 513, seq: 1<<31 - 2,
			}}
			var buf bytes.Buffer
			if _, err := rs.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
			var out RecordSet
			if _, err := out.ReadFrom(bytes.NewReader(buf.Bytes())); err != nil {
				t.Fatal(err)
			}
			batch := out.Records.(*RecordStream).Records[0].(*RecordBatch)
			if batch.ProducerID != 1<<40+3 || batch.ProducerEpoch != 513 || batch.BaseSequence != 1<<31-2 {
				t.Fatalf("producer fields %d/%d/%d", batch.ProducerID, batch.ProducerEpoch, batch.BaseSequence)
			}
			if batch.Attributes.Transactional() {
				t.Fatal("an idempotent batch is not transactional")
			}
			checkRecords(t, out.Records, want)
		})
	}
}

// The same records through a plain reader still say "no producer" (-1), so
// that nothing changes for RecordSets built as before.
func TestRecordSetWriteToPlainReaderHasNoProducer(t *testing.T) {
	recs, _ := sampleRecords(3)
	rs := RecordSet{Version: 2, Records: NewRecordReader(recs...)}
	var buf bytes.Buffer
	if _, err := rs.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	var out RecordSet
	if _, err := out.ReadFrom(&buf); err != nil {
		t.Fatal(err)
	}
	batch := out.Records.(*RecordStream).Records[0].(*RecordBatch)
	if batch.ProducerID != -1 || batch.ProducerEpoch != -1 || batch.BaseSequence != -1 {
		t.Fatalf("producer fields %d/%d/%d", batch.ProducerID, batch.ProducerEpoch, batch.BaseSequence)
	}
}

// A legacy message set has no room for the sequence: writing an idempotent
// producer's records in it is an error, never a silent loss of the
// guarantee.
func TestRecordSetWriteToProducerBatchLegacyFails(t *testing.T) {
	for _, version := range []int8{0, 1} {
		recs, _ := sampleRecords(2)
		rs := RecordSet{Version: version, Records: &producerRecords{RecordReader: NewRecordReader(recs...), id: 1}}
		var buf bytes.Buffer
		n, err := rs.WriteTo(&buf)
		if !errors.Is(err, errProducerLegacy) || n != 0 || buf.Len() != 0 {
			t.Fatalf("v%d: n=%d err=%v, wrote %d bytes", version, n, err, buf.Len())
		}
	}
}
