package compress_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/compress"
	"github.com/segmentio/kafka-go/compress/gzip"
	"github.com/segmentio/kafka-go/compress/snappy"
	"github.com/segmentio/kafka-go/compress/zstd"
)

func allCodecs() []compress.Codec {
	return []compress.Codec{
		&compress.GzipCodec,
		&gzip.Codec{Level: 9},
		&gzip.Codec{Level: 1},
		&compress.SnappyCodec,
		&snappy.Codec{Framing: snappy.Unframed},
		&snappy.Codec{Compression: snappy.FasterCompression},
		&snappy.Codec{Compression: snappy.BetterCompression},
		&snappy.Codec{Compression: snappy.BestCompression},
		&compress.Lz4Codec,
		&compress.ZstdCodec,
		&zstd.Codec{Level: 1},
		&zstd.Codec{Level: 11},
	}
}

func codecLabel(c compress.Codec) string {
	return fmt.Sprintf("%s/%+v", c.Name(), c)
}

type payload struct {
	name string
	data []byte
}

func payloads() []payload {
	rnd := rand.New(rand.NewSource(1))
	random := make([]byte, 1<<20)
	rnd.Read(random)
	line := []byte("offset=0123456789 key=user-42 value={\"a\":true} ")
	text := bytes.Repeat(line, (1<<20)/len(line)+1)[:1<<20]
	return []payload{
		{"empty", []byte{}},
		{"one-byte", []byte{'x'}},
		{"small", []byte("hello, kafka")},
		{"1MiB-random", random},
		{"1MiB-compressible", text},
	}
}

