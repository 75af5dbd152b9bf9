package protocol

import (
	"sync"

	kzstd "github.com/klauspost/compress/zstd"
)

// rbZstdDecoders are decoders for rbZstdDecodeAll, synchronous (a
// concurrency of one: no goroutines of their own) and bounded like the
// streaming ones of compress/zstd.
var rbZstdDecoders sync.Pool // *kzstd.Decoder

// rbZstdWhole bounds the decompressed size rbZstdDecodeAll accepts from a
// frame header up front, relative to the compressed input: a header may
// claim any size, and the decoder allocates what it claims. Beyond it the
// streaming path is used, which grows with what is actually decoded.
func rbZstdWhole(in int) uint64 { return max(1<<20, 64*uint64(in)) }

// rbZstdDecodeAll decompresses in, a zstd payload whose first frame
// declares its size, into p in one call: the output is written once,
// straight into a buffer of the right size, where the streaming decoder
// copies every block through its own window and grows the output by
// doubling. It reports false (and leaves p alone) when in does not declare
// a size, or a size out of proportion with it; the caller then streams.
func rbZstdDecodeAll(p *rbBuf, in []byte) (bool, error) {
	var h kzstd.Header
	if err := h.Decode(in); err != nil || !h.HasFCS || h.FrameContentSize > rbZstdWhole(len(in)) {
		return false, nil
	}
	d, _ := rbZstdDecoders.Get().(*kzstd.Decoder)
	if d == nil {
		var err error
		// The frame's content checksum is not verified: the batch's
		// CRC-32C, checked before, covers every compressed byte; hashing
		// the output again would be a second pass over every byte.
		d, err = kzstd.NewReader(nil,
			kzstd.WithDecoderConcurrency(1),
			kzstd.IgnoreChecksum(true),
			kzstd.WithDecoderMaxMemory(uint64(rbMaxDecompressed)+1))
		if err != nil {
			return false, nil
		}
	}
	defer rbZstdDecoders.Put(d)
	if need := int(h.FrameContentSize); cap(p.b) < need {
		p.b = make([]byte, 0, need)
	}
	out, err := d.DecodeAll(in, p.b[:0])
	p.b = out
	return true, err
}
