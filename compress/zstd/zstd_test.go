package zstd

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"

	kzstd "github.com/klauspost/compress/zstd"
)

// A frame header declaring ~60 GB of content (single segment, 8-byte
// content size) followed by one tiny raw block: the decoder must refuse it
// rather than allocate what the header asks for.
func forgedFrame() []byte {
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0}
	b = binary.LittleEndian.AppendUint64(b, 60<<30)
	// last raw block of 1 byte: header = last | type raw(0) | size<<3
	b = append(b, 1|1<<3, 0, 0, 'x')
	return b
}

func TestForgedContentSize(t *testing.T) {
	c := &Codec{}
	for name, src := range map[string]io.Reader{
		"bytes.Reader": bytes.NewReader(forgedFrame()),
		"stream":       struct{ io.Reader }{bytes.NewReader(forgedFrame())},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r := c.NewReader(src)
		_, err := io.ReadAll(r)
		r.Close()
		runtime.ReadMemStats(&after)
		if !errors.Is(err, kzstd.ErrDecoderSizeExceeded) {
			t.Errorf("%s: got %v, want the size limit error", name, err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
			t.Errorf("%s: allocated %d bytes", name, n)
		}
	}
}

func TestLevels(t *testing.T) {
	in := bytes.Repeat([]byte("zstd levels 0123456789 abcdefghij "), 4000)
	sizes := map[int]int{}
	for _, level := range []int{1, 3, 7, 19} {
		var buf bytes.Buffer
		w := (&Codec{Level: level}).NewWriter(&buf)
		w.Write(in)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		sizes[level] = buf.Len()
		r := (&Codec{}).NewReader(&buf)
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, in) {
			t.Fatalf("level %d: %v", level, err)
		}
	}
	// The zero value must behave as level 3.
	var buf bytes.Buffer
	w := (&Codec{}).NewWriter(&buf)
	w.Write(in)
	w.Close()
	if buf.Len() != sizes[3] {
		t.Errorf("default level wrote %d bytes, level 3 wrote %d", buf.Len(), sizes[3])
	}
}
