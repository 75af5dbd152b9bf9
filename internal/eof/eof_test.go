package eof

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

func TestUnexpected(t *testing.T) {
	other := errors.New("other")
	for _, c := range []struct{ in, want error }{
		{nil, nil},
		{io.EOF, io.ErrUnexpectedEOF},
		{fmt.Errorf("reading: %w", io.EOF), io.ErrUnexpectedEOF},
		{io.ErrUnexpectedEOF, io.ErrUnexpectedEOF},
		{other, other},
	} {
		if got := Unexpected(c.in); got != c.want {
			t.Errorf("Unexpected(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
