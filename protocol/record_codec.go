package protocol

import (
	"bytes"
	"fmt"
	"io"

	"github.com/segmentio/kafka-go/compress"
	"github.com/segmentio/kafka-go/internal/codecerr"
)

// rbMaxDecompressed bounds what one compressed batch (or legacy wrapper
// message) may expand to. Kafka bounds the compressed size of a batch
// (message.max.bytes), not its decompressed size; without a bound of our
// own a few kilobytes of hostile input could claim gigabytes of memory.
var rbMaxDecompressed = 256 << 20

// rbCodec returns the codec of c, or nil if there is none.
func rbCodec(c compress.Compression) compress.Codec {
	if c == compress.None {
		return nil
	}
	return c.Codec()
}

// rbDecompress returns the decompression of in by codec c, in a pooled
// buffer owned by the caller.
func rbDecompress(c compress.Compression, in []byte) (out *rbBuf, err error) {
	codec := rbCodec(c)
	if codec == nil {
		return nil, codecerr.Unknown(int8(c))
	}
	out = rbGetBuf()
	defer func() {
		// Codecs parse hostile bytes here; a panic in one must not take the
		// program down with it.
		if p := recover(); p != nil {
			err = fmt.Errorf("decompressing %s record batch: %v", c, p)
		}
		if err != nil {
			rbPutBuf(out)
			out = nil
		}
	}()
	if c == compress.Zstd {
		if done, err := rbZstdDecodeAll(out, in); done {
			if err != nil {
				return out, fmt.Errorf("decompressing %s record batch: %w", c, err)
			}
			if len(out.b) > rbMaxDecompressed {
				return out, fmt.Errorf("decompressing %s record batch: more than %d bytes", c, rbMaxDecompressed)
			}
			return out, nil
		}
	}
	zr := codec.NewReader(bytes.NewReader(in))
	defer zr.Close()
	lr := &io.LimitedReader{R: zr, N: int64(rbMaxDecompressed) + 1}
	if err := rbFill(out, lr); err != nil {
		return out, fmt.Errorf("decompressing %s record batch: %w", c, err)
	}
	if len(out.b) > rbMaxDecompressed {
		return out, fmt.Errorf("decompressing %s record batch: more than %d bytes", c, rbMaxDecompressed)
	}
	return out, nil
}

// rbCompress appends the compression of in by codec c to out.
func rbCompress(c compress.Compression, out *rbBuf, in []byte) error {
	codec := rbCodec(c)
	if codec == nil {
		return codecerr.Unknown(int8(c))
	}
	zw := codec.NewWriter(out)
	if _, err := zw.Write(in); err != nil {
		zw.Close()
		return err
	}
	return zw.Close()
}
