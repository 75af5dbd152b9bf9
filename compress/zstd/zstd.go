// Package zstd provides the Zstandard compression codec for Kafka record
// batches.
package zstd

import (
	"errors"
	"io"
	"sync"

	kzstd "github.com/klauspost/compress/zstd"
)

// Codec is the compress.Codec implementation for zstd (attribute code 4).
// A Codec is safe for concurrent use and may be copied.
type Codec struct {
	// Level is the zstd compression level (1 to 22) used by writers; the
	// library maps it onto its four speed settings. Zero selects level 3.
	Level int
}

// defaultLevel is the level used when Codec.Level is zero.
const defaultLevel = 3

// maxDecodedSize bounds what a single payload may decompress to. zstd frame
// headers declare content and window sizes that the decoder allocates up
// front, so without a bound a few forged bytes could request gigabytes.
// Kafka record batches are far smaller than this in practice.
const maxDecodedSize = 256 << 20

var errClosed = errors.New("zstd: use of closed reader or writer")

// Decoders and encoders are costly to build (tables, history windows), so
// they are pooled. Both are created with a concurrency of one, which makes
// the library work synchronously in the caller's goroutine: an instance
// dropped by the pool owns no goroutine and needs no Close.
var decoders sync.Pool // *kzstd.Decoder

// encoders holds one pool per library speed setting, indexed by
// kzstd.EncoderLevel, so a Codec carries no state of its own.
var encoders [kzstd.SpeedBestCompression + 1]sync.Pool // *kzstd.Encoder

// Code implements compress.Codec.
func (c *Codec) Code() int8 { return 4 }

// Name implements compress.Codec.
func (c *Codec) Name() string { return "zstd" }

func (c *Codec) encoderLevel() kzstd.EncoderLevel {
	level := c.Level
	if level == 0 {
		level = defaultLevel
	}
	return kzstd.EncoderLevelFromZstd(level)
}

// NewReader implements compress.Codec.
func (c *Codec) NewReader(r io.Reader) io.ReadCloser {
	d, _ := decoders.Get().(*kzstd.Decoder)
	if d == nil {
		var err error
		d, err = kzstd.NewReader(nil,
			kzstd.WithDecoderConcurrency(1),
			kzstd.WithDecoderMaxMemory(maxDecodedSize),
		)
		if err != nil {
			return &reader{err: err}
		}
	}
	if err := d.Reset(r); err != nil {
		detach(d)
		return &reader{err: err}
	}
	return &reader{d: d}
}

// detach makes a decoder forget its source and pools it.
func detach(d *kzstd.Decoder) {
	// Reset with an empty stream cannot fail and drops the previous reader.
	_ = d.Reset(emptyStream{})
	decoders.Put(d)
}

type reader struct {
	d   *kzstd.Decoder
	err error
}

func (r *reader) Read(p []byte) (int, error) {
	if r.d == nil {
		return 0, r.closedErr()
	}
	return r.d.Read(p)
}

// WriteTo lets io.Copy skip an intermediate buffer.
func (r *reader) WriteTo(w io.Writer) (int64, error) {
	if r.d == nil {
		return 0, r.closedErr()
	}
	return r.d.WriteTo(w)
}

func (r *reader) closedErr() error {
	if r.err != nil {
		return r.err
	}
	return errClosed
}

// Close returns the decoder to the pool.
func (r *reader) Close() error {
	if d := r.d; d != nil {
		r.d = nil
		detach(d)
	}
	return nil
}

// NewWriter implements compress.Codec.
func (c *Codec) NewWriter(w io.Writer) io.WriteCloser {
	level := c.encoderLevel()
	pool := &encoders[level]
	e, _ := pool.Get().(*kzstd.Encoder)
	if e == nil {
		var err error
		e, err = kzstd.NewWriter(w,
			kzstd.WithEncoderLevel(level),
			kzstd.WithEncoderConcurrency(1),
			// An empty batch still yields a valid (empty) frame rather
			// than zero bytes, which other clients would fail to decode.
			kzstd.WithZeroFrames(true),
		)
		if err != nil {
			return &writer{err: err}
		}
	} else {
		e.Reset(w)
	}
	return &writer{e: e, pool: pool}
}

type writer struct {
	e    *kzstd.Encoder
	pool *sync.Pool
	err  error
}

func (w *writer) Write(p []byte) (int, error) {
	if w.e == nil {
		return 0, w.closedErr()
	}
	return w.e.Write(p)
}

// ReadFrom lets io.Copy skip an intermediate buffer.
func (w *writer) ReadFrom(r io.Reader) (int64, error) {
	if w.e == nil {
		return 0, w.closedErr()
	}
	return w.e.ReadFrom(r)
}

func (w *writer) closedErr() error {
	if w.err != nil {
		return w.err
	}
	return errClosed
}

// Close ends the frame and returns the encoder to the pool; the library
// documents encoders as reusable after Close followed by Reset.
func (w *writer) Close() error {
	e := w.e
	if e == nil {
		return w.err
	}
	w.e = nil
	err := e.Close()
	e.Reset(io.Discard)
	w.pool.Put(e)
	return err
}

type emptyStream struct{}

func (emptyStream) Read([]byte) (int, error) { return 0, io.EOF }
