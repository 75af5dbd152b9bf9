package gzip

import (
	"bytes"
	"io"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"
)

func compress(t *testing.T, c *Codec, in []byte) ([]byte, error) {
	t.Helper()
	var buf bytes.Buffer
	w := c.NewWriter(&buf)
	if _, err := w.Write(in); err != nil {
		w.Close()
		return nil, err
	}
	err := w.Close()
	return buf.Bytes(), err
}

func TestLevels(t *testing.T) {
	in := bytes.Repeat([]byte("gzip level test 0123456789 "), 3000)
	def, err := compress(t, &Codec{}, in)
	if err != nil {
		t.Fatal(err)
	}
	explicit, _ := compress(t, &Codec{Level: kgzip.DefaultCompression}, in)
	if !bytes.Equal(def, explicit) {
		t.Error("zero Level differs from the library default level")
	}
	// Each level comes from its own pool: alternating must not mix them.
	for i := 0; i < 3; i++ {
		for _, level := range []int{1, 9, kgzip.HuffmanOnly} {
			a, err := compress(t, &Codec{Level: level}, in)
			if err != nil {
				t.Fatal(err)
			}
			var ref bytes.Buffer
			zw, _ := kgzip.NewWriterLevel(&ref, level)
			zw.Write(in)
			zw.Close()
			if !bytes.Equal(a, ref.Bytes()) {
				t.Fatalf("level %d: output differs from a fresh writer", level)
			}
		}
	}
}

func TestInvalidLevel(t *testing.T) {
	for _, level := range []int{10, -4} {
		c := &Codec{Level: level}
		w := c.NewWriter(io.Discard)
		if _, err := w.Write([]byte("x")); err == nil {
			t.Errorf("level %d: Write succeeded", level)
		}
		if err := w.Close(); err == nil {
			t.Errorf("level %d: Close succeeded", level)
		}
	}
}

func TestBadHeader(t *testing.T) {
	r := (&Codec{}).NewReader(bytes.NewReader([]byte("not gzip data at all")))
	if _, err := r.Read(make([]byte, 10)); err == nil {
		t.Fatal("bad header accepted")
	}
	if err := r.Close(); err == nil {
		t.Fatal("Close hid the header error")
	}
}
