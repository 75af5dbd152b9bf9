package protocol

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"strings"
	"time"
)

// ReadFrom reads r to its end: the record batches of one partition, without
// the length prefix that frames them in a Fetch response or Produce request.
// It accepts any sequence of legacy message sets (magic 0 and 1, compressed
// or not) and v2 record batches, checks every CRC, decompresses what is
// compressed, and sets rs.Records to a *RecordStream of *RecordBatch,
// *ControlBatch and *MessageSet, one per batch (one per run of uncompressed
// legacy messages).
//
// A fetch may end with a partial batch (the broker cuts responses at a byte
// limit): the batches before it are returned without error. If no batch
// could be read, the error says why: io.ErrUnexpectedEOF when the only batch
// is partial, or the corruption found (a CRC mismatch, an impossible length,
// an unknown format). Decoding stops at the first bad batch, keeping those
// before it, so that consumers make progress up to it.
//
// Empty input leaves rs.Records nil.
func (rs *RecordSet) ReadFrom(r io.Reader) (int64, error) {
	*rs = RecordSet{}
	in := rbGetBuf()
	rbPresize(in, r)
	err := rbFill(in, r)
	n := int64(len(in.b))
	if err != nil || n == 0 {
		rbPutBuf(in)
		return n, err
	}
	src := rbNewShared(in)
	defer src.release()

	var d rbSetDecoder
	d.decode(src, in.b)
	if len(d.batches) == 0 {
		return n, d.err
	}
	rs.Version = d.version
	rs.Attributes = d.attrs
	rs.Records = &RecordStream{Records: d.batches}
	return n, nil
}

// rbPresize sizes p for what r says it holds, so that reading it does not go
// through a series of doublings. The size is only a hint: rbFill still grows
// the buffer as data actually arrives.
func rbPresize(p *rbBuf, r io.Reader) {
	want := int64(0)
	switch v := r.(type) {
	case interface{ Len() int }:
		want = int64(v.Len())
	case *io.LimitedReader:
		want = v.N
	}
	// One spare byte so that reading the final EOF does not grow the buffer.
	want = min(want, 64<<20) + 1
	if want > int64(cap(p.b)) {
		p.b = slices.Grow(p.b, int(want))
	}
}

type rbSetDecoder struct {
	batches []RecordReader
	version int8
	attrs   Attributes
	err     error
}

func (d *rbSetDecoder) add(batch RecordReader, magic int8, attrs Attributes) {
	d.batches = append(d.batches, batch)
	d.version = max(d.version, magic)
	d.attrs |= attrs
}

func (d *rbSetDecoder) decode(src *rbShared, all []byte) {
	// Consecutive uncompressed legacy messages form one MessageSet.
	var run *rbLegacyReader
	var runSet *MessageSet
	runStart := 0

	for pos := 0; pos < len(all); {
		b := all[pos:]
		if len(b) <= rbV2Magic {
			d.err = io.ErrUnexpectedEOF
			return
		}
		var size int
		var err error
		switch magic := int8(b[rbV2Magic]); magic {
		case 2:
			run = nil
			size, err = d.decodeV2(src, b)
		case 0, 1:
			var m rbMessage
			if m, size, err = rbParseMessage(b); err != nil {
				break
			}
			if Attributes(m.attrs)&rbCodecMask != 0 {
				run = nil
				err = d.decodeWrapper(m)
				break
			}
			if run == nil {
				src.retain()
				run = &rbLegacyReader{owner: src}
				runSet = &MessageSet{BaseOffset: m.offset, Records: run}
				runStart = pos
				d.add(runSet, magic, 0)
			}
			run.data = all[runStart : pos+size]
			run.total++
			runSet.Attributes |= Attributes(m.attrs)
			d.attrs |= Attributes(m.attrs)
			d.version = max(d.version, magic)
		default:
			err = Errorf("unsupported message version %d", magic)
		}
		if err != nil {
			d.err = err
			return
		}
		pos += size
	}
}

