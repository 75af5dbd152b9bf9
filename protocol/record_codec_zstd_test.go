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
// (EncodeAll, what franz-go and the Java client write) and as a stream
// that does not.
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

// Both payloads decompress to the same bytes, whichever path they take,
// and the one that declares its size takes the one-call path.
func TestZstdDecodeAllPath(t *testing.T) {
	text, whole, stream := zstdPayloads(t, 300_000)
	var h kzstd.Header
	if err := h.Decode(stream); err != nil || h.HasFCS {
		t.Fatalf("stream payload declares a size (%v): the test would not cover streaming", err)
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
	}
	p := &rbBuf{}
	if done, err := rbZstdDecodeAll(p, whole); !done || err != nil || !bytes.Equal(p.b, text) {
		t.Fatalf("whole payload: done=%v err=%v", done, err)
	}
	if done, _ := rbZstdDecodeAll(&rbBuf{}, stream); done {
		t.Fatal("a payload without a declared size took the one-call path")
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
