// Package zstd is kept so that programs importing it (formerly needed to
// register the codec) still build. The codec is always available now.
//
// Deprecated: use github.com/segmentio/kafka-go/compress/zstd.
package zstd

import "github.com/segmentio/kafka-go/compress/zstd"

// Code is the record batch attribute value of zstd.
const Code = 4

// DefaultCompressionLevel is the level used when none is given.
const DefaultCompressionLevel = 3

// CompressionCodec is the zstd codec.
type CompressionCodec = zstd.Codec

// NewCompressionCodec returns a zstd codec at DefaultCompressionLevel.
func NewCompressionCodec() *CompressionCodec {
	return NewCompressionCodecWith(DefaultCompressionLevel)
}

// NewCompressionCodecWith returns a zstd codec at the given level.
func NewCompressionCodecWith(level int) *CompressionCodec {
	return &CompressionCodec{Level: level}
}
