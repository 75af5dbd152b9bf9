package kafka

import (
	"bytes"
	"testing"
)

func TestMessageTotalSize(t *testing.T) {
	tests := []struct {
		name string
		msg  Message
		want int32
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
