// Package snappy is kept so that programs importing it (formerly needed to
// register the codec) still build. The codec is always available now.
//
// Deprecated: use github.com/segmentio/kafka-go/compress/snappy.
package snappy

import "github.com/segmentio/kafka-go/compress/snappy"

// Code is the record batch attribute value of snappy.
const Code = 2

// CompressionCodec is the snappy codec.
type CompressionCodec = snappy.Codec

// Framing selects xerial framing or bare blocks.
type Framing = snappy.Framing

// Framings, as in compress/snappy.
const (
	Framed   = snappy.Framed
	Unframed = snappy.Unframed
)

// NewCompressionCodec returns a codec writing xerial-framed payloads.
func NewCompressionCodec() *CompressionCodec {
	return NewCompressionCodecFraming(Framed)
}

// NewCompressionCodecFraming returns a codec using the given framing.
func NewCompressionCodecFraming(framing Framing) *CompressionCodec {
	return &CompressionCodec{Framing: framing}
}
