package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"time"
)

// StreamSource is what a BatchStream reads from: a connection positioned
// on the records of one partition of a Fetch response.
type StreamSource interface {
	io.Reader
	io.ByteReader
}

// discarder is implemented by sources that can skip bytes without copying
// them (bufio.Reader).
type discarder interface {
	Discard(n int) (int, error)
}

// BatchStream reads the record batches of one partition as they arrive,
// instead of from a response read whole: a consumer then holds one record
// at a time rather than a whole fetch response, as upstream's Reader,
// which also parses records off the socket.
//
// Uncompressed v2 batches are streamed: each ReadRecordFields reads one
// record from the source. Their CRC covers the whole batch, so it is
// checked after their last record was read, and a mismatch is that read's
// error (the records before it were delivered; upstream's Reader never
// checks it). Compressed batches, control batches and legacy message sets
// are read whole and decoded as RecordSet.ReadFrom does (CRC first), one
// batch at a time.
//
// As with ReadFrom, a partial batch at the end (the broker cuts responses
// at a byte limit) is skipped, and a stream whose only batch is partial
// fails with io.ErrUnexpectedEOF.
//
// A BatchStream and its batches are used by one goroutine.
type BatchStream struct {
	src     StreamSource
	left    int // bytes of the records field not yet handed out
	batches int // batches returned so far
	cur     *rbStreamReader
	queue   []RecordReader // decoded from the last batch read whole
	err     error
	hdr     [rbV2HeaderSize]byte
}

// NewBatchStream reads the size bytes of records that src is positioned on.
func NewBatchStream(src StreamSource, size int) *BatchStream {
	return &BatchStream{src: src, left: size}
}

// Batches returns how many batches Next returned.
func (s *BatchStream) Batches() int { return s.batches }

// Next returns the next batch (a *RecordBatch, *ControlBatch or
// *MessageSet), io.EOF after the last one. The records of the batch
// returned before are skipped if they were not all read.
func (s *BatchStream) Next() (RecordReader, error) {
	if s.err != nil {
		return nil, s.err
	}
	b, err := s.next()
	if err != nil {
		s.err = err
		return nil, err
	}
	s.batches++
	return b, nil
}

func (s *BatchStream) next() (RecordReader, error) {
	if s.cur != nil {
		cur := s.cur
		s.cur = nil
		if err := cur.skipRest(); err != nil {
			return nil, err
		}
	}
	if len(s.queue) != 0 {
		b := s.queue[0]
		s.queue = s.queue[1:]
		return b, nil
	}
	if s.left == 0 {
		return nil, io.EOF
	}
	if s.left <= rbV2Magic {
		return nil, s.partial()
	}
	hdr := s.hdr[:rbV2Magic+1]
	if err := s.read(hdr); err != nil {
		return nil, err
	}
	magic := int8(hdr[rbV2Magic])
	// Bytes after the length field, in both formats (a legacy message's
	// size field sits where a batch's length does).
	length := int64(int32(binary.BigEndian.Uint32(hdr[rbV2BatchLength:])))
	if length < 0 {
		return nil, Errorf("record batch length %d is negative", length)
	}
	if length > int64(s.left+rbV2Magic+1-rbV2LeaderEpoch) {
		return nil, s.partial()
	}
	rest := int(length) - (rbV2Magic + 1 - rbV2LeaderEpoch)
	if rest < 0 {
		return nil, Errorf("record batch length %d is shorter than its header", length)
	}
	if magic != 2 {
		return s.readWhole(hdr, rest)
	}
	if length < rbV2HeaderSize-rbV2LeaderEpoch {
		return nil, Errorf("record batch length %d is shorter than a batch header", length)
	}
	hdr = s.hdr[:]
	if err := s.read(hdr[rbV2Magic+1:]); err != nil {
		return nil, err
	}
	rest -= rbV2HeaderSize - (rbV2Magic + 1)
	attrs := Attributes(int16(binary.BigEndian.Uint16(hdr[rbV2Attributes:])))
	if attrs.Compression() != 0 || attrs.Control() {
		return s.readWhole(hdr, rest)
	}
	return s.stream(rest)
}

// partial skips what is left of the records: a batch cut short.
func (s *BatchStream) partial() error {
	if err := s.skip(s.left); err != nil {
		return err
	}
	if s.batches == 0 {
		return io.ErrUnexpectedEOF
	}
	return io.EOF
}

// read fills b from the source, counting it against the records' size.
func (s *BatchStream) read(b []byte) error {
	if len(b) > s.left {
		return io.ErrUnexpectedEOF
	}
	n, err := io.ReadFull(s.src, b)
	s.left -= n
	return noEOFStream(err)
}

func (s *BatchStream) skip(n int) error {
	s.left -= n
	return skipStream(s.src, n)
}

