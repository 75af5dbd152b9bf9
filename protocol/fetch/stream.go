package fetch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/segmentio/kafka-go/protocol"
)

// ReadResponseStream decodes a Fetch response of the given version from
// r, which is positioned right after the correlation ID of its frame, and
// hands the records of each partition to each as they arrive, instead of
// reading the response whole first: a consumer reading a partition holds
// one record at a time (see protocol.BatchStream).
//
// each gets the partition's fields that precede its records (the tagged
// fields of v12, which follow them, are only in the returned response);
// the stream is closed after each returns, skipping what it did not read.
// An error from each stops the decoding: ReadResponseStream returns it
// with the response decoded so far, and leaves r wherever it was.
//
// The Response returned has every field of every partition except their
// records (RecordSet is null). r must end where the frame does: the
// decoder reads no further than the fields it decodes.
func ReadResponseStream(r protocol.StreamSource, version int16, each func(topic string, p *ResponsePartition, records *protocol.BatchStream) error) (*Response, error) {
	if version < 0 || version > 12 {
		return nil, fmt.Errorf("fetch response v%d: %w", version, protocol.ErrNoVersionOverlap)
	}
	d := streamDecoder{r: r, flexible: version >= 12}
	res := &Response{}
	d.tags(nil) // response header v1
	if version >= 1 {
		res.ThrottleTimeMs = d.int32()
	}
	if version >= 7 {
		res.ErrorCode = d.int16()
		res.SessionID = d.int32()
	}
	topics, null := d.length(true)
	if !null && d.err == nil {
		res.Topics = make([]ResponseTopic, 0, min(topics, 16))
	}
	for i := 0; i < topics && d.err == nil; i++ {
		var t ResponseTopic
		t.Topic = d.string()
		parts, null := d.length(true)
		if !null && d.err == nil {
			t.Partitions = make([]ResponsePartition, 0, min(parts, 64))
		}
		for j := 0; j < parts && d.err == nil; j++ {
			p, err := d.partition(version, t.Topic, each)
			t.Partitions = append(t.Partitions, p)
			if err != nil {
				res.Topics = append(res.Topics, t)
				return res, err
			}
		}
		d.tags(nil)
		res.Topics = append(res.Topics, t)
	}
	d.tags(nil)
	if d.err != nil {
		return res, fmt.Errorf("decoding fetch response v%d: %w", version, d.err)
	}
	return res, nil
}

// partition decodes one partition, handing its records to each. The error
// returned is each's (or the stream's, closing the records); decoding
// errors stay in d.err.
func (d *streamDecoder) partition(version int16, topic string, each func(string, *ResponsePartition, *protocol.BatchStream) error) (ResponsePartition, error) {
	var p ResponsePartition
	p.Partition = d.int32()
	p.ErrorCode = d.int16()
	p.HighWatermark = d.int64()
	if version >= 4 {
		p.LastStableOffset = d.int64()
	}
	if version >= 5 {
		p.LogStartOffset = d.int64()
	}
	if version >= 4 {
		if n, null := d.length(true); !null {
			p.AbortedTransactions = make([]ResponseTransaction, 0, min(n, 64))
			for k := 0; k < n && d.err == nil; k++ {
				p.AbortedTransactions = append(p.AbortedTransactions, ResponseTransaction{ProducerID: d.int64(), FirstOffset: d.int64()})
				d.tags(nil)
			}
		}
	}
	if version >= 11 {
		p.PreferredReadReplica = d.int32()
	}
	if d.flexible {
		// The defaults of the tagged fields, which the broker leaves out
		// when it has nothing to say.
		p.DivergingEpoch = ResponseEpochEndOffset{Epoch: -1, EndOffset: -1}
		p.CurrentLeader = ResponseLeader{LeaderID: -1, LeaderEpoch: -1}
		p.SnapshotID = ResponseSnapshotID{EndOffset: -1, Epoch: -1}
	}
	size, null := d.length(true) // the records
	if d.err != nil {
		return p, nil
	}
	if !null {
		bs := protocol.NewBatchStream(d.r, size)
		err := each(topic, &p, bs)
		if cerr := bs.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return p, err
		}
	}
	d.tags(func(tag uint64, sub *streamDecoder) {
		switch tag {
		case 0:
			p.DivergingEpoch = ResponseEpochEndOffset{Epoch: sub.int32(), EndOffset: sub.int64()}
		case 1:
			p.CurrentLeader = ResponseLeader{LeaderID: sub.int32(), LeaderEpoch: sub.int32()}
		case 2:
			p.SnapshotID = ResponseSnapshotID{EndOffset: sub.int64(), Epoch: sub.int32()}
		}
	})
	return p, nil
}