// decodeV2 decodes the v2 record batch at the start of b and returns its size.
func (d *rbSetDecoder) decodeV2(src *rbShared, b []byte) (int, error) {
	be := binary.BigEndian
	if len(b) < rbV2LeaderEpoch {
		return 0, io.ErrUnexpectedEOF
	}
	length := int64(int32(be.Uint32(b[rbV2BatchLength:])))
	if length < rbV2HeaderSize-rbV2LeaderEpoch {
		return 0, Errorf("record batch length %d is shorter than a batch header", length)
	}
	if length > int64(len(b)-rbV2LeaderEpoch) {
		return 0, io.ErrUnexpectedEOF
	}
	size := rbV2LeaderEpoch + int(length)
	batch := b[:size]
	if sum, want := rbCRC32C(batch[rbV2Attributes:]), be.Uint32(batch[rbV2CRC:]); sum != want {
		return 0, Errorf("crc32 checksum mismatch in record batch (computed=%d found=%d)", sum, want)
	}
	attrs := Attributes(int16(be.Uint16(batch[rbV2Attributes:])))
	count := int32(be.Uint32(batch[rbV2RecordCount:]))

	owner := src
	records := batch[rbV2HeaderSize:]
	if codec := attrs.Compression(); codec != 0 {
		out, err := rbDecompress(codec, records)
		if err != nil {
			return 0, err
		}
		owner = rbNewShared(out) // this reference belongs to the reader
		records = out.b
	} else {
		src.retain()
	}

	r := &rbV2Reader{
		owner:   owner,
		data:    records,
		base:    int64(be.Uint64(batch[rbV2BaseOffset:])),
		firstTS: int64(be.Uint64(batch[rbV2FirstTimestamp:])),
		maxTS:   int64(be.Uint64(batch[rbV2MaxTimestamp:])),
		logTime: attrs&rbLogAppendTime != 0,
	}
	if err := r.scan(count); err != nil {
		owner.release()
		return 0, err
	}

	leaderEpoch := int32(be.Uint32(batch[rbV2LeaderEpoch:]))
	producerID := int64(be.Uint64(batch[rbV2ProducerID:]))
	producerEpoch := int16(be.Uint16(batch[rbV2ProducerEpoch:]))
	baseSequence := int32(be.Uint32(batch[rbV2BaseSequence:]))
	if attrs.Control() {
		d.add(&ControlBatch{
			Attributes:           attrs,
			PartitionLeaderEpoch: leaderEpoch,
			BaseOffset:           r.base,
			ProducerID:           producerID,
			ProducerEpoch:        producerEpoch,
			BaseSequence:         baseSequence,
			Records:              r,
		}, 2, attrs)
	} else {
		d.add(&RecordBatch{
			Attributes:           attrs,
			PartitionLeaderEpoch: leaderEpoch,
			BaseOffset:           r.base,
			ProducerID:           producerID,
			ProducerEpoch:        producerEpoch,
			BaseSequence:         baseSequence,
			Records:              r,
		}, 2, attrs)
	}
	return size, nil
}

// decodeWrapper decodes the compressed message set carried by the legacy
// wrapper message m.
func (d *rbSetDecoder) decodeWrapper(m rbMessage) error {
	attrs := Attributes(m.attrs)
	set := &MessageSet{Attributes: attrs, BaseOffset: m.offset, Records: rbNoRecords{}}
	if m.value == nil {
		d.add(set, m.magic, attrs)
		return nil
	}
	out, err := rbDecompress(attrs.Compression(), m.value)
	if err != nil {
		return err
	}
	r := &rbLegacyReader{owner: rbNewShared(out), data: out.b}
	var first, last int64
	for b := out.b; len(b) != 0; r.total++ {
		if len(b) <= rbLegacyMagic {
			r.owner.release()
			return Errorf("compressed message set ends with a partial message")
		}
		inner, size, err := rbParseMessage(b)
		if err == nil && Attributes(inner.attrs)&rbCodecMask != 0 {
			err = Errorf("compressed message nested in a compressed message")
		}
		if err != nil {
			r.owner.release()
			return fmt.Errorf("in compressed message set: %w", err)
		}
		if r.total == 0 {
			first = inner.offset
		}
		last = inner.offset
		b = b[size:]
	}
	// From magic 1 on, inner messages are numbered 0, 1, ... and the wrapper
	// has the absolute offset of the last one. Magic 0 inner messages have
	// absolute offsets already, and so do those of writers that leave the
	// wrapper's offset at 0.
	if m.magic >= 1 && m.offset >= last {
		r.adjust = m.offset - last
	}
	if m.magic >= 1 && attrs&rbLogAppendTime != 0 {
		r.wrapperTime, r.useWrapperTime = m.ts, true
	}
	set.BaseOffset = first + r.adjust
	set.Records = r
	d.add(set, m.magic, attrs)
	return nil
}

