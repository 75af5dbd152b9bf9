package logshape

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/segmentio/kafka-go/protocol"
)

// Layout of a v2 record batch header (Kafka's DefaultRecordBatch).
const (
	hdrBaseOffset      = 0
	hdrLength          = 8
	hdrCRC             = 17
	hdrAttributes      = 21
	hdrLastOffsetDelta = 23
	hdrFirstTimestamp  = 27
	hdrMaxTimestamp    = 35
	hdrProducerID      = 43
	hdrProducerEpoch   = 51
	hdrBaseSequence    = 53
	hdrRecordCount     = 57
	hdrSize            = 61
)

// Batch attributes beside the codec (the low three bits).
const (
	attrLogAppendTime = 1 << 3
	attrTransactional = 1 << 4
	attrControl       = 1 << 5
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Encode returns the bytes of b as a broker stores and serves them.
//
// The batch is first written whole, one record per offset from Base to
// Last (a placeholder where compaction removed one), by the protocol
// package's encoder; the placeholders' bytes are then cut out, as the log
// cleaner leaves the surviving records with their offset and timestamp
// deltas, and the header gets the batch's producer, flags, record count
// and last offset. A compressed batch is compressed after the cut, as the
// cleaner writes its survivors into a new compressed batch.
func Encode(b Batch) ([]byte, error) {
	full := make([]protocol.Record, 0, b.Last-b.Base+1)
	keep := make([]bool, 0, b.Last-b.Base+1)
	first := baseTime
	if len(b.Records) != 0 {
		first = b.Records[0].Time
	}
	ri := 0
	for off := b.Base; off <= b.Last; off++ {
		if ri < len(b.Records) && b.Records[ri].Offset == off {
			full = append(full, b.record(b.Records[ri]))
			keep = append(keep, true)
			ri++
			continue
		}
		full = append(full, protocol.Record{Offset: off, Time: first})
		keep = append(keep, false)
	}
	if ri != len(b.Records) {
		return nil, fmt.Errorf("logshape: batch %d..%d holds records out of its range", b.Base, b.Last)
	}

	var buf bytes.Buffer
	rs := protocol.RecordSet{Version: 2, Records: protocol.NewRecordReader(full...)}
	if _, err := rs.WriteTo(&buf); err != nil {
		return nil, err
	}
	enc := buf.Bytes()
	if len(enc) < hdrSize {
		return nil, errors.New("logshape: the encoder wrote no batch header")
	}
	hdr, body := enc[:hdrSize], enc[hdrSize:]

	// Cut the placeholders: each record is a varint length and its bytes.
	var kept []byte
	for i := range keep {
		n, k := binary.Varint(body)
		if k <= 0 || int(n) > len(body)-k {
			return nil, errors.New("logshape: cannot walk the encoded records")
		}
		if keep[i] {
			kept = append(kept, body[:k+int(n)]...)
		}
		body = body[k+int(n):]
	}
	if len(body) != 0 {
		return nil, errors.New("logshape: bytes left after the encoded records")
	}
	// The cleaner writes a batch it emptied as a bare header, uncompressed.
	if codec := b.Codec.Codec(); codec != nil && len(b.Records) != 0 {
		var z bytes.Buffer
		w := codec.NewWriter(&z)
		if _, err := w.Write(kept); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		kept = z.Bytes()
	}

	out := append(append([]byte(nil), hdr...), kept...)
	be := binary.BigEndian
	attrs := uint16(0)
	if len(b.Records) != 0 {
		attrs = uint16(b.Codec) & 7
	}
	if !b.AppendTime.IsZero() {
		attrs |= attrLogAppendTime
		be.PutUint64(out[hdrMaxTimestamp:], uint64(b.AppendTime.UnixMilli()))
	}
	if b.Transactional {
		attrs |= attrTransactional
	}
	if b.Marker != NoMarker {
		attrs |= attrControl
	}
	be.PutUint64(out[hdrBaseOffset:], uint64(b.Base))
	be.PutUint32(out[hdrLength:], uint32(len(out)-hdrLength-4))
	be.PutUint16(out[hdrAttributes:], attrs)
	be.PutUint32(out[hdrLastOffsetDelta:], uint32(b.Last-b.Base))
	be.PutUint64(out[hdrProducerID:], uint64(b.ProducerID))
	be.PutUint16(out[hdrProducerEpoch:], uint16(b.ProducerEpoch))
	seq := int32(-1)
	if b.ProducerID != NoProducer {
		seq = int32(b.Base) // any sequence: readers do not look at it
	}
	be.PutUint32(out[hdrBaseSequence:], uint32(seq))
	be.PutUint32(out[hdrRecordCount:], uint32(len(b.Records)))
	be.PutUint32(out[hdrCRC:], crc32.Checksum(out[hdrAttributes:], castagnoli))
	return out, nil
}

// record is r as the protocol package writes it: a control batch's record
// is its marker.
func (b Batch) record(r Record) protocol.Record {
	if b.Marker != NoMarker {
		typ := int16(0) // abort
		if b.Marker == Commit {
			typ = 1
		}
		// The value: version 0 and the coordinator epoch, as Kafka writes it.
		cr := protocol.ControlRecord{Offset: r.Offset, Time: r.Time, Type: typ, Data: []byte{0, 0, 0, 0, 0, 7}}
		return cr.Record()
	}
	return protocol.Record{
		Offset:  r.Offset,
		Time:    r.Time,
		Key:     protocol.NewBytes(r.Key),
		Value:   protocol.NewBytes(r.Value),
		Headers: r.Headers,
	}
}

// encode encodes every batch once.
func (l *Log) encode() error {
	l.once.Do(func() {
		if l.err = l.check(); l.err != nil {
			return
		}
		l.enc = make([][]byte, len(l.Batches))
		for i, b := range l.Batches {
			if l.enc[i], l.err = Encode(b); l.err != nil {
				return
			}
		}
	})
	return l.err
}

// Bytes is the whole log as the broker stores it, every batch in turn.
func (l *Log) Bytes() ([]byte, error) {
	if err := l.encode(); err != nil {
		return nil, err
	}
	return bytes.Join(l.enc, nil), nil
}
