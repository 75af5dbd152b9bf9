package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"
	"slices"
	"time"

	"github.com/segmentio/kafka-go/compress"
)

// Layout of the header of a v2 record batch: byte offsets of each field.
const (
	rbV2BaseOffset      = 0  // int64
	rbV2BatchLength     = 8  // int32, bytes after this field
	rbV2LeaderEpoch     = 12 // int32
	rbV2Magic           = 16 // int8, 2
	rbV2CRC             = 17 // uint32, CRC-32C of everything from attributes on
	rbV2Attributes      = 21 // int16
	rbV2LastOffsetDelta = 23 // int32
	rbV2FirstTimestamp  = 27 // int64
	rbV2MaxTimestamp    = 35 // int64
	rbV2ProducerID      = 43 // int64
	rbV2ProducerEpoch   = 51 // int16
	rbV2BaseSequence    = 53 // int32
	rbV2RecordCount     = 57 // int32
	rbV2HeaderSize      = 61 // records follow (compressed as a whole if the codec says so)
)

// Layout of a legacy message: offset, size (of what follows), then the part
// covered by the CRC-32 (IEEE): magic, attributes, timestamp (v1 only), key,
// value.
const (
	rbLegacyOffset     = 0  // int64
	rbLegacySize       = 8  // int32
	rbLegacyCRC        = 12 // uint32
	rbLegacyMagic      = 16 // int8
	rbLegacyAttributes = 17 // int8
	rbLegacyTimestamp  = 18 // int64, v1 only
)

// WriteTo writes the records of rs to w as record batches, without a length
// prefix (the caller frames them). Version 2 writes one v2 record batch;
// versions 0 and 1 write a magic 1 message set, whose messages are wrapped in
// one compressed message when Attributes has a codec.
//
// The records' offsets are not kept: they are numbered from 0 within the
// batch, as the broker assigns the real ones. The batch header holds no
// producer id, epoch or sequence (all -1), unless Records is a
// ProducerRecords. Records of nested batches
// (*RecordBatch, *ControlBatch, *RecordStream...) are written as records of
// that one batch. Keys and values are closed once written.
//
// The error is ErrNoRecord if rs.Records is nil, or if it is empty for
// version 2 (as a v2 batch cannot be empty) or for a compressed legacy set.
// A set that ReadFrom found empty, and whose Records is still nil, writes
// nothing and no error.
func (rs *RecordSet) WriteTo(w io.Writer) (int64, error) {
	if rs.Records == nil {
		if rs.empty {
			return 0, nil
		}
		return 0, ErrNoRecord
	}
	if a, ok := w.(*wireAppender); ok {
		// Encoding a request: the batch is built in the request's own
		// buffer rather than in one of ours and then copied there.
		out := rbBuf{b: *a.p}
		start := len(out.b)
		err := rs.appendTo(&out, &a.tail)
		if err != nil {
			out.b = out.b[:start]
			a.tail = nil
		}
		*a.p = out.b
		return int64(len(out.b) - start + len(a.tail)), err
	}
	out := rbGetBuf()
	defer rbPutBuf(out)
	if err := rs.appendTo(out, nil); err != nil || len(out.b) == 0 {
		return 0, err
	}
	n, err := w.Write(out.b)
	return int64(n), err
}

// appendTo appends the encoding of rs to out (see WriteTo). With tail, a
// v2 batch of uncompressed encoded records leaves them out of out and sets
// *tail to them instead: the batch is out's bytes followed by *tail's.
func (rs *RecordSet) appendTo(out *rbBuf, tail *[]byte) error {
	switch rs.Version {
	case 0, 1:
		if _, ok := rs.Records.(ProducerRecords); ok {
			return errProducerLegacy
		}
		return rbWriteLegacy(out, 1, rs.Attributes, rs.Records)
	case 2:
		return rbWriteV2(out, rs.Attributes, rs.Records, tail)
	}
	return Errorf("unsupported record set version %d", rs.Version)
}

// rbClock gives the timestamp of records with a zero Time: the current time,
// read once per record set.
type rbClock struct{ now int64 }

func (c *rbClock) millis(t time.Time) int64 {
	if ms := rbMillis(t); ms != 0 {
		return ms
	}
	if c.now == 0 {
		c.now = time.Now().UnixMilli()
	}
	return c.now
}