func compressAll(t testing.TB, c compress.Codec, data []byte, chunk int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := c.NewWriter(&buf)
	for rest := data; len(rest) > 0; {
		n := min(chunk, len(rest))
		m, err := w.Write(rest[:n])
		if err != nil || m != n {
			t.Fatalf("write: n=%d/%d err=%v", m, n, err)
		}
		rest = rest[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close writer: %v", err)
	}
	return buf.Bytes()
}

func decompressAll(c compress.Codec, data []byte) ([]byte, error) {
	r := c.NewReader(bytes.NewReader(data))
	out, err := io.ReadAll(r)
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	return out, err
}

func TestRoundTrip(t *testing.T) {
	for _, c := range allCodecs() {
		for _, p := range payloads() {
			for _, chunk := range []int{1 << 30, 1000, 7} {
				if chunk == 7 && len(p.data) > 1<<16 {
					continue // tiny writes over 1 MiB only slow the test down
				}
				t.Run(fmt.Sprintf("%s/%s/chunk=%d", codecLabel(c), p.name, chunk), func(t *testing.T) {
					z := compressAll(t, c, p.data, chunk)
					got, err := decompressAll(c, z)
					if err != nil {
						t.Fatalf("decompress: %v", err)
					}
					if !bytes.Equal(got, p.data) {
						t.Fatalf("round trip mismatch: got %d bytes, want %d", len(got), len(p.data))
					}
				})
			}
		}
	}
}

// Readers and writers come back from pools; a reused one must not carry
// anything over from its previous use, including after an error.
func TestPoolReuse(t *testing.T) {
	for _, c := range allCodecs() {
		t.Run(codecLabel(c), func(t *testing.T) {
			a := bytes.Repeat([]byte("first payload "), 5000)
			b := []byte("second")
			za := compressAll(t, c, a, 1<<30)
			zb := compressAll(t, c, b, 1<<30)

			// A reader abandoned half way, then closed.
			r := c.NewReader(bytes.NewReader(za))
			if _, err := r.Read(make([]byte, 10)); err != nil {
				t.Fatal(err)
			}
			r.Close()
			// A reader that failed on garbage.
			bad, _ := decompressAll(c, []byte("\x00\x01definitely not compressed"))
			_ = bad
			// A writer abandoned with buffered data.
			w := c.NewWriter(io.Discard)
			w.Write(a)
			w.Close()

			for i := 0; i < 3; i++ {
				if got := compressAll(t, c, b, 1<<30); !bytes.Equal(got, zb) {
					t.Fatalf("reused writer output differs: %x vs %x", got, zb)
				}
				got, err := decompressAll(c, zb)
				if err != nil || !bytes.Equal(got, b) {
					t.Fatalf("reused reader: %q, %v", got, err)
				}
			}
		})
	}
}

func TestConcurrentUse(t *testing.T) {
	for _, c := range allCodecs() {
		t.Run(codecLabel(c), func(t *testing.T) {
			var wg sync.WaitGroup
			errs := make(chan error, 4)
			for g := 0; g < 4; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					for i := 0; i < 3; i++ {
						data := bytes.Repeat([]byte(fmt.Sprintf("g%d-i%d;", g, i)), 100*(i+1))
						z := compressAll(t, c, data, 333)
						got, err := decompressAll(c, z)
						if err != nil || !bytes.Equal(got, data) {
							errs <- fmt.Errorf("goroutine %d iteration %d: err=%v equal=%v", g, i, err, bytes.Equal(got, data))
							return
						}
					}
				}(g)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

func TestUseAfterClose(t *testing.T) {
	for _, c := range allCodecs() {
		t.Run(codecLabel(c), func(t *testing.T) {
			var buf bytes.Buffer
			w := c.NewWriter(&buf)
			w.Write([]byte("abc"))
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			if _, err := w.Write([]byte("x")); err == nil {
				t.Fatal("Write after Close succeeded")
			}
			r := c.NewReader(bytes.NewReader(buf.Bytes()))
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if err := r.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			if _, err := r.Read(make([]byte, 1)); err == nil {
				t.Fatal("Read after Close succeeded")
			}
		})
	}
}

// Truncated and corrupted payloads must produce errors, never panics or a
// silently short result.
func TestCorruptInput(t *testing.T) {
	data := bytes.Repeat([]byte("some compressible text 1234567890 "), 3000)
	for _, c := range allCodecs() {
		t.Run(codecLabel(c), func(t *testing.T) {
			z := compressAll(t, c, data, 1<<30)
			for _, cut := range []int{1, len(z) / 2, len(z) - 1} {
				got, err := decompressAll(c, z[:cut])
				if err == nil && bytes.Equal(got, data) {
					t.Fatalf("truncated to %d bytes still decoded fully", cut)
				}
				if err == nil {
					t.Fatalf("truncated to %d bytes: no error (got %d bytes)", cut, len(got))
				}
			}
			rnd := rand.New(rand.NewSource(7))
			for i := 0; i < 200; i++ {
				bad := append([]byte(nil), z...)
				for j := 0; j < 3; j++ {
					bad[rnd.Intn(len(bad))] ^= byte(1 + rnd.Intn(255))
				}
				decompressAll(c, bad) // must not panic; error or not is codec dependent
			}
		})
	}
}

func TestIndependentPayloads(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "input.txt"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		file  string
		codec compress.Codec
	}{
		{"input.txt.gz", &compress.GzipCodec},
		{"input.txt.zst", &compress.ZstdCodec},
		{"input.txt.nocheck.zst", &compress.ZstdCodec},
		{"input.txt.lz4", &compress.Lz4Codec},
		{"input.txt.linked.lz4", &compress.Lz4Codec},
		{"input.txt.xerial.snappy", &compress.SnappyCodec},
		{"input.txt.raw.snappy", &compress.SnappyCodec},
		// The framing setting of a codec only affects writers.
		{"input.txt.xerial.snappy", &snappy.Codec{Framing: snappy.Unframed}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			z, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := decompressAll(tt.codec, z)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("decoded %d bytes, want %d", len(got), len(want))
			}
		})
	}
}

func TestCodecsTable(t *testing.T) {
	want := map[compress.Compression]string{
		compress.Gzip: "gzip", compress.Snappy: "snappy", compress.Lz4: "lz4", compress.Zstd: "zstd",
	}
	for c, name := range want {
		codec := c.Codec()
		if codec == nil {
			t.Fatalf("%d: no codec", c)
		}
		if codec.Name() != name || compress.Compression(codec.Code()) != c || c.String() != name {
			t.Errorf("%d: name %q code %d string %q", c, codec.Name(), codec.Code(), c)
		}
		if codec != compress.Codecs[c] {
			t.Errorf("%d: Codec() differs from the table", c)
		}
	}
	for _, c := range []compress.Compression{compress.None, 5, 7, -1} {
		if c.Codec() != nil {
			t.Errorf("%d: unexpected codec", c)
		}
		if c.String() != "uncompressed" {
			t.Errorf("%d: String() = %q", c, c.String())
		}
	}
	if compress.Codecs[compress.Gzip] != &compress.GzipCodec || compress.Codecs[compress.Zstd] != &compress.ZstdCodec {
		t.Error("table entries do not point at the global codecs")
	}
}

func TestTextMarshaling(t *testing.T) {
	for in, want := range map[string]compress.Compression{
		"none": compress.None, "uncompressed": compress.None, "gzip": compress.Gzip,
		"snappy": compress.Snappy, "lz4": compress.Lz4, "zstd": compress.Zstd,
		"0": compress.None, "1": compress.Gzip, "4": compress.Zstd,
	} {
		c := compress.Compression(-1)
		if err := c.UnmarshalText([]byte(in)); err != nil || c != want {
			t.Errorf("UnmarshalText(%q) = %d, %v; want %d", in, c, err, want)
		}
	}
	for _, in := range []string{"", "GZIP", "5", "-1", "brotli", " gzip"} {
		c := compress.Lz4
		err := c.UnmarshalText([]byte(in))
		if err == nil {
			t.Errorf("UnmarshalText(%q) accepted as %d", in, c)
			continue
		}
		if c != compress.Lz4 {
			t.Errorf("UnmarshalText(%q) modified the value on error", in)
		}
		msg := fmt.Sprintf("compression format must be one of none, uncompressed, gzip, snappy, lz4, zstd, not %q", in)
		if err.Error() != msg {
			t.Errorf("error = %q, want %q", err, msg)
		}
	}
	for c, want := range map[compress.Compression]string{compress.None: "uncompressed", compress.Snappy: "snappy"} {
		b, err := c.MarshalText()
		if err != nil || string(b) != want {
			t.Errorf("MarshalText(%d) = %q, %v", c, b, err)
		}
	}
	// Through encoding/json, which uses the text methods.
	var v struct{ C compress.Compression }
	if err := json.Unmarshal([]byte(`{"C":"zstd"}`), &v); err != nil || v.C != compress.Zstd {
		t.Fatalf("json: %v %d", err, v.C)
	}
	b, _ := json.Marshal(v)
	if string(b) != `{"C":"zstd"}` {
		t.Fatalf("json: %s", b)
	}
}

// Pooled codecs must not leave goroutines behind, whether or not readers and
// writers are closed (an unclosed one is simply dropped by the caller).
func TestNoGoroutineLeak(t *testing.T) {
	data := bytes.Repeat([]byte("goroutines "), 10000)
	big := bytes.Repeat([]byte("many blocks of output "), 200000) // 4.4 MB
	before := runtime.NumGoroutine()
	for _, c := range allCodecs() {
		zbig := compressAll(t, c, big, 1<<30)
		for i := 0; i < 5; i++ {
			z := compressAll(t, c, data, 1<<30)
			if _, err := decompressAll(c, z); err != nil {
				t.Fatal(err)
			}
			// Abandoned without Close, after writing or reading a little.
			w := c.NewWriter(io.Discard)
			w.Write(data[:1000])
			// Hiding bytes.Reader's Len method makes zstd use its streaming
			// path rather than decoding everything at once.
			r := c.NewReader(struct{ io.Reader }{bytes.NewReader(zbig)})
			r.Read(make([]byte, 100))
			r = c.NewReader(struct{ io.Reader }{bytes.NewReader(zbig)})
			r.Read(make([]byte, 100))
			r.Close()
		}
	}
	runtime.GC() // empties sync.Pools, dropping pooled instances
	runtime.GC()
	var after int
	for i := 0; i < 50; i++ {
		if after = runtime.NumGoroutine(); after <= before {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	buf := make([]byte, 1<<16)
	t.Fatalf("goroutines: %d before, %d after\n%s", before, after, buf[:runtime.Stack(buf, true)])
}

func BenchmarkCodecs(b *testing.B) {
	codecs := []compress.Codec{&compress.GzipCodec, &compress.SnappyCodec, &compress.Lz4Codec, &compress.ZstdCodec}
	text, err := os.ReadFile(filepath.Join("testdata", "input.txt"))
	if err != nil {
		b.Fatal(err)
	}
	inputs := []payload{{"text-100KB", text}, {"small-1KB", text[:1024]}}
	for _, c := range codecs {
		for _, in := range inputs {
			z := compressAll(b, c, in.data, 1<<30)
			b.Run(c.Name()+"/compress/"+in.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(in.data)))
				var buf bytes.Buffer
				for i := 0; i < b.N; i++ {
					buf.Reset()
					w := c.NewWriter(&buf)
					w.Write(in.data)
					if err := w.Close(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(z))/float64(len(in.data)), "ratio")
			})
			b.Run(c.Name()+"/decompress/"+in.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(in.data)))
				out := bytes.NewBuffer(make([]byte, 0, len(in.data)))
				src := bytes.NewReader(z)
				for i := 0; i < b.N; i++ {
					out.Reset()
					src.Reset(z)
					r := c.NewReader(src)
					if _, err := io.Copy(out, r); err != nil {
						b.Fatal(err)
					}
					r.Close()
				}
			})
		}
	}
}
