// Package snappy encodes and decodes whole snappy payloads in memory, with
// or without the xerial framing that snappy-java (and so the Java Kafka
// client) writes.
package snappy

import (
	"bytes"
	"encoding/binary"
	"errors"

	ksnappy "github.com/klauspost/compress/snappy"
)

// ErrMalformed reports a payload whose xerial framing is broken: too short,
// or with a block length running past the end of the input.
var ErrMalformed = errors.New("malformed xerial framing")

// Layout of the framing: an 8-byte magic, two big-endian int32 (version,
// oldest compatible version), then blocks each preceded by a big-endian
// int32 length.
var magic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const (
	headerLen = 16
	blockSize = 32 * 1024
	// Upper bound on a snappy block's expansion (64 bytes out of a 3-byte
	// copy op); larger declared sizes are forged.
	maxRatio = 22
)

// Encode returns src as a single snappy block, without framing.
func Encode(src []byte) []byte {
	return ksnappy.Encode(nil, src)
}

// EncodeStream appends src to dst in xerial framing, cut into blocks of at
// most 32 KiB of input. The header is written only when dst is empty, so a
// non-empty dst must itself come from EncodeStream.
func EncodeStream(dst, src []byte) []byte {
	if len(dst) == 0 {
		dst = append(dst, magic...)
		dst = binary.BigEndian.AppendUint32(dst, 1)
		dst = binary.BigEndian.AppendUint32(dst, 1)
	}
	var block []byte
	for len(src) > 0 {
		n := min(len(src), blockSize)
		block = ksnappy.Encode(block[:cap(block)], src[:n])
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(block)))
		dst = append(dst, block...)
		src = src[n:]
	}
	return dst
}

// Decode decodes a framed or bare snappy payload.
func Decode(src []byte) ([]byte, error) {
	return DecodeInto(nil, src)
}

// DecodeInto is Decode writing into dst's storage (its whole capacity may be
// overwritten); a new slice is allocated when dst is too small.
//
// Input starting with the xerial magic is framed; anything else is one bare
// snappy block, however short. Empty input, and framed input with a
// truncated header, a block running past the end, or trailing bytes too
// short to be a length prefix, are rejected with ErrMalformed.
func DecodeInto(dst, src []byte) ([]byte, error) {
	if len(src) == 0 {
		return nil, ErrMalformed
	}
	if !bytes.HasPrefix(src, magic) {
		return decodeBlock(dst[:cap(dst)], src)
	}
	if len(src) < headerLen {
		return nil, ErrMalformed
	}
	out := dst[:0]
	if out == nil {
		out = make([]byte, 0, len(src))
	}
	var block []byte
	rest := src[headerLen:]
	for len(rest) > 0 {
		if len(rest) < 4 {
			return nil, ErrMalformed
		}
		size := binary.BigEndian.Uint32(rest)
		rest = rest[4:]
		if uint64(size) > uint64(len(rest)) {
			return nil, ErrMalformed
		}
		if size > 0 {
			var err error
			if block, err = decodeBlock(block[:cap(block)], rest[:size]); err != nil {
				return nil, err
			}
			out = append(out, block...)
		}
		rest = rest[size:]
	}
	return out, nil
}

func decodeBlock(dst, src []byte) ([]byte, error) {
	n, err := ksnappy.DecodedLen(src)
	if err != nil {
		return nil, err
	}
	if n > maxRatio*len(src) {
		return nil, ErrMalformed
	}
	out, err := ksnappy.Decode(dst, src)
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = []byte{}
	}
	return out, nil
}
