package snappy

import (
	"bytes"
	"io"
	"testing"
)

func TestLegacyCodec(t *testing.T) {
	c := NewCompressionCodec()
	if int(c.Code()) != Code || c.Name() != "snappy" {
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

func TestLegacyFraming(t *testing.T) {
	if c := NewCompressionCodec(); c.Framing != Framed {
		t.Fatalf("framing %d", c.Framing)
	}
	c := NewCompressionCodecFraming(Unframed)
	var buf bytes.Buffer
	w := c.NewWriter(&buf)
	w.Write([]byte("abc"))
	w.Close()
	if bytes.HasPrefix(buf.Bytes(), []byte("\x82SNAPPY")) {
		t.Fatal("unframed codec wrote xerial framing")
	}
}
