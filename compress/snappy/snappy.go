// Package snappy provides the snappy compression codec for Kafka record
// batches. By default payloads are written in the xerial framing used by the
// Java client (snappy-java's SnappyOutputStream); readers accept both that
// framing and a bare snappy block.
package snappy

import (
	"io"

	"github.com/klauspost/compress/s2"
	ksnappy "github.com/klauspost/compress/snappy"
)

// Framing selects whether writers wrap snappy blocks in xerial framing.
type Framing int

const (
	// Framed writes the xerial header followed by length-prefixed blocks of
	// at most 32 KiB of input each. This is the default, and what the Java
	// client produces.
	Framed Framing = iota
	// Unframed writes the whole payload as a single bare snappy block.
	Unframed
)

// Compression selects the snappy encoder effort. Every setting produces
// standard snappy blocks that any snappy decoder reads.
type Compression int

const (
	DefaultCompression Compression = iota
	FasterCompression
	BetterCompression
	BestCompression
)

// Codec is the compress.Codec implementation for snappy (attribute code 2).
// The zero value writes framed payloads at the default effort. A Codec is
// safe for concurrent use.
type Codec struct {
	// Framing applied by writers; Framed when left zero.
	Framing Framing

	// Compression effort used by writers.
	Compression Compression
}

// Code implements compress.Codec.
func (c *Codec) Code() int8 { return 2 }

// Name implements compress.Codec.
func (c *Codec) Name() string { return "snappy" }

// NewReader implements compress.Codec. The framing is detected from the
// first bytes, so the codec's Framing setting does not matter here.
func (c *Codec) NewReader(r io.Reader) io.ReadCloser {
	x, _ := readerPool.Get().(*xerialReader)
	if x == nil {
		x = new(xerialReader)
	}
	x.reset(r)
	return &reader{x: x}
}

// NewWriter implements compress.Codec.
func (c *Codec) NewWriter(w io.Writer) io.WriteCloser {
	x, _ := writerPool.Get().(*xerialWriter)
	if x == nil {
		x = new(xerialWriter)
	}
	x.reset(w, c.Framing != Unframed, c.encoder())
	return &writer{x: x}
}

func (c *Codec) encoder() func(dst, src []byte) []byte {
	switch c.Compression {
	case FasterCompression:
		return s2.EncodeSnappy
	case BetterCompression:
		return s2.EncodeSnappyBetter
	case BestCompression:
		return s2.EncodeSnappyBest
	default:
		return ksnappy.Encode
	}
}

type reader struct{ x *xerialReader }

func (r *reader) Read(p []byte) (int, error) {
	if r.x == nil {
		return 0, errClosed
	}
	return r.x.Read(p)
}

// WriteTo lets io.Copy hand out decoded blocks without an extra copy.
func (r *reader) WriteTo(w io.Writer) (int64, error) {
	if r.x == nil {
		return 0, errClosed
	}
	return r.x.WriteTo(w)
}

// Close returns the reader's buffers to the pool.
func (r *reader) Close() error {
	if x := r.x; x != nil {
		r.x = nil
		x.reset(nil)
		readerPool.Put(x)
	}
	return nil
}

type writer struct{ x *xerialWriter }

func (w *writer) Write(p []byte) (int, error) {
	if w.x == nil {
		return 0, errClosed
	}
	return w.x.Write(p)
}

// Close encodes whatever is still buffered and returns the writer's buffers
// to the pool. An empty payload produces no output at all.
func (w *writer) Close() error {
	x := w.x
	if x == nil {
		return nil
	}
	w.x = nil
	err := x.flush()
	x.reset(nil, true, nil)
	writerPool.Put(x)
	return err
}