// rbWriteV2 appends one v2 record batch holding every record of records.
// With tail, uncompressed encoded records are not appended: *tail is set
// to them, and the batch is out's new bytes followed by *tail's.
func rbWriteV2(out *rbBuf, attrs Attributes, records RecordReader, tail *[]byte) error {
	start := len(out.b)
	out.b = slices.Grow(out.b, rbV2HeaderSize)[:start+rbV2HeaderSize]

	codec := attrs.Compression()
	var count, first, maxTS int64
	var after []byte // the batch's bytes after out's (see tail)
	if e, ok := records.(encodedRecordsReader); ok {
		// Encoded when they were added: the bytes go as they are.
		recs := e.encodedRecords()
		if recs.n == 0 {
			return ErrNoRecord
		}
		count, first, maxTS = int64(recs.n), recs.first, recs.maxTS
		switch {
		case codec != 0:
			if err := rbCompress(codec, out, recs.b); err != nil {
				return err
			}
		case tail != nil:
			after = recs.b
		default:
			out.b = append(out.b, recs.b...)
		}
	} else {
		var err error
		if count, first, maxTS, err = rbEncodeRecordsV2(out, codec, records); err != nil {
			return err
		}
	}
	if len(out.b)+len(after)-start-rbV2BatchLength-4 > 1<<31-1 {
		return Errorf("record batch of %d bytes is too large", len(out.b)+len(after)-start)
	}

	producerID, producerEpoch, baseSequence := int64(-1), int16(-1), int32(-1)
	if p, ok := records.(ProducerRecords); ok {
		producerID, producerEpoch, baseSequence = p.ProducerBatch()
	}

	h := out.b[start:]
	be := binary.BigEndian
	be.PutUint64(h[rbV2BaseOffset:], 0)
	be.PutUint32(h[rbV2BatchLength:], uint32(len(h)+len(after)-rbV2BatchLength-4))
	be.PutUint32(h[rbV2LeaderEpoch:], 0xffffffff) // -1: unknown
	h[rbV2Magic] = 2
	be.PutUint16(h[rbV2Attributes:], uint16(attrs))
	be.PutUint32(h[rbV2LastOffsetDelta:], uint32(count-1))
	be.PutUint64(h[rbV2FirstTimestamp:], uint64(first))
	be.PutUint64(h[rbV2MaxTimestamp:], uint64(maxTS))
	be.PutUint64(h[rbV2ProducerID:], uint64(producerID)) // -1: not idempotent
	be.PutUint16(h[rbV2ProducerEpoch:], uint16(producerEpoch))
	be.PutUint32(h[rbV2BaseSequence:], uint32(baseSequence))
	be.PutUint32(h[rbV2RecordCount:], uint32(count))
	crc := rbCRC32C(h[rbV2Attributes:])
	if len(after) > 0 {
		crc = rbCRC32CUpdate(crc, after)
		*tail = after
	}
	be.PutUint32(h[rbV2CRC:], crc)
	return nil
}

// rbEncodeRecordsV2 appends the records of records to out as a v2 batch
// body, compressed when codec is set, and returns their count and first and
// greatest timestamps.
func rbEncodeRecordsV2(out *rbBuf, codec compress.Compression, records RecordReader) (count, first, maxTS int64, err error) {
	body := out
	if codec != 0 {
		// Records are encoded aside, then compressed after the header.
		body = rbGetBuf()
		defer rbPutBuf(body)
	}
	var clock rbClock
	for ; ; count++ {
		rec, err := records.ReadRecord()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, 0, 0, err
		}
		if count == 1<<31-1 {
			rbCloseRecord(rec)
			return 0, 0, 0, Errorf("too many records for one record batch")
		}
		ts := clock.millis(rec.Time)
		if count == 0 {
			first, maxTS = ts, ts
		}
		maxTS = max(maxTS, ts)
		body.b, err = rbAppendRecordV2(body.b, rec, ts-first, count)
		if err != nil {
			return 0, 0, 0, err
		}
	}
	if count == 0 {
		return 0, 0, 0, ErrNoRecord
	}
	if codec != 0 {
		if err := rbCompress(codec, out, body.b); err != nil {
			return 0, 0, 0, err
		}
	}
	return count, first, maxTS, nil
}

// rbVarintLen is the size of x as a zigzag varint.
func rbVarintLen(x int64) int {
	u := uint64(x<<1) ^ uint64(x>>63)
	return (bits.Len64(u|1) + 6) / 7
}

