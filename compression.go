package kafka

import (
	"github.com/segmentio/kafka-go/compress"
	"github.com/segmentio/kafka-go/internal/codecerr"
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

// errUnknownCodec is matched by the error of a fetched batch compressed with
// a codec that is not registered (or an invalid code).
var errUnknownCodec = codecerr.ErrUnknown