// streamDecoder reads the fields of a response from a stream; the first
// error sticks, and every read after it returns zero.
type streamDecoder struct {
	r        protocol.StreamSource
	flexible bool
	err      error
	b        [8]byte
}

var errStreamLength = errors.New("impossible length")

// readErr records err, a failed read: the stream ended early, or failed.
func (d *streamDecoder) readErr(err error) {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	d.err = err
}

func (d *streamDecoder) fill(n int) []byte {
	if d.err != nil {
		return nil
	}
	b := d.b[:n]
	if _, err := io.ReadFull(d.r, b); err != nil {
		d.readErr(err)
		return nil
	}
	return b
}

func (d *streamDecoder) int16() int16 {
	if b := d.fill(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (d *streamDecoder) int32() int32 {
	if b := d.fill(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (d *streamDecoder) int64() int64 {
	if b := d.fill(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (d *streamDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(d.r)
	if err != nil {
		d.readErr(err)
	}
	return v
}

// length reads a length: compact (unsigned varint, plus one, zero for
// null) in flexible versions, else an int16 or int32 (-1 for null).
func (d *streamDecoder) length(wide bool) (n int, null bool) {
	var v int64
	switch {
	case d.flexible:
		u := d.uvarint()
		if u > 1<<31 {
			d.fail()
			return 0, false
		}
		v = int64(u) - 1
	case wide:
		v = int64(d.int32())
	default:
		v = int64(d.int16())
	}
	if d.err != nil {
		return 0, false
	}
	if v == -1 {
		return 0, true
	}
	if v < 0 {
		d.fail()
		return 0, false
	}
	return int(v), false
}

func (d *streamDecoder) fail() {
	if d.err == nil {
		d.err = errStreamLength
	}
}

func (d *streamDecoder) string() string {
	n, null := d.length(false)
	if null || d.err != nil {
		return ""
	}
	return string(d.bytes(n))
}

// bytes reads n bytes, growing the buffer as they arrive so that a length
// the stream does not hold costs no memory.
func (d *streamDecoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	var out []byte
	for len(out) < n {
		chunk := min(n-len(out), 4096)
		start := len(out)
		out = append(out, make([]byte, chunk)...)
		if _, err := io.ReadFull(d.r, out[start:]); err != nil {
			d.readErr(err)
			return nil
		}
	}
	return out
}

// tags reads a tagged-field section, in flexible versions only, handing
// each field to known (when not nil) as a decoder over its bytes; unknown
// tags, and the rest of a known one, are skipped.
func (d *streamDecoder) tags(known func(tag uint64, field *streamDecoder)) {
	if !d.flexible {
		return
	}
	n := d.uvarint()
	for i := uint64(0); i < n && d.err == nil; i++ {
		tag := d.uvarint()
		size := d.uvarint()
		if size > 1<<31 {
			d.fail()
			return
		}
		field := d.bytes(int(size))
		if d.err != nil || known == nil {
			continue
		}
		sub := streamDecoder{r: bytes.NewReader(field), flexible: true}
		known(tag, &sub)
		if sub.err != nil {
			d.err = fmt.Errorf("tagged field %d: %w", tag, sub.err)
		}
	}
}
