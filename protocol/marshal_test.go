package protocol

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"testing"
)

func TestMarshalRoundTrip(t *testing.T) {
	values := []interface{}{
		true, false,
		int8(math.MinInt8), int16(math.MaxInt16), int32(-1), int64(math.MinInt64),
		uint16(65535), float64(-1.25),
		"", "hello",
		[]byte(nil), []byte{}, []byte("bytes"),
		[]int32(nil), []int32{}, []int32{1, 2, 3},
		[]string{"a", ""},
		struct{}{},
		struct {
			ID    int64
			Name  string
			Tags  []string
			Blob  []byte
			Inner struct{ On bool }
		}{ID: 7, Name: "n", Tags: []string{"x", "y"}, Blob: []byte{0}, Inner: struct{ On bool }{true}},
	}
	for _, v := range values {
		t.Run(fmt.Sprintf("%T/%v", v, v), func(t *testing.T) {
			b, err := Marshal(-1, v)
			if err != nil {
				t.Fatal(err)
			}
			p := reflect.New(reflect.TypeOf(v))
			if err := Unmarshal(b, -1, p.Interface()); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p.Elem().Interface(), v) {
				t.Fatalf("got %#v, want %#v", p.Elem().Interface(), v)
			}
		})
	}
}

func TestMarshalBytes(t *testing.T) {
	cases := []struct {
		v    interface{}
		want string
	}{
		{int32(258), "00000102"},
		{"", "ffff"}, // top-level strings are nullable
		{"ab", "00026162"},
		{[]byte(nil), "ffffffff"},
		{[]int32{7}, "00000001 00000007"},
		{struct {
			A int16
			B string
		}{A: 1, B: ""}, "0001 0000"},
	}
	for _, c := range cases {
		b, err := Marshal(-1, c.v)
		if err != nil {
			t.Fatal(err)
		}
		if want := mustHex(t, c.want); !bytes.Equal(b, want) {
			t.Errorf("%#v: %x, want %x", c.v, b, want)
		}
	}
}

func TestMarshalVersions(t *testing.T) {
	// Both tag syntaxes select fields by version; untagged fields exist
	// only at version -1.
	type T struct {
		A int32  `kafka:"min=v0,max=v1"`
		B string `kafka:"v1-2"`
		C []byte `kafka:"v2+,nullable"`
		D int8
	}
	in := T{A: 42, B: "Hello", C: []byte("q"), D: 9}
	for _, c := range []struct {
		v   int16
		out T
	}{
		{-1, T{D: 9}},
		{0, T{A: 42}},
		{1, T{A: 42, B: "Hello"}},
		{2, T{B: "Hello", C: []byte("q")}},
	} {
		b, err := Marshal(c.v, in)
		if err != nil {
			t.Fatal(err)
		}
		var out T
		if err := Unmarshal(b, c.v, &out); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(out, c.out) {
			t.Errorf("v%d: %+v, want %+v", c.v, out, c.out)
		}
	}
}

func TestUnmarshalErrors(t *testing.T) {
	var s []string
	if err := Unmarshal(mustHex(t, "7fffffff"), -1, &s); err == nil {
		t.Fatal("no error for an impossible count")
	}
	var x int32
	if err := Unmarshal([]byte{1, 2}, -1, &x); err == nil {
		t.Fatal("no error for a short value")
	}
	if err := Unmarshal([]byte{1, 2, 3, 4}, -1, x); err == nil {
		t.Fatal("no error for a non-pointer")
	}
	// Trailing bytes (a newer version of a format) are ignored.
	if err := Unmarshal([]byte{0, 0, 0, 5, 0xff}, -1, &x); err != nil || x != 5 {
		t.Fatalf("x=%d err=%v", x, err)
	}
	if b, err := Marshal(-1, &x); err != nil || !bytes.Equal(b, []byte{0, 0, 0, 5}) {
		t.Fatalf("pointer: %x %v", b, err)
	}
	if _, err := Marshal(-1, (*int32)(nil)); err == nil {
		t.Fatal("no error for a nil pointer")
	}
	if _, err := Marshal(-1, map[string]int{}); err == nil {
		t.Fatal("no error for a map")
	}
}
