package protocol

import (
	"bytes"
	"io"
	"time"

	"github.com/segmentio/kafka-go/compress"
)

// Attributes are the flags of a record batch: its compression codec in the
// low three bits, then the timestamp type, transactional and control bits.
type Attributes int16

// Bits of the attributes that this package reads but does not export.
const (
	rbCodecMask     Attributes = 7
	rbLogAppendTime Attributes = 1 << 3
)

const (
	Gzip          Attributes = Attributes(compress.Gzip)
	Snappy        Attributes = Attributes(compress.Snappy)
	Lz4           Attributes = Attributes(compress.Lz4)
	Zstd          Attributes = Attributes(compress.Zstd)
	Transactional Attributes = 1 << 4
	Control       Attributes = 1 << 5
)

// Compression returns the codec the batch is compressed with.
func (a Attributes) Compression() compress.Compression { return compress.Compression(a & rbCodecMask) }

// Transactional reports whether the batch belongs to a transaction.
func (a Attributes) Transactional() bool { return a&Transactional != 0 }

// Control reports whether the batch holds control records (transaction markers).
func (a Attributes) Control() bool { return a&Control != 0 }

// String names the codec followed by the flags that are set, joined by '+'
// (e.g. "gzip+transactional").
func (a Attributes) String() string {
	name := a.Compression().String()
	for _, flag := range [...]struct {
		bit  Attributes
		name string
	}{{Transactional, "transactional"}, {Control, "control"}} {
		if a&flag.bit != 0 {
			name += "+" + flag.name
		}
	}
	return name
}

// Record is one record of a record set. Key and Value are nil for a null key
// or value.
//
// Offset is ignored when producing (the broker assigns offsets). A zero Time
// is replaced by the current time when the record is encoded.
//
// Key and Value of records decoded by RecordSet.ReadFrom stay readable until
// they are closed, even after the next call to ReadRecord; closing them lets
// the decoder recycle its buffers. Headers of decoded records are never
// recycled and may be retained.
type Record struct {
	Offset  int64
	Time    time.Time
	Key     Bytes
	Value   Bytes
	Headers []Header
}

// RecordReader yields records one by one; io.EOF marks the end.
//
// The *Record returned is only valid until the next call to ReadRecord:
// readers reuse it.
type RecordReader interface {
	ReadRecord() (*Record, error)
}

// Header is a key/value pair attached to a record.
type Header struct {
	Key   string
	Value []byte
}

// RecordSet is the records of one partition in a Produce request or a Fetch
// response, in message format Version (0, 1 or 2).
//
// When writing, Version picks the format (0 and 1 both produce magic 1
// message sets, 2 produces a record batch) and Attributes apply to the whole
// set (the codec compresses it).
//
// When reading, Version is the highest format seen, Attributes are the union
// of the attributes of every batch, and Records is a *RecordStream whose
// Records are the batches (*RecordBatch, *ControlBatch or *MessageSet).
//
// On the wire a record set may be null or empty (what a broker sends for a
// partition without new records). Both read as a nil Records; the set
// remembers which one it was, so that writing it back gives the same bytes.
// The zero RecordSet is null.
type RecordSet struct {
	Version    int8
	Attributes Attributes
	Records    RecordReader

	// empty is set by ReadFrom when the set had no bytes at all: written
	// with a nil Records, it stays empty instead of being null.
	empty bool
}

// Bytes is a byte sequence that is read once and then closed, so that its
// storage can be recycled.
type Bytes interface {
	io.ReadCloser
	// Len returns the number of bytes left to read.
	Len() int
}

// NewBytes wraps b (without copying it) as Bytes; nil stays nil, a null value.
func NewBytes(b []byte) Bytes {
	if b == nil {
		return nil
	}
	w := &rbSliceBytes{}
	w.Reset(b)
	return w
}

// rbSliceBytes is the Bytes of NewBytes: nothing to recycle on Close.
type rbSliceBytes struct{ bytes.Reader }

func (*rbSliceBytes) Close() error { return nil }

// ReadAll returns the remaining content of b, or nil if b is nil. An empty
// but non-null b gives an empty, non-nil slice.
func ReadAll(b Bytes) ([]byte, error) {
	if b == nil {
		return nil, nil
	}
	if rb, ok := b.(*rbBytes); ok {
		out := append([]byte{}, rb.data...)
		rb.data = rb.data[len(rb.data):]
		return out, nil
	}
	out := make([]byte, b.Len())
	n, err := io.ReadFull(b, out)
	return out[:n], err
}

// rbMillis is t as Kafka stores timestamps: milliseconds since the epoch,
// zero for the zero time.
func rbMillis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}
