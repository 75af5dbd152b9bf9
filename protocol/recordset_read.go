package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/segmentio/kafka-go/compress"
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
// Empty input leaves rs.Records nil, and rs marked as empty rather than
// null: WriteTo then writes nothing instead of failing with ErrNoRecord.
func (rs *RecordSet) ReadFrom(r io.Reader) (int64, error) {
	*rs = RecordSet{}
	in := rbGetBuf()
	rbPresize(in, r)
	err := rbFill(in, r)
	n := int64(len(in.b))
	if err != nil || n == 0 {
		rbPutBuf(in)
		rs.empty = err == nil
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

// readOwned decodes the batches of data like ReadFrom, for a response
// frame that nothing writes to again (wireReader.owned), with two
// differences that bound what a fetch costs in memory:
//
//   - uncompressed batches stay in data instead of being copied to a
//     buffer of their own, so a fetch response is held once, not twice;
//     the compressed bytes of a compressed batch are copied (a fraction
//     of what decompressing them costs), so that data is not held until
//     the last batch was read;
//   - a compressed v2 batch is checked (CRC, header) here but decompressed
//     only when its first record is read, and its buffer recycled when its
//     last one was, so a consumer holds one decompressed batch at a time
//     rather than a whole decompressed response. A batch whose content
//     then turns out to be malformed (which its CRC cannot catch: a broken
//     producer) fails that ReadRecord instead of the decoding.
func (rs *RecordSet) readOwned(data []byte) error {
	*rs = RecordSet{}
	if len(data) == 0 {
		rs.empty = true
		return nil
	}
	src := rbNewShared(nil) // data belongs to the frame, not to the pool
	defer src.release()
	d := rbSetDecoder{lazy: true}
	d.decode(src, data)
	if len(d.batches) == 0 {
		return d.err
	}
	rs.Version = d.version
	rs.Attributes = d.attrs
	rs.Records = &RecordStream{Records: d.batches}
	return nil
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
		// Only a bound on what is left: don't trust it with much memory.
		want = min(v.N, 1<<20)
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
	// lazy defers the decompression of v2 batches to their first read.
	lazy bool
	// ownsInput is set when the input is a buffer of the batches' own
	// (BatchStream), which need not be copied to outlive a frame.
	ownsInput bool
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
	codec := attrs.Compression()
	if codec != 0 && d.lazy && !d.ownsInput {
		// The compressed bytes get a buffer of their own, dropped once
		// decompressed, so that the frame need not outlive the decoding:
		// a consumer then holds the batches of a response it has not
		// reached yet, not the whole response until its last message.
		records = bytes.Clone(records)
	}
	switch {
	case codec != 0 && !d.lazy:
		out, err := rbDecompress(codec, records)
		if err != nil {
			return 0, err
		}
		owner = rbNewShared(out) // this reference belongs to the reader
		records = out.b
	default:
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
	var err error
	switch {
	case codec != 0 && d.lazy:
		// Decompressed by the first ReadRecord.
		if count < 0 {
			err = Errorf("record batch claims %d records", count)
		}
		r.codec, r.count = codec, count
	case d.lazy:
		err = r.scanLazy(count)
	default:
		err = r.scan(count)
	}
	if err != nil {
		owner.release()
		return 0, err
	}

	leaderEpoch := int32(be.Uint32(batch[rbV2LeaderEpoch:]))
	producerID := int64(be.Uint64(batch[rbV2ProducerID:]))
	producerEpoch := int16(be.Uint16(batch[rbV2ProducerEpoch:]))
	baseSequence := int32(be.Uint32(batch[rbV2BaseSequence:]))
	lastDelta := int32(be.Uint32(batch[rbV2LastOffsetDelta:]))
	if attrs.Control() {
		d.add(&ControlBatch{
			Attributes:           attrs,
			PartitionLeaderEpoch: leaderEpoch,
			BaseOffset:           r.base,
			ProducerID:           producerID,
			ProducerEpoch:        producerEpoch,
			BaseSequence:         baseSequence,
			LastOffsetDelta:      lastDelta,
			RecordCount:          count,
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
			LastOffsetDelta:      lastDelta,
			RecordCount:          count,
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
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF):
			// Not a fetch cut short: the wrapper's CRC covered all of it.
			err = Errorf("compressed message set ends with a partial message")
		case err == nil && Attributes(inner.attrs)&rbCodecMask != 0:
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

var (
	rbErrVarint  = Error("malformed varint in record")
	rbErrOverrun = Error("record field overruns its record")
)

// The field readers below split a field off the front of b and return the
// rest. They work on values, not on a cursor in memory, so that the hot
// loop does its bookkeeping in registers.

// rbVarint splits a zigzag varint off b.
func rbVarint(b []byte) (int64, []byte, error) {
	v, n := binary.Varint(b)
	if n <= 0 {
		return 0, b, rbErrVarint
	}
	return v, b[n:], nil
}

// rbField splits n bytes off b.
func rbField(b []byte, n int64) ([]byte, []byte, error) {
	if n < 0 || n > int64(len(b)) {
		return nil, b, rbErrOverrun
	}
	return b[:n:n], b[n:], nil
}

// rbNullable splits varint-length bytes off b; nil is null (length -1).
func rbNullable(b []byte) ([]byte, []byte, error) {
	n, b, err := rbVarint(b)
	if err != nil || n == -1 {
		return nil, b, err
	}
	return rbField(b, n)
}

// rbBytes32 splits int32-length bytes off b; nil is null (length -1).
func rbBytes32(b []byte) ([]byte, []byte, error) {
	if len(b) < 4 {
		return nil, b, rbErrOverrun
	}
	n := int32(binary.BigEndian.Uint32(b))
	if n == -1 {
		return nil, b[4:], nil
	}
	return rbField(b[4:], int64(n))
}

// rbNextHeader splits one header, validated beforehand, off b.
func rbNextHeader(b []byte) (key, value, rest []byte) {
	n, b, _ := rbVarint(b)
	key, b, _ = rbField(b, n)
	value, b, _ = rbNullable(b)
	return key, value, b
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
// Records already validated are parsed again with check false, which skips
// walking their headers.
func rbParseRecordV2(b []byte, check bool) (rec rbRecordV2, n int, err error) {
	length, k := binary.Varint(b)
	if k <= 0 {
		return rec, 0, Errorf("malformed record length")
	}
	if length < 1 || length > int64(len(b)-k) {
		return rec, 0, Errorf("record length %d overruns its batch (%d bytes left)", length, len(b)-k)
	}
	n = k + int(length)
	body := b[k+1 : n] // after the record attributes: none are defined
	if rec.tsDelta, body, err = rbVarint(body); err != nil {
		return rec, 0, err
	}
	if rec.offsetDelta, body, err = rbVarint(body); err != nil {
		return rec, 0, err
	}
	if rec.key, body, err = rbNullable(body); err != nil {
		return rec, 0, err
	}
	if rec.value, body, err = rbNullable(body); err != nil {
		return rec, 0, err
	}
	count, body, err := rbVarint(body)
	if err != nil {
		return rec, 0, err
	}
	if count < 0 || count > int64(len(body)/2) {
		return rec, 0, Errorf("record claims %d headers in %d bytes", count, len(body))
	}
	rec.numHeaders, rec.headers = int(count), body
	if !check {
		return rec, n, nil
	}
	for i := int64(0); i < count; i++ {
		var klen int64
		var key, value []byte
		if klen, body, err = rbVarint(body); err != nil {
			return rec, 0, err
		}
		if key, body, err = rbField(body, klen); err != nil {
			return rec, 0, err
		}
		if value, body, err = rbNullable(body); err != nil {
			return rec, 0, err
		}
		rec.keyBytes += len(key)
		rec.valueBytes += len(value)
	}
	if len(body) != 0 {
		return rec, 0, Errorf("%d bytes left over at the end of a record", len(body))
	}
	return rec, n, nil
}

// rbV2Reader reads the records of a v2 batch, validated beforehand by scan.
type rbV2Reader struct {
	owner   *rbShared // holds data; released once every record was read
	data    []byte    // records not yet read
	base    int64
	firstTS int64
	maxTS   int64
	logTime bool // LogAppendTime: every record has the batch's max timestamp

	// codec is set while data still holds the compressed records of count
	// records (readOwned); the first ReadRecord decompresses them.
	codec compress.Compression
	count int32
	// checkEach is set when the records were not scanned up front
	// (readOwned): each is checked as it is read, and the header totals
	// are taken from the rest of the batch at the first record with
	// headers.
	checkEach bool

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
		rec, n, err := rbParseRecordV2(b, true)
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

// scanLazy is scan for readers that check each record as they read it:
// it only bounds count, so that a batch is parsed once, not twice.
func (r *rbV2Reader) scanLazy(count int32) error {
	if count < 0 || int64(count) > int64(len(r.data)/7) {
		return Errorf("record batch claims %d records in %d bytes", count, len(r.data))
	}
	r.total, r.left = int(count), int(count)
	r.checkEach = true
	return nil
}

// sizeRest checks the records left in data, as scan does, and sums what
// their headers need; a checkEach reader calls it at its first record
// with headers, before allocate.
func (r *rbV2Reader) sizeRest() error {
	b := r.data
	for i := 0; i < r.left; i++ {
		rec, n, err := rbParseRecordV2(b, true)
		if err != nil {
			return fmt.Errorf("record %d of batch: %w", r.total-r.left+i, err)
		}
		r.numHeaders += rec.numHeaders
		r.keyBytes += rec.keyBytes
		r.valueBytes += rec.valueBytes
		b = b[n:]
	}
	if len(b) != 0 {
		return Errorf("record batch has %d bytes after its %d records", len(b), r.total)
	}
	return nil
}

// inflate decompresses the records of a batch decoded lazily, and lets go
// of the compressed bytes.
func (r *rbV2Reader) inflate() error {
	codec := r.codec
	r.codec = 0
	out, err := rbDecompress(codec, r.data)
	if err != nil {
		return err
	}
	r.owner.release()
	r.owner = rbNewShared(out)
	r.data = out.b
	return r.scanLazy(r.count)
}

func (r *rbV2Reader) ReadRecord() (*Record, error) {
	rec, err := r.next()
	if err != nil {
		return nil, err
	}
	i := r.total - r.left - 1 // next counted it (and sized total, if lazily)
	if r.slots == nil {
		r.slots = make([]rbBytes, 2*r.total)
	}
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

// next parses the next record, decompressing the batch first if it was
// decoded lazily, and sizes the headers of the whole batch on the first
// call; io.EOF after the last record, which also lets go of the buffer.
func (r *rbV2Reader) next() (rbRecordV2, error) {
	if r.codec != 0 {
		if err := r.inflate(); err != nil {
			r.finish()
			return rbRecordV2{}, err
		}
	}
	if r.left <= 0 {
		var err error = io.EOF
		if r.checkEach && len(r.data) != 0 {
			err = Errorf("record batch has %d bytes after its %d records", len(r.data), r.total)
		}
		r.finish()
		return rbRecordV2{}, err
	}
	if !r.checkEach && r.numHeaders != 0 && r.headers == nil {
		r.allocate()
	}
	rec, n, err := rbParseRecordV2(r.data, r.checkEach)
	switch {
	case err != nil && r.checkEach:
		err = fmt.Errorf("record %d of batch: %w", r.total-r.left, err)
	case err == nil && r.checkEach && rec.numHeaders != 0 && r.headers == nil:
		// The first record with headers: size those of the whole rest of
		// the batch at once, as scan does for a batch read up front.
		if err = r.sizeRest(); err == nil {
			r.allocate()
		}
	}
	if err != nil { // without checkEach, cannot happen after scan
		r.finish()
		return rec, err
	}
	r.data = r.data[n:]
	r.left--
	return rec, nil
}

// allocate makes the memory of the headers of the records left in data
// (all of the batch's, or from the first with headers on) at once.
func (r *rbV2Reader) allocate() {
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
		rec, n, _ := rbParseRecordV2(b, false)
		h := rec.headers
		for j := 0; j < rec.numHeaders; j++ {
			var key []byte
			key, _, h = rbNextHeader(h)
			sb.Write(key)
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
	h := rec.headers
	for j := range hs {
		var key, v []byte
		key, v, h = rbNextHeader(h)
		hs[j].Key = r.hkeys[:len(key)]
		r.hkeys = r.hkeys[len(key):]
		switch {
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
