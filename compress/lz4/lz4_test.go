package lz4

import (
	"bytes"
	"io"
	"testing"

	plz4 "github.com/pierrec/lz4/v4"
)

// Output must be what a default pierrec/lz4 writer produces (frame format,
// default options), which is what other clients expect.
func TestDefaultFrame(t *testing.T) {
	in := bytes.Repeat([]byte("lz4 frame 0123456789 "), 5000)
	for i := 0; i < 3; i++ { // again through pooled writers
		var got, want bytes.Buffer
		w := (&Codec{}).NewWriter(&got)
		w.Write(in)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		ref := plz4.NewWriter(&want)
		ref.Write(in)
		ref.Close()
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatal("output differs from a default lz4 frame writer")
		}
		if !bytes.HasPrefix(got.Bytes(), []byte{0x04, 0x22, 0x4d, 0x18}) {
			t.Fatal("missing lz4 frame magic")
		}
		r := (&Codec{}).NewReader(&got)
		back, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(back, in) {
			t.Fatalf("round trip: %v", err)
		}
	}
}
