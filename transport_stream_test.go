package kafka

import (
	"bufio"
	"errors"
	"io"
	"testing"
	"time"
)

// emptyReads returns data, then reads of nothing without an error, which
// no net.Conn does but a custom Dial's connection could.
type emptyReads struct{ data []byte }

func (r *emptyReads) Read(p []byte) (int, error) {
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

type noDeadline struct{}

func (noDeadline) SetReadDeadline(time.Time) error { return nil }

// A connection whose reads return nothing fails the body (and so the
// connection) instead of handing out stale bytes or spinning.
func TestResponseBodyEmptyReads(t *testing.T) {
	for _, small := range []bool{true, false} {
		src := &emptyReads{data: []byte("abc")}
		body := &responseBody{br: bufio.NewReaderSize(src, 16), nc: noDeadline{}, left: 100, released: make(chan struct{})}
		var err error
		got := 0
		for i := 0; i < 10 && err == nil; i++ {
			if small {
				_, err = body.ReadByte()
			} else {
				_, err = body.Read(make([]byte, 2*streamBufferSize))
			}
			if err == nil {
				got++
			}
		}
		if !errors.Is(err, io.ErrNoProgress) || !body.broken {
			t.Fatalf("small reads %v: after %d reads: %v (broken %v)", small, got, err, body.broken)
		}
		body.release()
	}
}