// readWhole reads the batch whose first bytes are in hdr and decodes it in
// memory.
func (s *BatchStream) readWhole(hdr []byte, rest int) (RecordReader, error) {
	in := rbGetInBuf(len(hdr) + rest)
	buf := in.b
	copy(buf, hdr)
	if err := s.read(buf[len(hdr):]); err != nil {
		rbPutBuf(in)
		return nil, err
	}
	// The batches decoded from buf hold it; the last to let go of it (a
	// compressed batch once decompressed) returns it to the pool.
	src := rbNewShared(in)
	defer src.release()
	d := rbSetDecoder{lazy: true, ownsInput: true}
	d.decode(src, buf)
	if d.err == nil && len(d.batches) == 0 {
		d.err = Errorf("record batch decoded to nothing")
	}
	if d.err != nil {
		for _, b := range d.batches {
			closeBatch(b)
		}
		return nil, d.err
	}
	s.queue = d.batches[1:]
	return d.batches[0], nil
}

// stream returns the uncompressed v2 batch whose header is in s.hdr, its
// rest bytes of records still in the source.
func (s *BatchStream) stream(rest int) (RecordReader, error) {
	be := binary.BigEndian
	h := s.hdr[:]
	count := int32(be.Uint32(h[rbV2RecordCount:]))
	if count < 0 || int64(count) > int64(rest/7) {
		return nil, Errorf("record batch claims %d records in %d bytes", count, rest)
	}
	attrs := Attributes(int16(be.Uint16(h[rbV2Attributes:])))
	r := &rbStreamReader{
		src:     s.src,
		left:    rest,
		count:   count,
		crc:     crc32.Update(0, rbCastagnoli, h[rbV2Attributes:]),
		want:    be.Uint32(h[rbV2CRC:]),
		base:    int64(be.Uint64(h[rbV2BaseOffset:])),
		firstTS: int64(be.Uint64(h[rbV2FirstTimestamp:])),
		maxTS:   int64(be.Uint64(h[rbV2MaxTimestamp:])),
		logTime: attrs&rbLogAppendTime != 0,
	}
	s.left -= rest // the reader counts them from here on
	s.cur = r
	return &RecordBatch{
		Attributes:           attrs,
		PartitionLeaderEpoch: int32(be.Uint32(h[rbV2LeaderEpoch:])),
		BaseOffset:           r.base,
		ProducerID:           int64(be.Uint64(h[rbV2ProducerID:])),
		ProducerEpoch:        int16(be.Uint16(h[rbV2ProducerEpoch:])),
		BaseSequence:         int32(be.Uint32(h[rbV2BaseSequence:])),
		LastOffsetDelta:      int32(be.Uint32(h[rbV2LastOffsetDelta:])),
		RecordCount:          count,
		Records:              r,
	}, nil
}

// Close skips whatever was not read, leaving the source positioned after
// the records (unless the source itself failed: its error is returned).
func (s *BatchStream) Close() error {
	var err error
	if s.cur != nil {
		cur := s.cur
		s.cur = nil
		err = cur.skipRest()
	}
	for _, b := range s.queue {
		closeBatch(b)
	}
	s.queue = nil
	n := s.left
	s.left = 0
	if err == nil {
		err = skipStream(s.src, n)
	}
	if s.err == nil {
		s.err = io.EOF
	}
	return err
}

// errStreamCut marks a source that ended before the records did.
var errStreamCut = errors.New("connection ended in the middle of the records")

func noEOFStream(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: %w", errStreamCut, io.ErrUnexpectedEOF)
	}
	return err
}

func skipStream(src StreamSource, n int) error {
	if n <= 0 {
		return nil
	}
	if d, ok := src.(discarder); ok {
		_, err := d.Discard(n)
		return noEOFStream(err)
	}
	_, err := io.CopyN(io.Discard, src, int64(n))
	return noEOFStream(err)
}

// closeBatch releases the buffers of a batch that will not be read.
func closeBatch(b RecordReader) {
	for {
		rec, err := b.ReadRecord()
		if err != nil {
			return
		}
		if rec.Key != nil {
			rec.Key.Close()
		}
		if rec.Value != nil {
			rec.Value.Close()
		}
	}
}

// rbStreamReader reads the records of an uncompressed v2 batch from the
// source, one at a time, through a buffer that holds the current record.
type rbStreamReader struct {
	src         StreamSource
	left        int // bytes of the batch's records not yet read
	count, done int32
	crc, want   uint32
	base        int64
	firstTS     int64
	maxTS       int64
	logTime     bool
	err         error
	buf         []byte
	rec         Record
	headers     rbHeaderArena
}

// ReadRecordFields sets f to the next record; its key and value are valid
// until the next read.
func (r *rbStreamReader) ReadRecordFields(f *RecordFields) error {
	rec, err := r.next()
	if err != nil {
		return err
	}
	ts := r.firstTS + rec.tsDelta
	if r.logTime {
		ts = r.maxTS
	}
	*f = RecordFields{Offset: r.base + rec.offsetDelta, Time: time.UnixMilli(ts), Key: rec.key, Value: rec.value}
	if rec.numHeaders != 0 {
		f.Headers = r.headers.own(rec, int(r.count-r.done)+1)
	}
	return nil
}

