// Package lz4 is kept so that programs importing it (formerly needed to
// register the codec) still build. The codec is always available now.
//
// Deprecated: use github.com/segmentio/kafka-go/compress/lz4.
package lz4

import "github.com/segmentio/kafka-go/compress/lz4"

// Code is the record batch attribute value of lz4.
const Code = 3

// CompressionCodec is the lz4 codec.
type CompressionCodec = lz4.Codec

// NewCompressionCodec returns an lz4 codec.
func NewCompressionCodec() *CompressionCodec { return new(CompressionCodec) }
