// Package compress defines the compression codecs that Kafka record batches
// may use, and the Compression values that name them on the wire.
package compress

import "io"

// Compression is the codec number stored in the low three bits of a record
// batch's attributes.
type Compression int8

const (
	None   Compression = 0
	Gzip   Compression = 1
	Snappy Compression = 2
	Lz4    Compression = 3
	Zstd   Compression = 4
)

// Codec compresses and decompresses record batch payloads.
type Codec interface {
	// Code returns the attribute value that identifies the codec.
	Code() int8
	// Name returns the codec's name, as Kafka configurations spell it.
	Name() string
	// NewReader returns a reader that decompresses what it reads from r.
	NewReader(r io.Reader) io.ReadCloser
	// NewWriter returns a writer that compresses what is written to it into w.
	NewWriter(w io.Writer) io.WriteCloser
}

// String returns the codec's name ("none", "gzip", "snappy", "lz4", "zstd").
func (c Compression) String() string {
	switch c {
	case None:
		return "none"
	case Gzip:
		return "gzip"
	case Snappy:
		return "snappy"
	case Lz4:
		return "lz4"
	case Zstd:
		return "zstd"
	}
	return "unknown"
}