// rbCursor reads the fields of a record; the first error sticks and makes
// every later read return zero values.
type rbCursor struct {
	b   []byte
	err error
}

func (c *rbCursor) fail(format string, args ...any) {
	if c.err == nil {
		c.err = Errorf(format, args...)
	}
	c.b = nil
}

func (c *rbCursor) varint() int64 {
	if c.err != nil {
		return 0
	}
	v, n := binary.Varint(c.b)
	if n <= 0 {
		c.fail("malformed varint in record")
		return 0
	}
	c.b = c.b[n:]
	return v
}

func (c *rbCursor) take(n int64) []byte {
	if c.err != nil {
		return nil
	}
	if n < 0 || n > int64(len(c.b)) {
		c.fail("record field of %d bytes overruns its record (%d bytes left)", n, len(c.b))
		return nil
	}
	v := c.b[:n:n]
	c.b = c.b[n:]
	return v
}

// nullable reads varint-length bytes; nil means null.
func (c *rbCursor) nullable() []byte {
	n := c.varint()
	if n == -1 || c.err != nil {
		return nil
	}
	return c.take(n)
}

// rbRecordV2 is one record of a v2 batch, its fields still in the batch.
type rbRecordV2 struct {
	tsDelta     int64
	offsetDelta int64
	key, value  []byte // nil when null
	headers     []byte // the encoded headers
	numHeaders  int
	keyBytes    int // total size of the header keys
	valueBytes  int // total size of the header values
}

// rbParseRecordV2 parses the record at the start of b and returns its size.
func rbParseRecordV2(b []byte) (rec rbRecordV2, n int, err error) {
	length, k := binary.Varint(b)
	if k <= 0 {
		return rec, 0, Errorf("malformed record length")
	}
	if length < 0 || length > int64(len(b)-k) {
		return rec, 0, Errorf("record length %d overruns its batch (%d bytes left)", length, len(b)-k)
	}
	n = k + int(length)
	c := rbCursor{b: b[k:n]}
	c.take(1) // record attributes: none defined
	rec.tsDelta = c.varint()
	rec.offsetDelta = c.varint()
	rec.key = c.nullable()
	rec.value = c.nullable()
	count := c.varint()
	if c.err == nil && (count < 0 || count > int64(len(c.b)/2)) {
		c.fail("record claims %d headers in %d bytes", count, len(c.b))
	}
	headers := c.b
	for i := int64(0); i < count && c.err == nil; i++ {
		key := c.take(c.varint())
		value := c.nullable()
		rec.keyBytes += len(key)
		rec.valueBytes += len(value)
	}
	rec.numHeaders = int(count)
	rec.headers = headers[:len(headers)-len(c.b)]
	if c.err == nil && len(c.b) != 0 {
		c.fail("%d bytes left over at the end of a record", len(c.b))
	}
	return rec, n, c.err
}

