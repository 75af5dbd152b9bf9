package kafka

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math/rand"
	"net"
	"testing"
)

// Peek shows the next bytes of a response body as they come off the
// connection, whatever the mix with Read, ReadByte and Discard: the bytes
// seen are the frame's, in order, none skipped or repeated; a Peek larger
// than the read-ahead buffer is refused without consuming anything, and
// one past the end of the frame returns what is left with io.EOF, leaving
// the bytes after the frame on the connection.
func TestResponseBodyPeek(t *testing.T) {
	const size = 300_000
	frame := make([]byte, size)
	rng := rand.New(rand.NewSource(1))
	rng.Read(frame)
	const trailer = "NEXT"

	client, server := net.Pipe()
	defer client.Close()
	go func() {
		defer server.Close()
		rng := rand.New(rand.NewSource(2))
		all := append(append([]byte{}, frame...), trailer...)
		for len(all) > 0 { // small writes: many Peeks span several reads
			n := min(len(all), 1+rng.Intn(5000))
			if _, err := server.Write(all[:n]); err != nil {
				return
			}
			all = all[n:]
		}
	}()
	br := bufio.NewReaderSize(client, connReadBufferSize)
	b := &responseBody{br: br, nc: client, left: size}
	defer b.finish()

	pos := 0
	for pos < size {
		if b.Len() != size-pos {
			t.Fatalf("at %d: Len %d, want %d", pos, b.Len(), size-pos)
		}
		switch op := rng.Intn(5); op {
		case 0, 1: // Peek then Discard, sometimes more than is left
			n := 1 + rng.Intn(2*streamBufferSize/3)
			if op == 1 {
				n = 1 + rng.Intn(200)
			}
			got, err := b.Peek(n)
			want := frame[pos:min(pos+n, size)]
			if pos+n > size {
				if !errors.Is(err, io.EOF) || !bytes.Equal(got, want) {
					t.Fatalf("at %d: Peek(%d) past the end: %d bytes, %v", pos, n, len(got), err)
				}
				n = len(got)
			} else if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("at %d: Peek(%d): %d bytes (equal %v), %v", pos, n, len(got), bytes.Equal(got, want), err)
			}
			if d, err := b.Discard(n); d != n || err != nil {
				t.Fatalf("at %d: Discard(%d): %d, %v", pos, n, d, err)
			}
			pos += n
		case 2: // too large: nothing consumed
			if got, err := b.Peek(streamBufferSize + 1); got != nil || !errors.Is(err, bufio.ErrBufferFull) {
				t.Fatalf("at %d: Peek beyond the buffer: %d bytes, %v", pos, len(got), err)
			}
		case 3:
			p := make([]byte, 1+rng.Intn(3000))
			n, err := b.Read(p)
			if err != nil || n == 0 || !bytes.Equal(p[:n], frame[pos:pos+n]) {
				t.Fatalf("at %d: Read: %d, %v", pos, n, err)
			}
			pos += n
		case 4:
			c, err := b.ReadByte()
			if err != nil || c != frame[pos] {
				t.Fatalf("at %d: ReadByte: %v", pos, err)
			}
			pos++
		}
	}
	if got, err := b.Peek(1); len(got) != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("Peek at the end: %d bytes, %v", len(got), err)
	}
	rest := make([]byte, len(trailer))
	if _, err := io.ReadFull(br, rest); err != nil || string(rest) != trailer {
		t.Fatalf("after the frame: %q, %v", rest, err)
	}
}
