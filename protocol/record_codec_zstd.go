package protocol

import (
	"sync"

	kzstd "github.com/klauspost/compress/zstd"
)

// rbZstdDecoders are decoders for rbZstdDecodeAll, synchronous (a
// concurrency of one: no goroutines of their own), each bounded by the
// rbMaxDecompressed it was made with.
var rbZstdDecoders sync.Pool // *rbZstdDecoder

type rbZstdDecoder struct {
	d   *kzstd.Decoder
	max int // rbMaxDecompressed when d was made
}

// rbZstdWhole bounds the decompressed size rbZstdDecodeAll accepts from a
// frame header up front, relative to the compressed input: a header may
// claim any size, and the decoder allocates what it claims. Beyond it the
// streaming path is used, which grows with what is actually decoded.
func rbZstdWhole(in int) uint64 { return max(1<<20, 64*uint64(in)) }

// rbZstdDecodeAll decompresses in, a zstd payload, into p in one call: the
// output is written once, straight into the buffer, where the streaming
// decoder copies every block through its own window. A first frame that
// declares its size (EncodeAll: franz-go) gets a buffer of that size up
// front; one that does not (streaming encoders: this package's Writer) is
// decoded into the buffer as it is, grown as blocks are decoded, so memory
// still follows what is actually decoded. It reports
// false (and leaves p alone) when in does not start with a frame header, or
// declares a size out of proportion with it; the caller then streams.
func rbZstdDecodeAll(p *rbBuf, in []byte) (bool, error) {
	var h kzstd.Header
	if err := h.Decode(in); err != nil || h.FrameContentSize > rbZstdWhole(len(in)) {
		return false, nil
	}
	size := int(h.FrameContentSize)
	if !h.HasFCS {
		// A guess, which decoding corrects: batches compress to a
		// quarter of their size or so. The decoder takes its fast path
		// only while a whole block (128 KiB) fits after what it wrote.
		size = min(4*len(in), 1<<20) + 128<<10
	}
	d, _ := rbZstdDecoders.Get().(*rbZstdDecoder)
	if d == nil || d.max != rbMaxDecompressed {
		// The frame's content checksum is not verified: the batch's
		// CRC-32C, checked before, covers every compressed byte; hashing
		// the output again would be a second pass over every byte. The
		// memory bound stops a frame that does not declare its size once
		// its output passes rbMaxDecompressed, as the streaming path does.
		zd, err := kzstd.NewReader(nil,
			kzstd.WithDecoderConcurrency(1),
			kzstd.IgnoreChecksum(true),
			kzstd.WithDecoderMaxMemory(uint64(rbMaxDecompressed)+1))
		if err != nil {
			return false, nil
		}
		d = &rbZstdDecoder{d: zd, max: rbMaxDecompressed}
	}
	defer rbZstdDecoders.Put(d)
	p.b = rbGrowTo(p.b[:0], size)
	out, err := d.d.DecodeAll(in, p.b)
	p.b = out
	return true, err
}