// rbV2Reader reads the records of a v2 batch, validated beforehand by scan.
type rbV2Reader struct {
	owner   *rbShared // holds data; released once every record was read
	data    []byte    // records not yet read
	base    int64
	firstTS int64
	maxTS   int64
	logTime bool // LogAppendTime: every record has the batch's max timestamp

	total, left int
	numHeaders  int
	keyBytes    int
	valueBytes  int

	// Allocated once per batch on the first read, never per record.
	slots   []rbBytes // key and value of each record
	headers []Header
	hkeys   string
	hvalues []byte

	rec Record
}

// scan checks that data holds exactly count well-formed records, and sizes
// what reading them will need.
func (r *rbV2Reader) scan(count int32) error {
	// A record takes 7 bytes at least, which bounds count before anything
	// is sized from it.
	if count < 0 || int64(count) > int64(len(r.data)/7) {
		return Errorf("record batch claims %d records in %d bytes", count, len(r.data))
	}
	b := r.data
	for i := int32(0); i < count; i++ {
		rec, n, err := rbParseRecordV2(b)
		if err != nil {
			return fmt.Errorf("record %d of batch: %w", i, err)
		}
		r.numHeaders += rec.numHeaders
		r.keyBytes += rec.keyBytes
		r.valueBytes += rec.valueBytes
		b = b[n:]
	}
	if len(b) != 0 {
		return Errorf("record batch has %d bytes after its %d records", len(b), count)
	}
	r.total, r.left = int(count), int(count)
	return nil
}

func (r *rbV2Reader) ReadRecord() (*Record, error) {
	if r.left <= 0 {
		r.finish()
		return nil, io.EOF
	}
	if r.slots == nil {
		r.allocate()
	}
	rec, n, err := rbParseRecordV2(r.data)
	if err != nil { // cannot happen after scan; keep the reader safe anyway
		r.finish()
		return nil, err
	}
	r.data = r.data[n:]
	i := r.total - r.left
	r.left--

	ts := r.firstTS + rec.tsDelta
	if r.logTime {
		ts = r.maxTS
	}
	r.rec = Record{
		Offset: r.base + rec.offsetDelta,
		Time:   time.UnixMilli(ts),
		Key:    r.slot(2*i, rec.key),
		Value:  r.slot(2*i+1, rec.value),
	}
	if rec.numHeaders != 0 {
		r.rec.Headers = r.nextHeaders(rec)
	}
	return &r.rec, nil
}

func (r *rbV2Reader) allocate() {
	r.slots = make([]rbBytes, 2*r.total)
	if r.numHeaders == 0 {
		return
	}
	r.headers = make([]Header, r.numHeaders)
	r.hvalues = make([]byte, r.valueBytes)
	if r.keyBytes == 0 {
		return
	}
	// Header keys are strings: one string holds them all, and each key is a
	// substring of it.
	var sb strings.Builder
	sb.Grow(r.keyBytes)
	for b := r.data; len(b) != 0; {
		rec, n, _ := rbParseRecordV2(b)
		c := rbCursor{b: rec.headers}
		for j := 0; j < rec.numHeaders; j++ {
			sb.Write(c.take(c.varint()))
			c.nullable()
		}
		b = b[n:]
	}
	r.hkeys = sb.String()
}

func (r *rbV2Reader) slot(i int, b []byte) Bytes {
	if b == nil {
		return nil
	}
	s := &r.slots[i]
	s.data, s.owner = b, r.owner
	r.owner.retain()
	return s
}

// nextHeaders returns the headers of rec, which is the next record. They
// live in per-batch memory that is never recycled, so callers may keep them.
func (r *rbV2Reader) nextHeaders(rec rbRecordV2) []Header {
	hs := r.headers[:rec.numHeaders:rec.numHeaders]
	r.headers = r.headers[rec.numHeaders:]
	c := rbCursor{b: rec.headers}
	for j := range hs {
		klen := len(c.take(c.varint()))
		hs[j].Key = r.hkeys[:klen]
		r.hkeys = r.hkeys[klen:]
		switch v := c.nullable(); {
		case v == nil:
			hs[j].Value = nil
		case len(v) == 0:
			hs[j].Value = []byte{}
		default:
			dst := r.hvalues[:len(v):len(v)]
			r.hvalues = r.hvalues[len(v):]
			copy(dst, v)
			hs[j].Value = dst
		}
	}
	return hs
}

