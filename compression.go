package kafka

import (
	"errors"

	"github.com/segmentio/kafka-go/compress"
)

// Compression identifies the codec of a record batch; see compress.Compression.
type Compression = compress.Compression

// The codecs Kafka defines. Compression(0) means no compression.
const (
	Gzip   Compression = compress.Gzip
	Snappy Compression = compress.Snappy
	Lz4    Compression = compress.Lz4
	Zstd   Compression = compress.Zstd
)

// CompressionCodec compresses and decompresses record batch payloads; see
// compress.Codec.
type CompressionCodec = compress.Codec

var errUnknownCodec = errors.New("the compression code is invalid or its codec has not been imported")
