package gzip

import (
	"bytes"
	"io"
	"testing"
)

func TestLegacyCodec(t *testing.T) {
	c := NewCompressionCodec()
	if int(c.Code()) != Code || c.Name() != "gzip" {
		t.Fatalf("code %d name %q", c.Code(), c.Name())
	}
	in := bytes.Repeat([]byte("legacy wrapper "), 1000)
	var buf bytes.Buffer
	w := c.NewWriter(&buf)
	w.Write(in)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r := c.NewReader(&buf)
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, in) {
		t.Fatalf("round trip: %v", err)
	}
}

func TestLegacyLevels(t *testing.T) {
	if c := NewCompressionCodec(); c.Level != DefaultCompressionLevel {
		t.Fatalf("level %d", c.Level)
	}
	if c := NewCompressionCodecLevel(7); c.Level != 7 {
		t.Fatalf("level %d", c.Level)
	}
}
