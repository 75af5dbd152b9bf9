// Package gzip provides the gzip compression codec for Kafka record batches.
package gzip

import (
	"errors"
	"io"
	"sync"

	kgzip "github.com/klauspost/compress/gzip"
)

// Codec is the compress.Codec implementation for gzip (attribute code 1).
//
// The zero value is ready to use and compresses at the library's default
// level. A Codec is safe for concurrent use and may be copied.
type Codec struct {
	// Level is the compression level used by writers, as accepted by
	// github.com/klauspost/compress/gzip (-3 to 9). Zero selects the default
	// level, so plain "no compression" (0) cannot be requested.
	Level int
}

// errClosed is reported by readers and writers used after Close.
var errClosed = errors.New("gzip: use of closed reader or writer")

const (
	minLevel = kgzip.StatelessCompression
	maxLevel = kgzip.BestCompression
)

// Decompressors carry no configuration, so one pool serves every codec.
var readers sync.Pool // *kgzip.Reader

// Compressors are pooled per level, indexed by level-minLevel, so that Codec
// values hold no state of their own and a writer never comes back from the
// pool configured with a level other than the one asked for.
var writers [maxLevel - minLevel + 1]sync.Pool // *kgzip.Writer

// Code implements compress.Codec.
func (c *Codec) Code() int8 { return 1 }

// Name implements compress.Codec.
func (c *Codec) Name() string { return "gzip" }

func (c *Codec) level() int {
	if c.Level == 0 {
		return kgzip.DefaultCompression
	}
	return c.Level
}

// NewReader implements compress.Codec. The gzip header is consumed right
// away; if it cannot be parsed, the returned reader reports that error.
func (c *Codec) NewReader(r io.Reader) io.ReadCloser {
	z, _ := readers.Get().(*kgzip.Reader)
	var err error
	if z == nil {
		z, err = kgzip.NewReader(r)
	} else {
		err = z.Reset(r)
	}
	if err != nil {
		if z != nil {
			release(z)
		}
		return &reader{err: err}
	}
	return &reader{z: z}
}

// NewWriter implements compress.Codec.
func (c *Codec) NewWriter(w io.Writer) io.WriteCloser {
	level := c.level()
	if level < minLevel || level > maxLevel {
		_, err := kgzip.NewWriterLevel(w, level) // for the library's own message
		return &writer{err: err}
	}
	pool := &writers[level-minLevel]
	z, _ := pool.Get().(*kgzip.Writer)
	if z == nil {
		var err error
		if z, err = kgzip.NewWriterLevel(w, level); err != nil {
			return &writer{err: err}
		}
	} else {
		z.Reset(w)
	}
	return &writer{z: z, pool: pool}
}

// release detaches a decompressor from its source before pooling it, so the
// pool does not keep the caller's buffers alive.
func release(z *kgzip.Reader) {
	// The reader is byte-oriented, which spares Reset from allocating a
	// bufio.Reader; the error (EOF, no header) is expected and irrelevant.
	_ = z.Reset(eofReader{})
	readers.Put(z)
}

type reader struct {
	z   *kgzip.Reader
	err error
}

func (r *reader) Read(p []byte) (int, error) {
	if r.z == nil {
		if r.err != nil {
			return 0, r.err
		}
		return 0, errClosed
	}
	return r.z.Read(p)
}

// Close returns the decompressor to the pool. It reports the header error
// when construction failed, like the Read calls do.
func (r *reader) Close() error {
	z := r.z
	if z == nil {
		return r.err
	}
	r.z = nil
	err := z.Close()
	release(z)
	return err
}

type writer struct {
	z    *kgzip.Writer
	pool *sync.Pool
	err  error
}

func (w *writer) Write(p []byte) (int, error) {
	if w.z == nil {
		if w.err != nil {
			return 0, w.err
		}
		return 0, errClosed
	}
	return w.z.Write(p)
}

// Close writes the gzip trailer and returns the compressor to the pool.
func (w *writer) Close() error {
	z := w.z
	if z == nil {
		return w.err
	}
	w.z = nil
	err := z.Close()
	z.Reset(io.Discard)
	w.pool.Put(z)
	return err
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
func (eofReader) ReadByte() (byte, error)  { return 0, io.EOF }
