package protocol

import (
	"encoding/binary"
	"errors"
	"io"
	"math"
	"sync"
)

// errWireShort reports a length, count or value that claims more bytes
// than the frame still holds. It is an io.ErrUnexpectedEOF so that callers
// treating a truncated frame and a lying length alike keep working.
var errWireShort = io.ErrUnexpectedEOF

var (
	errWireVarintOverflow = errors.New("kafka protocol: unsigned varint overflows 32 bits")
)

// wireWriter appends the wire form of values to a byte slice whose capacity was
// computed beforehand by the size pass, so appends never reallocate on the
// normal path.
type wireWriter struct {
	b []byte
	// blobs are record sets rendered during the size pass, consumed in the
	// same order by the write pass.
	blobs []encBlob
	next  int
	// sizes are the sizes of tagged field values, from the size pass.
	sizes    []int
	nextSize int
}

func (w *wireWriter) int8(v int8)   { w.b = append(w.b, byte(v)) }
func (w *wireWriter) int16(v int16) { w.b = binary.BigEndian.AppendUint16(w.b, uint16(v)) }
func (w *wireWriter) int32(v int32) { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)) }
func (w *wireWriter) int64(v int64) { w.b = binary.BigEndian.AppendUint64(w.b, uint64(v)) }

func (w *wireWriter) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }

func (w *wireWriter) bool(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}

func (w *wireWriter) float64(v float64) { w.int64(int64(math.Float64bits(v))) }

func (w *wireWriter) raw(b []byte) { w.b = append(w.b, b...) }
func (w *wireWriter) str(s string) { w.b = append(w.b, s...) }

// wireUvarintSize is the number of bytes of v as an unsigned varint.
func wireUvarintSize(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// wireReader decodes values from an in-memory frame. Errors are sticky: once
// err is set every read returns a zero value, which keeps the decoding
// functions free of error plumbing; they only check err before loops.
type wireReader struct {
	b   []byte
	off int
	err error
	// owned is set when b was allocated for this decoding alone and is
	// never written again (a frame from readFrame): record sets then keep
	// windows on it instead of copying their batches out of it.
	owned bool
	// stream is set when decoding from a stream (ResponseStream): b then
	// holds what was read so far, and more is read as decoding needs it.
	stream *streamState
}

func (r *wireReader) remaining() int {
	n := len(r.b) - r.off
	if r.stream != nil {
		n += r.stream.left
	}
	return n
}

// more makes sure that n more bytes are in b, reading the missing ones
// from the stream when decoding one; it reports false (and sets err) when
// the frame does not hold them.
func (r *wireReader) more(n int) bool {
	if n <= len(r.b)-r.off {
		return true
	}
	if r.stream == nil || r.err != nil {
		r.fail(errWireShort)
		return false
	}
	return r.stream.fill(r, n-(len(r.b)-r.off))
}

func (r *wireReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// take returns the next n bytes, or nil (and sets err) if the frame is
// shorter than that.
func (r *wireReader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 {
		r.fail(errWireShort)
		return nil
	}
	if n > len(r.b)-r.off && !r.more(n) {
		return nil
	}
	if n == 0 {
		// Never nil: a present but empty value must stay distinguishable
		// from a null one.
		return wireEmpty
	}
	p := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return p
}

var wireEmpty = []byte{}

func (r *wireReader) int8() int8 {
	if p := r.take(1); p != nil {
		return int8(p[0])
	}
	return 0
}

func (r *wireReader) bool() bool { return r.int8() != 0 }

func (r *wireReader) int16() int16 {
	if p := r.take(2); p != nil {
		return int16(binary.BigEndian.Uint16(p))
	}
	return 0
}

func (r *wireReader) int32() int32 {
	if p := r.take(4); p != nil {
		return int32(binary.BigEndian.Uint32(p))
	}
	return 0
}

func (r *wireReader) int64() int64 {
	if p := r.take(8); p != nil {
		return int64(binary.BigEndian.Uint64(p))
	}
	return 0
}

func (r *wireReader) float64() float64 { return math.Float64frombits(uint64(r.int64())) }

// uvarint reads an unsigned varint of at most 32 significant bits, which is
// all the protocol uses for lengths, counts and tags.
func (r *wireReader) uvarint() uint32 {
	if r.err != nil {
		return 0
	}
	var v uint64
	for shift := uint(0); ; shift += 7 {
		if r.off >= len(r.b) && !r.more(1) {
			return 0
		}
		c := r.b[r.off]
		r.off++
		if shift == 28 && c > 0x0f {
			r.fail(errWireVarintOverflow)
			return 0
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return uint32(v)
		}
	}
}

// compactLen reads a COMPACT_* length (N+1, 0 meaning null) and returns it
// as a classic length, -1 for null.
func (r *wireReader) compactLen() int {
	return int(int64(r.uvarint()) - 1)
}

// wireBufferPool recycles encoding buffers. Buffers that grew very large are
// dropped rather than pinned in the pool forever.
var wireBufferPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

const wireMaxPooledBuffer = 4 << 20

func wireGetBuffer(size int) *[]byte {
	p := wireBufferPool.Get().(*[]byte)
	if cap(*p) < size {
		*p = make([]byte, 0, size)
	}
	*p = (*p)[:0]
	return p
}

func wirePutBuffer(p *[]byte) {
	if cap(*p) > wireMaxPooledBuffer {
		return
	}
	*p = (*p)[:0]
	wireBufferPool.Put(p)
}
