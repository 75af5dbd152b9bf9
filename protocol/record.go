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

const (
	Gzip          Attributes = Attributes(compress.Gzip)
	Snappy        Attributes = Attributes(compress.Snappy)
	Lz4           Attributes = Attributes(compress.Lz4)
	Zstd          Attributes = Attributes(compress.Zstd)
	Transactional Attributes = 1 << 4
	Control       Attributes = 1 << 5
)

// Compression returns the codec the batch is compressed with.
func (a Attributes) Compression() compress.Compression { return compress.Compression(a & 7) }

// Transactional reports whether the batch belongs to a transaction.
func (a Attributes) Transactional() bool { return a&Transactional != 0 }

// Control reports whether the batch holds control records (transaction markers).
func (a Attributes) Control() bool { return a&Control != 0 }

func (a Attributes) String() string {
	s := a.Compression().String()
	if a.Transactional() {
		s += "+transactional"
	}
	if a.Control() {
		s += "+control"
	}
	return s
}

// Header is a key/value pair attached to a record.
type Header struct {
	Key   string
	Value []byte
}

// Record is one record of a record set. Key and Value are nil for a null
// key or value.
type Record struct {
	Offset  int64
	Time    time.Time
	Key     Bytes
	Value   Bytes
	Headers []Header
}

// RecordReader yields records one by one; io.EOF marks the end.
type RecordReader interface {
	ReadRecord() (*Record, error)
}

// RecordSet is the records of one partition in a Produce request or a Fetch
// response, in message format Version (0, 1 or 2).
type RecordSet struct {
	Version    int8
	Attributes Attributes
	Records    RecordReader
}

// Bytes is a byte sequence that is read once and then closed, so that its
// storage can be recycled.
type Bytes interface {
	io.ReadCloser
	Len() int
}

// NewBytes wraps b (without copying it) as Bytes; nil stays nil, a null value.
func NewBytes(b []byte) Bytes {
	if b == nil {
		return nil
	}
	return &bytesReader{Reader: bytes.NewReader(b)}
}

type bytesReader struct{ *bytes.Reader }

func (*bytesReader) Close() error { return nil }

// ReadAll returns the remaining content of b, or nil if b is nil.
func ReadAll(b Bytes) ([]byte, error) {
	if b == nil {
		return nil, nil
	}
	out := make([]byte, b.Len())
	n, err := io.ReadFull(b, out)
	return out[:n], err
}
