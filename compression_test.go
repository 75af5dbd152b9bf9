package kafka

import (
	"errors"
	"testing"

	"github.com/segmentio/kafka-go/compress"
)

func TestResolveCodec(t *testing.T) {
	for _, c := range []Compression{Gzip, Snappy, Lz4, Zstd} {
		codec, err := resolveCodec(int8(c))
		if err != nil || codec != compress.Codecs[c] || Compression(codec.Code()) != c {
			t.Errorf("%s: %v, %v", c, codec, err)
		}
		var _ CompressionCodec = codec
	}
	for _, code := range []int8{0, 5, 7, -1} {
		if codec, err := resolveCodec(code); codec != nil || !errors.Is(err, errUnknownCodec) {
			t.Errorf("code %d: %v, %v", code, codec, err)
		}
	}
}
