package snappy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand"
	"testing"

	codec "github.com/segmentio/kafka-go/compress/snappy"
)

var header = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1}

func input(n int) []byte {
	rnd := rand.New(rand.NewSource(int64(n)))
	b := make([]byte, n)
	for i := range b {
		b[i] = "xyz 0123"[rnd.Intn(8)]
	}
	return b
}

func TestEncodeDecode(t *testing.T) {
	for _, n := range []int{1, 7, 8, 100, 32 * 1024, 32*1024 + 1, 200_000} {
		in := input(n)
		for name, z := range map[string][]byte{"raw": Encode(in), "stream": EncodeStream(nil, in)} {
			got, err := Decode(z)
			if err != nil || !bytes.Equal(got, in) {
				t.Errorf("%d bytes %s: err %v, equal %v", n, name, err, bytes.Equal(got, in))
			}
		}
	}
}

func TestEncodeStreamLayout(t *testing.T) {
	in := input(70_000)
	z := EncodeStream(nil, in)
	if !bytes.HasPrefix(z, header) {
		t.Fatalf("header % x", z[:16])
	}
	var sizes []int
	for rest := z[16:]; len(rest) > 0; {
		n := binary.BigEndian.Uint32(rest)
		d, err := Decode(rest[4 : 4+n])
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(d))
		rest = rest[4+n:]
	}
	if len(sizes) != 3 || sizes[0] != 32768 || sizes[1] != 32768 || sizes[2] != 70_000-65536 {
		t.Fatalf("block sizes %v", sizes)
	}
	// The codec's stream reader reads it too.
	r := (&codec.Codec{}).NewReader(bytes.NewReader(z))
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, in) {
		t.Fatalf("codec reader: %v", err)
	}
}

func TestEncodeStreamAppends(t *testing.T) {
	a, b := input(40_000), input(1000)
	z := EncodeStream(EncodeStream(nil, a), b)
	if bytes.Count(z, header[:8]) != 1 {
		t.Fatal("header repeated when appending")
	}
	got, err := Decode(z)
	if err != nil || !bytes.Equal(got, append(append([]byte(nil), a...), b...)) {
		t.Fatalf("appended stream: %v", err)
	}
	got, err = Decode(EncodeStream(nil, nil))
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("empty stream: %q %v", got, err)
	}
}

func TestDecodeIntoReusesStorage(t *testing.T) {
	in := input(50_000)
	dst := make([]byte, 0, 100_000)
	for _, z := range [][]byte{Encode(in), EncodeStream(nil, in)} {
		got, err := DecodeInto(dst, z)
		if err != nil || !bytes.Equal(got, in) {
			t.Fatalf("DecodeInto: %v", err)
		}
		if &got[0] != &dst[:1][0] {
			t.Error("DecodeInto allocated although dst was large enough")
		}
	}
	// Too small a dst is not an error.
	got, err := DecodeInto(make([]byte, 3), EncodeStream(nil, in))
	if err != nil || !bytes.Equal(got, in) {
		t.Fatalf("small dst: %v", err)
	}
}

func TestMalformed(t *testing.T) {
	good := EncodeStream(nil, input(1000))
	for name, z := range map[string][]byte{
		"empty":           nil,
		"magic only":      header[:8],
		"partial header":  header[:12],
		"truncated block": good[:len(good)-1],
		"length too big":  append(append([]byte(nil), header...), 0, 0, 1, 0, 1, 2, 3),
		"partial prefix":  append(append([]byte(nil), good...), 0, 0),
	} {
		if got, err := Decode(z); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: got %d bytes, err %v; want ErrMalformed", name, len(got), err)
		}
	}
	// Bad snappy data inside valid framing reports the snappy error.
	bad := append(append([]byte(nil), header...), 0, 0, 0, 3, 0x05, 0x08, 'a')
	if _, err := Decode(bad); err == nil {
		t.Error("corrupt block accepted")
	}
	// A declared decoded size no snappy block could reach.
	if _, err := Decode([]byte{0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0, 0}); err == nil {
		t.Error("forged length accepted")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(EncodeStream(nil, []byte("fuzz me fuzz me fuzz me")))
	f.Add(Encode([]byte("0123456789 0123456789")))
	f.Fuzz(func(t *testing.T, z []byte) {
		got, err := Decode(z)
		if err == nil && got == nil {
			t.Fatal("nil result without error")
		}
		if err == nil {
			// The streaming reader must agree with the in-memory decoder.
			r := (&codec.Codec{}).NewReader(bytes.NewReader(z))
			via, rerr := io.ReadAll(r)
			if rerr != nil || !bytes.Equal(via, got) {
				t.Fatalf("codec reader disagrees: %v", rerr)
			}
		}
	})
}
