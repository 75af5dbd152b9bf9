// Package gzip is kept so that programs importing it (formerly needed to
// register the codec) still build. The codec is always available now.
//
// Deprecated: use github.com/segmentio/kafka-go/compress/gzip.
package gzip

import (
	kgzip "github.com/klauspost/compress/gzip"
	"github.com/segmentio/kafka-go/compress/gzip"
)

// Code is the record batch attribute value of gzip.
const Code = 1

// DefaultCompressionLevel lets the library pick its default level.
const DefaultCompressionLevel = kgzip.DefaultCompression

// CompressionCodec is the gzip codec.
type CompressionCodec = gzip.Codec

// NewCompressionCodec returns a gzip codec at the default level.
func NewCompressionCodec() *CompressionCodec {
	return NewCompressionCodecLevel(DefaultCompressionLevel)
}

// NewCompressionCodecLevel returns a gzip codec at the given level.
func NewCompressionCodecLevel(level int) *CompressionCodec {
	return &CompressionCodec{Level: level}
}
