// Package compress defines the compression codecs that Kafka record batches
// may use, and the Compression values that name them on the wire.
package compress

import (
	"encoding"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The codec implementations, one package each.
import (
	"github.com/segmentio/kafka-go/compress/gzip"
	"github.com/segmentio/kafka-go/compress/lz4"
	"github.com/segmentio/kafka-go/compress/snappy"
	"github.com/segmentio/kafka-go/compress/zstd"
)

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
//
// Implementations must be safe for concurrent use: one codec value serves
// every reader and writer.
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

var (
	// GzipCodec is the codec registered in Codecs for Gzip. Its settings
	// (e.g. Level) may be changed at program start.
	GzipCodec gzip.Codec
	// SnappyCodec is the codec registered in Codecs for Snappy.
	SnappyCodec snappy.Codec
	// Lz4Codec is the codec registered in Codecs for Lz4.
	Lz4Codec lz4.Codec
	// ZstdCodec is the codec registered in Codecs for Zstd.
	ZstdCodec zstd.Codec

	// Codecs maps each Compression to its codec; None has none.
	Codecs = [...]Codec{
		None:   nil,
		Gzip:   &GzipCodec,
		Snappy: &SnappyCodec,
		Lz4:    &Lz4Codec,
		Zstd:   &ZstdCodec,
	}
)

// Codec returns the codec registered for c, or nil for None and for values
// outside the table.
func (c Compression) Codec() Codec {
	if c < 0 || int(c) >= len(Codecs) {
		return nil
	}
	return Codecs[c]
}

// String returns the codec's name ("gzip", "snappy", "lz4", "zstd"), or
// "uncompressed" when c has no codec.
func (c Compression) String() string {
	codec := c.Codec()
	if codec == nil {
		return "uncompressed"
	}
	return codec.Name()
}

// MarshalText implements encoding.TextMarshaler with the String form.
func (c Compression) MarshalText() ([]byte, error) {
	text := c.String()
	return []byte(text), nil
}

// UnmarshalText implements encoding.TextUnmarshaler. It accepts "none" and
// "uncompressed" for None, a codec name, or the numeric code as a decimal
// integer.
func (c *Compression) UnmarshalText(b []byte) error {
	s := string(b)
	if s == "none" || s == "uncompressed" {
		*c = None
		return nil
	}
	for _, codec := range Codecs {
		if codec != nil && codec.Name() == s {
			*c = Compression(codec.Code())
			return nil
		}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 && n < int64(len(Codecs)) {
		*c = Compression(n)
		return nil
	}
	names := []string{"none", "uncompressed"}
	for _, codec := range Codecs {
		if codec != nil {
			names = append(names, codec.Name())
		}
	}
	return fmt.Errorf("compression format must be one of %s, not %q", strings.Join(names, ", "), s)
}

var _ interface {
	encoding.TextMarshaler
	fmt.Stringer
} = Compression(0)

var _ encoding.TextUnmarshaler = new(Compression)
