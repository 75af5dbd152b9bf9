// Package lz4 provides the lz4 compression codec for Kafka record batches,
// which carries data in the LZ4 frame format.
package lz4

import (
	"errors"
	"io"
	"sync"

	plz4 "github.com/pierrec/lz4/v4"
)

// Codec is the compress.Codec implementation for lz4 (attribute code 3).
// Frames are written with the library defaults (4 MiB blocks, content
// checksum), which every Kafka client can read.
type Codec struct{}

var errClosed = errors.New("lz4: use of closed reader or writer")

var (
	readers sync.Pool // *plz4.Reader
	writers sync.Pool // *plz4.Writer
)

// Code implements compress.Codec.
func (c *Codec) Code() int8 { return 3 }

// Name implements compress.Codec.
func (c *Codec) Name() string { return "lz4" }

// NewReader implements compress.Codec.
func (c *Codec) NewReader(r io.Reader) io.ReadCloser {
	z, _ := readers.Get().(*plz4.Reader)
	if z == nil {
		z = plz4.NewReader(r)
	} else {
		z.Reset(r)
	}
	return &reader{z: z}
}

// NewWriter implements compress.Codec.
func (c *Codec) NewWriter(w io.Writer) io.WriteCloser {
	z, _ := writers.Get().(*plz4.Writer)
	if z == nil {
		z = plz4.NewWriter(w)
	} else {
		z.Reset(w)
	}
	return &writer{z: z}
}

type reader struct{ z *plz4.Reader }

func (r *reader) Read(p []byte) (int, error) {
	if r.z == nil {
		return 0, errClosed
	}
	return r.z.Read(p)
}

// WriteTo lets io.Copy skip an intermediate buffer.
func (r *reader) WriteTo(w io.Writer) (int64, error) {
	if r.z == nil {
		return 0, errClosed
	}
	return r.z.WriteTo(w)
}

// Close returns the decompressor to the pool; it never fails since reading
// has no trailing state to validate beyond what Read already checked.
func (r *reader) Close() error {
	if z := r.z; z != nil {
		r.z = nil
		z.Reset(nil) // drop the reference to the source
		readers.Put(z)
	}
	return nil
}

type writer struct{ z *plz4.Writer }

func (w *writer) Write(p []byte) (int, error) {
	if w.z == nil {
		return 0, errClosed
	}
	return w.z.Write(p)
}

// ReadFrom lets io.Copy skip an intermediate buffer.
func (w *writer) ReadFrom(r io.Reader) (int64, error) {
	if w.z == nil {
		return 0, errClosed
	}
	return w.z.ReadFrom(r)
}

// Close ends the frame (end mark and checksum) and returns the compressor to
// the pool.
func (w *writer) Close() error {
	z := w.z
	if z == nil {
		return nil
	}
	w.z = nil
	err := z.Close()
	z.Reset(nil)
	writers.Put(z)
	return err
}