// rbBytesLen is the wire length of b: -1 for null.
func rbBytesLen(b Bytes) int {
	if b == nil {
		return -1
	}
	return b.Len()
}

// rbAppendRecordV2 appends rec as a v2 record and closes its key and value.
// The record's size is computed first so that its length prefix can be
// written before it, in one pass.
func rbAppendRecordV2(dst []byte, rec *Record, tsDelta, offsetDelta int64) ([]byte, error) {
	defer rbCloseRecord(rec)
	keyLen, valueLen := rbBytesLen(rec.Key), rbBytesLen(rec.Value)
	size := rbRecordV2Size(tsDelta, offsetDelta, keyLen, valueLen, rec.Headers)
	dst = rbAppendRecordV2Head(dst, size, tsDelta, offsetDelta, keyLen)
	dst, err := rbAppendFrom(dst, rec.Key, keyLen)
	if err != nil {
		return dst, err
	}
	dst = binary.AppendVarint(dst, int64(valueLen))
	if dst, err = rbAppendFrom(dst, rec.Value, valueLen); err != nil {
		return dst, err
	}
	return rbAppendHeaders(dst, rec.Headers), nil
}

// rbAppendRecordV2Bytes is rbAppendRecordV2 for a key and value held in
// memory (nil: null), whose size rbRecordV2Size gave.
func rbAppendRecordV2Bytes(dst []byte, size int, tsDelta, offsetDelta int64, key, value []byte, headers []Header) []byte {
	dst = rbAppendRecordV2Head(dst, size, tsDelta, offsetDelta, rbSliceLen(key))
	dst = append(dst, key...)
	dst = binary.AppendVarint(dst, int64(rbSliceLen(value)))
	dst = append(dst, value...)
	return rbAppendHeaders(dst, headers)
}

// rbSliceLen is the wire length of b: -1 for nil (null).
func rbSliceLen(b []byte) int {
	if b == nil {
		return -1
	}
	return len(b)
}

// rbRecordV2Size returns the size of a v2 record's body: everything after
// its length prefix.
func rbRecordV2Size(tsDelta, offsetDelta int64, keyLen, valueLen int, headers []Header) int {
	size := 1 + rbVarintLen(tsDelta) + rbVarintLen(offsetDelta) +
		rbVarintLen(int64(keyLen)) + max(keyLen, 0) +
		rbVarintLen(int64(valueLen)) + max(valueLen, 0) +
		rbVarintLen(int64(len(headers)))
	for i := range headers {
		h := &headers[i]
		size += rbVarintLen(int64(len(h.Key))) + len(h.Key)
		if h.Value == nil {
			size += rbVarintLen(-1)
		} else {
			size += rbVarintLen(int64(len(h.Value))) + len(h.Value)
		}
	}
	return size
}

// rbAppendRecordV2Head appends a v2 record's length (size, from
// rbRecordV2Size), attributes, deltas and key length, having grown dst for
// the whole record: what the key, the value's length, the value and the
// headers then append.
func rbAppendRecordV2Head(dst []byte, size int, tsDelta, offsetDelta int64, keyLen int) []byte {
	dst = slices.Grow(dst, rbVarintLen(int64(size))+size)
	dst = binary.AppendVarint(dst, int64(size))
	dst = append(dst, 0) // record attributes: none defined
	dst = binary.AppendVarint(dst, tsDelta)
	dst = binary.AppendVarint(dst, offsetDelta)
	return binary.AppendVarint(dst, int64(keyLen))
}

// rbAppendHeaders appends a v2 record's header count and headers.
func rbAppendHeaders(dst []byte, headers []Header) []byte {
	dst = binary.AppendVarint(dst, int64(len(headers)))
	for i := range headers {
		h := &headers[i]
		dst = binary.AppendVarint(dst, int64(len(h.Key)))
		dst = append(dst, h.Key...)
		if h.Value == nil {
			dst = binary.AppendVarint(dst, -1)
		} else {
			dst = binary.AppendVarint(dst, int64(len(h.Value)))
			dst = append(dst, h.Value...)
		}
	}
	return dst
}

