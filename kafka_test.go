package kafka

import (
	"bytes"
	"reflect"
	"testing"
)

func TestMarshalUnmarshal(t *testing.T) {
	type pair struct {
		A int16
		B string
		C []byte `kafka:"nullable"`
	}
	in := pair{A: 1, B: "ab", C: nil}
	b, err := Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	// int16, int16-prefixed string, null bytes (-1 length).
	want := []byte{0, 1, 0, 2, 'a', 'b', 0xff, 0xff, 0xff, 0xff}
	if !bytes.Equal(b, want) {
		t.Fatalf("got % x, want % x", b, want)
	}
	var out pair
	if err := Unmarshal(b, &out); err != nil || !reflect.DeepEqual(out, in) {
		t.Fatalf("round trip: %+v, %v", out, err)
	}
}

func TestVersionMarshal(t *testing.T) {
	type versioned struct {
		A int32 `kafka:"min=v0,max=v5"`
		B int16 `kafka:"min=v1,max=v5"`
	}
	v0, err := Version(0).Marshal(versioned{A: 7, B: 9})
	if err != nil {
		t.Fatal(err)
	}
	v1, err := Version(1).Marshal(versioned{A: 7, B: 9})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(v0, []byte{0, 0, 0, 7}) || !bytes.Equal(v1, []byte{0, 0, 0, 7, 0, 9}) {
		t.Fatalf("v0 % x, v1 % x", v0, v1)
	}
	var out versioned
	if err := Version(1).Unmarshal(v1, &out); err != nil || out != (versioned{A: 7, B: 9}) {
		t.Fatalf("got %+v, %v", out, err)
	}
}

func TestNewRecordReader(t *testing.T) {
	r := NewRecordReader(Record{Offset: 1, Value: NewBytes([]byte("x"))}, Record{Offset: 2})
	rec, err := r.ReadRecord()
	if err != nil || rec.Offset != 1 {
		t.Fatalf("%+v %v", rec, err)
	}
	v, err := ReadAll(rec.Value)
	if err != nil || string(v) != "x" {
		t.Fatalf("%q %v", v, err)
	}
	if rec, err = r.ReadRecord(); err != nil || rec.Offset != 2 || rec.Value != nil {
		t.Fatalf("%+v %v", rec, err)
	}
	if _, err = r.ReadRecord(); err == nil {
		t.Fatal("expected the end of the records")
	}
	if NewBytes(nil) != nil {
		t.Fatal("NewBytes(nil) must be nil")
	}
}
