package protocol

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	kzstd "github.com/klauspost/compress/zstd"

	"github.com/segmentio/kafka-go/compress"
)

// zstdPayloads returns text compressed as one frame that declares its size
// (EncodeAll, what franz-go writes) and as a stream that does not (this
// package's Writer).
func zstdPayloads(t testing.TB, n int) (text, whole, stream []byte) {
	var sb strings.Builder
	for i := 0; sb.Len() < n; i++ {
		fmt.Fprintf(&sb, "event %d user %d status ok partition %d offset %d ", i, i*7919%10007, i%3, i)
	}
	text = []byte(sb.String())
	enc, err := kzstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	whole = enc.EncodeAll(text, nil)
	var buf bytes.Buffer
	enc.Reset(&buf)
	enc.Write(text)
	enc.Close()
	return text, whole, buf.Bytes()
}

// Both payloads decompress to the same bytes in one call, the one that does
// not declare its size included (into a buffer smaller than it, grown as it
// is decoded).
func TestZstdDecodeAllPath(t *testing.T) {
	text, whole, stream := zstdPayloads(t, 300_000)
	var h kzstd.Header
	if err := h.Decode(stream); err != nil || h.HasFCS {
		t.Fatalf("stream payload declares a size (%v): the test would not cover it", err)
	}
	for name, in := range map[string][]byte{"whole": whole, "stream": stream} {
		out, err := rbDecompress(compress.Zstd, in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(out.b, text) {
			t.Fatalf("%s: decompressed %d bytes differ from the %d written", name, len(out.b), len(text))
		}
		rbPutBuf(out)
		p := &rbBuf{}
		if done, err := rbZstdDecodeAll(p, in); !done || err != nil || !bytes.Equal(p.b, text) {
			t.Fatalf("%s payload: done=%v err=%v", name, done, err)
		}
	}
}

// A frame that does not declare its size is decoded in one call too, so
// the decoder's own bound must stop it: a few bytes that expand to 8 MiB
// fail once past rbMaxDecompressed, without the buffer growing to the
// whole expansion.
func TestZstdDecodeAllBoundsUndeclaredSize(t *testing.T) {
	defer func(n int) { rbMaxDecompressed = n }(rbMaxDecompressed)
	rbMaxDecompressed = 1 << 20
	var buf bytes.Buffer
	enc, err := kzstd.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	enc.Write(make([]byte, 8<<20))
	enc.Close()
	var h kzstd.Header
	if err := h.Decode(buf.Bytes()); err != nil || h.HasFCS {
		t.Fatalf("payload declares a size (%v): the test would not cover it", err)
	}
	p := &rbBuf{}
	done, err := rbZstdDecodeAll(p, buf.Bytes())
	if !done || err == nil {
		t.Fatalf("8 MiB decoded under a 1 MiB bound: done=%v err=%v", done, err)
	}
	if cap(p.b) > 2<<20 {
		t.Fatalf("the output grew to %d bytes under a 1 MiB bound", cap(p.b))
	}
	if _, err := rbDecompress(compress.Zstd, buf.Bytes()); err == nil {
		t.Fatal("rbDecompress accepted 8 MiB under a 1 MiB bound")
	}
}

// A frame header that claims far more than its input could hold is not
// trusted with an allocation of that size: the streaming path takes it
// (and fails on the missing data).
func TestZstdDecodeAllDistrustsHugeClaims(t *testing.T) {
	_, whole, _ := zstdPayloads(t, 4<<20) // compresses to far less than 4 MiB / 64
	if done, _ := rbZstdDecodeAll(&rbBuf{}, whole[:64]); done {
		t.Fatal("64 bytes claiming megabytes were decoded in one call")
	}
	if _, err := rbDecompress(compress.Zstd, whole[:64]); err == nil {
		t.Fatal("truncated frame accepted")
	}
}

func BenchmarkZstdDecompress(b *testing.B) {
	text, whole, stream := zstdPayloads(b, 1<<20)
	for name, in := range map[string][]byte{"declared-size": whole, "stream": stream} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				out, err := rbDecompress(compress.Zstd, in)
				if err != nil {
					b.Fatal(err)
				}
				rbPutBuf(out)
			}
		})
	}
}