// rbAppendFrom appends the n bytes that src holds (n < 0: none, null).
func rbAppendFrom(dst []byte, src Bytes, n int) ([]byte, error) {
	if n <= 0 {
		return dst, nil
	}
	if raw, ok := src.(rbRaw); ok {
		return append(dst, raw...), nil
	}
	if b, ok := src.(*rbBytes); ok && len(b.data) == n {
		dst = append(dst, b.data...)
		b.data = b.data[n:]
		return dst, nil
	}
	at := len(dst)
	dst = slices.Grow(dst, n)[:at+n]
	if _, err := io.ReadFull(src, dst[at:]); err != nil {
		return dst[:at], fmt.Errorf("reading %d bytes of a record key or value: %w", n, err)
	}
	return dst, nil
}

func rbCloseRecord(rec *Record) {
	rbClose(rec.Key)
	rbClose(rec.Value)
}

// rbWriteLegacy appends records as a message set of the given magic (0 or
// 1). With a codec in attrs the messages are encoded without it, compressed,
// and carried as the value of a single wrapper message.
func rbWriteLegacy(out *rbBuf, magic int8, attrs Attributes, records RecordReader) error {
	var clock rbClock
	codec := attrs.Compression()
	if codec == 0 {
		_, _, err := rbAppendMessages(out, magic, attrs, records, &clock)
		return err
	}

	inner := rbGetBuf()
	defer rbPutBuf(inner)
	count, maxTS, err := rbAppendMessages(inner, magic, attrs&^rbCodecMask, records, &clock)
	if err != nil {
		return err
	}
	if count == 0 {
		return ErrNoRecord
	}
	packed := rbGetBuf()
	defer rbPutBuf(packed)
	if err := rbCompress(codec, packed, inner.b); err != nil {
		return err
	}
	// Inner messages carry relative offsets 0..count-1; the wrapper carries
	// the offset of the last one, so that absolute = wrapper - (count-1) + relative.
	out.b, err = rbAppendMessage(out.b, magic, attrs, count-1, maxTS, nil, -1, rbRaw(packed.b), len(packed.b))
	return err
}

// rbAppendMessages appends each record of records as a legacy message,
// numbered from 0, and returns how many it wrote and their highest timestamp.
func rbAppendMessages(out *rbBuf, magic int8, attrs Attributes, records RecordReader, clock *rbClock) (count, maxTS int64, err error) {
	for ; ; count++ {
		rec, err := records.ReadRecord()
		if errors.Is(err, io.EOF) {
			return count, maxTS, nil
		}
		if err != nil {
			return count, maxTS, err
		}
		ts := clock.millis(rec.Time)
		if count == 0 || ts > maxTS {
			maxTS = ts
		}
		out.b, err = rbAppendMessage(out.b, magic, attrs, count, ts,
			rec.Key, rbBytesLen(rec.Key), rec.Value, rbBytesLen(rec.Value))
		rbCloseRecord(rec)
		if err != nil {
			return count, maxTS, err
		}
	}
}

// rbRaw passes an encoded payload (the compressed value of a wrapper
// message) where Bytes are expected; rbAppendFrom copies it whole.
type rbRaw []byte

func (rbRaw) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }
func (rbRaw) Close() error             { return nil }
func (r rbRaw) Len() int               { return len(r) }

// rbAppendMessage appends one legacy message.
func rbAppendMessage(dst []byte, magic int8, attrs Attributes, offset, ts int64, key Bytes, keyLen int, value Bytes, valueLen int) ([]byte, error) {
	start := len(dst)
	size := 4 + 1 + 1 + 4 + max(keyLen, 0) + 4 + max(valueLen, 0)
	if magic >= 1 {
		size += 8
	}
	if size > 1<<31-1 {
		return dst, Errorf("message of %d bytes is too large", size)
	}
	dst = slices.Grow(dst, 12+size)
	be := binary.BigEndian
	dst = be.AppendUint64(dst, uint64(offset))
	dst = be.AppendUint32(dst, uint32(size))
	dst = be.AppendUint32(dst, 0) // CRC, once the rest is known
	dst = append(dst, byte(magic), byte(attrs))
	if magic >= 1 {
		dst = be.AppendUint64(dst, uint64(ts))
	}
	var err error
	dst = be.AppendUint32(dst, uint32(int32(keyLen)))
	if dst, err = rbAppendFrom(dst, key, keyLen); err != nil {
		return dst[:start], err
	}
	dst = be.AppendUint32(dst, uint32(int32(valueLen)))
	if dst, err = rbAppendFrom(dst, value, valueLen); err != nil {
		return dst[:start], err
	}
	be.PutUint32(dst[start+rbLegacyCRC:], crc32.ChecksumIEEE(dst[start+rbLegacyMagic:]))
	return dst, nil
}
