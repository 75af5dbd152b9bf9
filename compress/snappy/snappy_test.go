package snappy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand"
	"runtime"
	"testing"

	"github.com/klauspost/compress/s2"
	ksnappy "github.com/klauspost/compress/snappy"
)

// A snappy block written by hand from the format description: varint
// length 17, literal "abc", copy-1 (length 9, offset 3), copy-2 (length 5,
// offset 12).
var (
	handBlock   = []byte{0x11, 0x08, 'a', 'b', 'c', 0x15, 0x03, 0x12, 0x0c, 0x00}
	handDecoded = "abcabcabcabcabcab"
	xerialHead  = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1}
)

func frame(blocks ...[]byte) []byte {
	out := append([]byte(nil), xerialHead...)
	for _, b := range blocks {
		out = binary.BigEndian.AppendUint32(out, uint32(len(b)))
		out = append(out, b...)
	}
	return out
}

func encode(t *testing.T, c *Codec, writes ...[]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := c.NewWriter(&buf)
	for _, p := range writes {
		if n, err := w.Write(p); err != nil || n != len(p) {
			t.Fatalf("write: %d, %v", n, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func decode(c *Codec, z []byte) ([]byte, error) {
	r := c.NewReader(bytes.NewReader(z))
	defer r.Close()
	return io.ReadAll(r)
}

// parseFrames splits a xerial payload into its blocks, checking the header.
func parseFrames(t *testing.T, z []byte) [][]byte {
	t.Helper()
	if !bytes.HasPrefix(z, xerialHead) {
		t.Fatalf("missing xerial header: % x", z[:min(len(z), 16)])
	}
	var blocks [][]byte
	for rest := z[16:]; len(rest) > 0; {
		n := binary.BigEndian.Uint32(rest)
		blocks = append(blocks, rest[4:4+n])
		rest = rest[4+n:]
	}
	return blocks
}

func testInput(n int) []byte {
	rnd := rand.New(rand.NewSource(3))
	b := make([]byte, n)
	for i := range b {
		b[i] = "abcdefgh"[rnd.Intn(8)]
	}
	return b
}

func TestDecodeHandWrittenBlock(t *testing.T) {
	for name, z := range map[string][]byte{
		"raw":    handBlock,
		"framed": frame(handBlock),
		// an empty block is tolerated between real ones
		"framed-with-empty-block": frame(handBlock[:0], handBlock, nil),
	} {
		got, err := decode(&Codec{}, z)
		if err != nil || string(got) != handDecoded {
			t.Errorf("%s: got %q, %v", name, got, err)
		}
	}
	got, err := decode(&Codec{}, frame(handBlock, handBlock, handBlock))
	if err != nil || string(got) != handDecoded+handDecoded+handDecoded {
		t.Errorf("three frames: got %q, %v", got, err)
	}
}

func TestFramedLayout(t *testing.T) {
	in := testInput(100_000)
	z := encode(t, &Codec{}, in)
	blocks := parseFrames(t, z)
	if len(blocks) != 4 {
		t.Fatalf("%d blocks, want 4", len(blocks))
	}
	var joined []byte
	for i, b := range blocks {
		d, err := ksnappy.Decode(nil, b)
		if err != nil {
			t.Fatal(err)
		}
		if want := min(32768, len(in)-32768*i); len(d) != want {
			t.Errorf("block %d holds %d bytes, want %d", i, len(d), want)
		}
		// The default effort is klauspost/compress/snappy's encoder.
		if !bytes.Equal(b, ksnappy.Encode(nil, d)) {
			t.Errorf("block %d is not the default snappy encoding", i)
		}
		joined = append(joined, d...)
	}
	if !bytes.Equal(joined, in) {
		t.Fatal("blocks do not add up to the input")
	}
}

// Many small writes: a block is cut as soon as less than 1 KiB of the 32 KiB
// buffer is left, as the Java client and upstream kafka-go do.
func TestFramedSmallWrites(t *testing.T) {
	in := testInput(100 * 1000)
	var writes [][]byte
	for i := 0; i < len(in); i += 100 {
		writes = append(writes, in[i:i+100])
	}
	blocks := parseFrames(t, encode(t, &Codec{}, writes...))
	var sizes []int
	var joined []byte
	for _, b := range blocks {
		d, err := ksnappy.Decode(nil, b)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(d))
		joined = append(joined, d...)
	}
	want := []int{31800, 31800, 31800, 4600}
	if len(sizes) != len(want) {
		t.Fatalf("block sizes %v, want %v", sizes, want)
	}
	for i := range want {
		if sizes[i] != want[i] {
			t.Fatalf("block sizes %v, want %v", sizes, want)
		}
	}
	if !bytes.Equal(joined, in) {
		t.Fatal("blocks do not add up to the input")
	}
}

func TestUnframedIsOneBlock(t *testing.T) {
	in := testInput(200_000)
	encoders := map[Compression]func(dst, src []byte) []byte{
		DefaultCompression: ksnappy.Encode,
		FasterCompression:  s2.EncodeSnappy,
		BetterCompression:  s2.EncodeSnappyBetter,
		BestCompression:    s2.EncodeSnappyBest,
	}
	for level, enc := range encoders {
		c := &Codec{Framing: Unframed, Compression: level}
		z := encode(t, c, in[:1000], in[1000:])
		if !bytes.Equal(z, enc(nil, in)) {
			t.Errorf("level %d: unframed output is not a single block of the input", level)
		}
		got, err := decode(c, z)
		if err != nil || !bytes.Equal(got, in) {
			t.Errorf("level %d: decode: %v", level, err)
		}
	}
}

func TestEmptyPayload(t *testing.T) {
	for _, c := range []*Codec{{}, {Framing: Unframed}} {
		if z := encode(t, c); len(z) != 0 {
			t.Errorf("framing %d: empty input produced % x", c.Framing, z)
		}
	}
	for _, z := range [][]byte{nil, xerialHead, {0x00}} {
		got, err := decode(&Codec{}, z)
		if err != nil || len(got) != 0 {
			t.Errorf("% x: got %q, %v", z, got, err)
		}
	}
}

func TestShortRawBlocks(t *testing.T) {
	for n := 0; n <= 20; n++ {
		in := testInput(n)
		z := ksnappy.Encode(nil, in)
		got, err := decode(&Codec{}, z)
		if err != nil || !bytes.Equal(got, in) {
			t.Errorf("%d bytes (%d encoded): got %q, %v", n, len(z), got, err)
		}
	}
}

func TestMalformed(t *testing.T) {
	good := frame(handBlock)
	forgedLen := append([]byte{0xff, 0xff, 0xff, 0x7f}, handBlock[1:]...) // claims 256 MiB
	cases := map[string][]byte{
		"truncated prefix":   good[:18],
		"truncated body":     good[:len(good)-1],
		"huge frame length":  append(append([]byte(nil), xerialHead...), 0xff, 0xff, 0xff, 0xff, 1, 2, 3),
		"forged decoded len": forgedLen,
		"forged in frame":    frame(forgedLen),
		"corrupt block":      frame([]byte{0x05, 0x08, 'a', 'b'}),
		"garbage":            []byte("this is not snappy at all"),
	}
	for name, z := range cases {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got, err := decode(&Codec{}, z)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%s: no error, got %q", name, got)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
			t.Errorf("%s: allocated %d bytes for a %d-byte input", name, n, len(z))
		}
	}
	// Errors stick: a second Read reports the same failure.
	r := (&Codec{}).NewReader(bytes.NewReader(cases["corrupt block"]))
	_, err1 := r.Read(make([]byte, 10))
	_, err2 := r.Read(make([]byte, 10))
	if err1 == nil || !errors.Is(err2, err1) {
		t.Errorf("errors: %v then %v", err1, err2)
	}
}

func TestReadSmallBuffers(t *testing.T) {
	in := testInput(70_000)
	z := encode(t, &Codec{}, in)
	r := (&Codec{}).NewReader(bytes.NewReader(z))
	defer r.Close()
	var got []byte
	buf := make([]byte, 333)
	for {
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, in) {
		t.Fatal("mismatch")
	}
}

type failingWriter struct{ after int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.after <= 0 {
		return 0, errors.New("boom")
	}
	w.after--
	return len(p), nil
}

func TestWriteErrorsPropagate(t *testing.T) {
	in := testInput(100_000)
	w := (&Codec{}).NewWriter(&failingWriter{after: 2})
	if _, err := w.Write(in); err == nil {
		t.Fatal("write error lost")
	}
	if err := w.Close(); err == nil {
		t.Fatal("close did not report the earlier write error")
	}
}

func FuzzReader(f *testing.F) {
	f.Add(handBlock)
	f.Add(frame(handBlock))
	f.Add(frame(handBlock, nil, handBlock))
	f.Add(xerialHead)
	f.Add(ksnappy.Encode(nil, []byte("hello hello hello hello")))
	f.Fuzz(func(t *testing.T, z []byte) {
		got, err := decode(&Codec{}, z)
		if err != nil {
			return
		}
		// Whatever decodes must survive a round trip through both framings.
		for _, c := range []*Codec{{}, {Framing: Unframed}} {
			back, err := decode(c, encode(t, c, got))
			if err != nil || !bytes.Equal(back, got) {
				t.Fatalf("round trip of decoded output failed: %v", err)
			}
		}
	})
}
