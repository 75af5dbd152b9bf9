package kafka

import (
	"bytes"
	"testing"
)

func TestMessageTotalSize(t *testing.T) {
	tests := []struct {
		name string
		msg  Message
		want int64
	}{
		// CRC, magic, attributes, timestamp and the two length prefixes,
		// plus one byte for the empty header list.
		{"empty", Message{}, 22 + 1},
		{"key and value", Message{Key: []byte("k"), Value: []byte("hello")}, 22 + 6 + 1},
		{
			// header count 1 -> 1 byte; key "a": 1+1; value of 200 bytes:
			// zig-zag(200)=400 needs a 2-byte varint, +200.
			"headers",
			Message{Key: []byte("k"), Value: []byte("hello"), Headers: []Header{{Key: "a", Value: bytes.Repeat([]byte("x"), 200)}}},
			22 + 6 + 1 + 2 + 2 + 200,
		},
		{
			// 64 headers: zig-zag(64)=128 needs 2 bytes.
			"many headers",
			Message{Headers: make([]Header, 64)},
			22 + 2 + 64*2,
		},
	}
	// Past 2 GiB, from headers sharing one 1 MiB slice (so the test
	// allocates 1 MiB): the size must not wrap around an int32.
	shared := make([]byte, 1<<20)
	huge := make([]Header, 4097)
	for i := range huge {
		huge[i].Value = shared
	}
	tests = append(tests, struct {
		name string
		msg  Message
		want int64
	}{
		// zig-zag(4097) needs 2 bytes; each header: empty key (1), value
		// length zig-zag(1<<20) = 1<<21, a 4-byte varint, and the value.
		"over 4 GiB of shared headers", Message{Headers: huge}, 22 + 2 + 4097*(1+4+1<<20),
	})
	for _, tt := range tests {
		if got := tt.msg.totalSize(); got != tt.want {
			t.Errorf("%s: totalSize() = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestZigzagVarintSize(t *testing.T) {
	for v, want := range map[int64]int{0: 1, -1: 1, 63: 1, 64: 2, -64: 1, -65: 2, 8191: 2, 8192: 3, 1 << 40: 6} {
		if got := zigzagVarintSize(v); got != want {
			t.Errorf("zigzagVarintSize(%d) = %d, want %d", v, got, want)
		}
	}
}