// ReadRecord reads the next record; its key and value are copies that stay
// valid after the next read.
func (r *rbStreamReader) ReadRecord() (*Record, error) {
	var f RecordFields
	if err := r.ReadRecordFields(&f); err != nil {
		return nil, err
	}
	r.rec = Record{Offset: f.Offset, Time: f.Time, Headers: f.Headers}
	if f.Key != nil {
		r.rec.Key = NewBytes(append([]byte{}, f.Key...))
	}
	if f.Value != nil {
		r.rec.Value = NewBytes(append([]byte{}, f.Value...))
	}
	return &r.rec, nil
}

func (r *rbStreamReader) next() (rbRecordV2, error) {
	if r.err != nil {
		return rbRecordV2{}, r.err
	}
	if r.done == r.count {
		r.err = io.EOF
		switch {
		case r.left != 0:
			r.err = Errorf("record batch has %d bytes after its %d records", r.left, r.count)
		case r.crc != r.want:
			r.err = Errorf("crc32 checksum mismatch in record batch (computed=%d found=%d)", r.crc, r.want)
		}
		return rbRecordV2{}, r.err
	}
	rec, err := r.readRecord()
	if err != nil {
		r.err = err
		return rec, err
	}
	r.done++
	return rec, nil
}

// peeker is implemented by sources that can show their next bytes without
// copying them out (bufio.Reader, kafka-go's response bodies).
type peeker interface {
	Peek(n int) ([]byte, error)
	Discard(n int) (int, error)
}

func (r *rbStreamReader) readRecord() (rbRecordV2, error) {
	if p, ok := r.src.(peeker); ok {
		if rec, ok, err := r.readRecordInPlace(p); ok {
			return rec, err
		}
	}
	return r.readRecordCopy()
}

// readRecordInPlace parses the next record where the source buffers it,
// without copying it first: its key and value are windows on the source's
// buffer, valid until the next read. It reports false, having consumed
// nothing, for a record it cannot see whole (larger than the source's
// buffer, cut short, malformed length), which readRecordCopy then reads
// or reports.
func (r *rbStreamReader) readRecordInPlace(p peeker) (rbRecordV2, bool, error) {
	head, err := p.Peek(min(binary.MaxVarintLen64, r.left))
	if err != nil && len(head) == 0 {
		return rbRecordV2{}, false, nil
	}
	length, k := binary.Varint(head)
	if k <= 0 || length < 1 || length > int64(r.left-k) {
		return rbRecordV2{}, false, nil
	}
	n := k + int(length)
	b, err := p.Peek(n)
	if err != nil {
		return rbRecordV2{}, false, nil
	}
	r.crc = crc32.Update(r.crc, rbCastagnoli, b)
	rec, _, err := rbParseRecordV2(b, true)
	if _, derr := p.Discard(n); derr != nil && err == nil {
		err = noEOFStream(derr) // cannot happen: the n bytes are buffered
	}
	r.left -= n
	if err != nil {
		return rec, true, fmt.Errorf("record %d of batch: %w", r.done, err)
	}
	return rec, true, nil
}

// readRecordCopy reads the next record into r.buf, then parses it.
func (r *rbStreamReader) readRecordCopy() (rbRecordV2, error) {
	// The length, a varint of at most binary.MaxVarintLen64 bytes.
	var lb [binary.MaxVarintLen64]byte
	k := 0
	for {
		if r.left == 0 || k == len(lb) {
			return rbRecordV2{}, fmt.Errorf("record %d of batch: %w", r.done, Errorf("malformed record length"))
		}
		c, err := r.src.ReadByte()
		if err != nil {
			return rbRecordV2{}, noEOFStream(err)
		}
		r.left--
		lb[k] = c
		k++
		if c < 0x80 {
			break
		}
	}
	length, _ := binary.Varint(lb[:k])
	if length < 1 || length > int64(r.left) {
		return rbRecordV2{}, fmt.Errorf("record %d of batch: %w", r.done,
			Errorf("record length %d overruns its batch (%d bytes left)", length, r.left))
	}
	n := k + int(length)
	if cap(r.buf) < n {
		r.buf = make([]byte, n, max(n, 2*cap(r.buf)))
	}
	b := r.buf[:n]
	copy(b, lb[:k])
	m, err := io.ReadFull(r.src, b[k:])
	r.left -= m
	if err != nil {
		return rbRecordV2{}, noEOFStream(err)
	}
	r.crc = crc32.Update(r.crc, rbCastagnoli, b)
	rec, _, err := rbParseRecordV2(b, true)
	if err != nil {
		return rec, fmt.Errorf("record %d of batch: %w", r.done, err)
	}
	return rec, nil
}

// skipRest skips the records not read, for a batch given up on.
func (r *rbStreamReader) skipRest() error {
	n := r.left
	r.left = 0
	if r.err == nil {
		r.err = io.EOF
	}
	return skipStream(r.src, n)
}
