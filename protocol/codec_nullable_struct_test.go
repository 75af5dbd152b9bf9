package protocol

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

type innerStruct struct {
	N int32 `kafka:"v0+"`
}

// A pointer to a struct is a nullable struct: INT8 -1 for nil, 1 and the
// struct otherwise; it must say it is nullable.
func TestNullableStruct(t *testing.T) {
	type withPtr struct {
		P *innerStruct `kafka:"v0+,nullable"`
		Q int16        `kafka:"v0+"`
	}
	for _, tc := range []struct {
		v    withPtr
		wire []byte
	}{
		{withPtr{Q: 7}, []byte{0xff, 0, 7}},
		{withPtr{P: &innerStruct{N: 5}, Q: 7}, []byte{1, 0, 0, 0, 5, 0, 7}},
	} {
		b, err := Marshal(0, tc.v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, tc.wire) {
			t.Fatalf("%+v: % x, want % x", tc.v, b, tc.wire)
		}
		var got withPtr
		if err := Unmarshal(b, 0, &got); err != nil {
			t.Fatal(err)
		}
		if (got.P == nil) != (tc.v.P == nil) || got.P != nil && *got.P != *tc.v.P || got.Q != tc.v.Q {
			t.Fatalf("%+v read back as %+v", tc.v, got)
		}
	}
	var got withPtr
	if err := Unmarshal([]byte{1, 0, 0}, 0, &got); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("truncated struct: %v", err)
	}

	type notNullable struct {
		P *innerStruct `kafka:"v0+"`
	}
	if _, err := Marshal(0, notNullable{}); err == nil || !strings.Contains(err.Error(), "nullable") {
		t.Fatalf("pointer without nullable: %v", err)
	}
}