func (r *rbV2Reader) finish() {
	r.data = nil
	r.left = 0
	if o := r.owner; o != nil {
		r.owner = nil
		o.release()
	}
}

// rbMessage is a legacy message, its key and value still in the input.
type rbMessage struct {
	offset int64
	magic  int8
	attrs  uint8
	ts     int64
	key    []byte // nil when null
	value  []byte // nil when null
}

// rbParseMessage parses the legacy message at the start of b, which holds at
// least its magic byte, and returns its size.
func rbParseMessage(b []byte) (m rbMessage, size int, err error) {
	be := binary.BigEndian
	m.magic = int8(b[rbLegacyMagic])
	least := int64(4 + 1 + 1 + 4 + 4) // crc, magic, attributes, key and value lengths
	if m.magic >= 1 {
		least += 8 // timestamp
	}
	length := int64(int32(be.Uint32(b[rbLegacySize:])))
	if length < least {
		return m, 0, Errorf("message size %d is too small for a magic %d message", length, m.magic)
	}
	if length > int64(len(b)-rbLegacyCRC) {
		return m, 0, io.ErrUnexpectedEOF
	}
	size = rbLegacyCRC + int(length)
	if sum, want := crc32.ChecksumIEEE(b[rbLegacyMagic:size]), be.Uint32(b[rbLegacyCRC:]); sum != want {
		return m, 0, Errorf("crc32 checksum mismatch in message (computed=%d found=%d)", sum, want)
	}
	m.offset = int64(be.Uint64(b[rbLegacyOffset:]))
	m.attrs = b[rbLegacyAttributes]
	c := rbCursor{b: b[rbLegacyAttributes+1 : size]}
	if m.magic >= 1 {
		m.ts = int64(be.Uint64(c.take(8)))
	}
	m.key = c.bytes32()
	m.value = c.bytes32()
	// Bytes after the value are covered by the CRC and harmless: ignored.
	return m, size, c.err
}

// bytes32 reads int32-length bytes; nil means null.
func (c *rbCursor) bytes32() []byte {
	if c.err == nil && len(c.b) < 4 {
		c.fail("message field overruns its message")
	}
	if c.err != nil {
		return nil
	}
	n := int32(binary.BigEndian.Uint32(c.b))
	c.b = c.b[4:]
	if n == -1 {
		return nil
	}
	return c.take(int64(n))
}

// rbLegacyReader reads validated legacy messages.
type rbLegacyReader struct {
	owner          *rbShared
	data           []byte // messages not yet read
	total, next    int
	adjust         int64 // added to each message's offset
	wrapperTime    int64
	useWrapperTime bool
	slots          []rbBytes
	rec            Record
}

func (r *rbLegacyReader) ReadRecord() (*Record, error) {
	if r.next >= r.total {
		r.data = nil
		if o := r.owner; o != nil {
			r.owner = nil
			o.release()
		}
		return nil, io.EOF
	}
	if r.slots == nil {
		r.slots = make([]rbBytes, 2*r.total)
	}
	m, size, err := rbParseMessage(r.data)
	if err != nil { // cannot happen after validation
		r.next = r.total
		return nil, err
	}
	r.data = r.data[size:]
	i := r.next
	r.next++

	r.rec = Record{Offset: m.offset + r.adjust}
	switch {
	case r.useWrapperTime:
		r.rec.Time = time.UnixMilli(r.wrapperTime)
	case m.magic >= 1:
		r.rec.Time = time.UnixMilli(m.ts)
	}
	r.rec.Key = r.slot(2*i, m.key)
	r.rec.Value = r.slot(2*i+1, m.value)
	return &r.rec, nil
}

func (r *rbLegacyReader) slot(i int, b []byte) Bytes {
	if b == nil {
		return nil
	}
	s := &r.slots[i]
	s.data, s.owner = b, r.owner
	r.owner.retain()
	return s
}
