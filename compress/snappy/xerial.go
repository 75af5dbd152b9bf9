package snappy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	ksnappy "github.com/klauspost/compress/snappy"
)

// xerial framing, as written by snappy-java's SnappyOutputStream:
//
//	magic   8 bytes  0x82 'S' 'N' 'A' 'P' 'P' 'Y' 0x00
//	version int32 BE (1)
//	compat  int32 BE (1)
//	then repeated: int32 BE block length, snappy block
const (
	xerialHeaderLen = 16
	// Input is cut into blocks of this size, matching snappy-java.
	xerialBlockSize = 32 * 1024
	// A block is emitted once less than this much room is left in the
	// input buffer, so that many small writes do not leave a sliver of a
	// block behind.
	xerialBlockSlack = 1024
	// Largest expansion a valid snappy block can have: a 3-byte copy op
	// yields at most 64 bytes. Declared lengths above this are forged and
	// rejected before anything is allocated for them.
	maxSnappyRatio = 22
	// Bodies are read in steps of at most this many bytes, so a forged
	// length prefix costs memory only once the bytes actually arrive.
	readStep = 256 * 1024
	// Buffers grown beyond this (by bare blocks, which hold a whole
	// payload) are dropped rather than kept alive in the pools.
	maxPooledBuffer = 4 << 20
)

func trim(b []byte) []byte {
	if cap(b) > maxPooledBuffer {
		return nil
	}
	return b[:0]
}

var xerialMagic = [8]byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

var (
	errClosed    = errors.New("snappy: use of closed reader or writer")
	errMalformed = errors.New("snappy: malformed payload")
)

var (
	readerPool sync.Pool // *xerialReader
	writerPool sync.Pool // *xerialWriter
)

func xerialHeader() [xerialHeaderLen]byte {
	var h [xerialHeaderLen]byte
	copy(h[:], xerialMagic[:])
	binary.BigEndian.PutUint32(h[8:], 1)  // version
	binary.BigEndian.PutUint32(h[12:], 1) // minimum compatible version
	return h
}

// decodeBlock decodes one snappy block into dst's storage, after checking
// that the declared decoded length is plausible for the input size.
func decodeBlock(dst, src []byte) ([]byte, error) {
	n, err := ksnappy.DecodedLen(src)
	if err != nil {
		return nil, fmt.Errorf("snappy: %w", err)
	}
	if n > maxSnappyRatio*len(src) {
		return nil, errMalformed
	}
	out, err := ksnappy.Decode(dst[:cap(dst)], src)
	if err != nil {
		return nil, fmt.Errorf("snappy: %w", err)
	}
	return out, nil
}

// readBody reads exactly n bytes from r into buf's storage, growing it no
// faster than data arrives.
func readBody(r io.Reader, buf []byte, n int) ([]byte, error) {
	buf = buf[:0]
	for len(buf) < n {
		want := n - len(buf)
		if want > readStep && len(buf)+want > cap(buf) {
			want = readStep
		}
		if len(buf)+want > cap(buf) {
			grown := make([]byte, len(buf), len(buf)+want)
			copy(grown, buf)
			buf = grown
		}
		k, err := io.ReadFull(r, buf[len(buf):len(buf)+want])
		buf = buf[:len(buf)+k]
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return buf, err
		}
	}
	return buf, nil
}

// xerialReader decodes a snappy payload, framed or not. The first 16 bytes
// decide: the xerial magic means framed; anything else is taken as one bare
// block spanning the whole payload.
type xerialReader struct {
	src     io.Reader
	started bool
	framed  bool
	done    bool
	err     error  // sticky
	in      []byte // compressed block
	out     []byte // decoded block
	off     int    // consumed part of out
}

func (x *xerialReader) reset(r io.Reader) {
	x.src = r
	x.started, x.framed, x.done = false, false, false
	x.err = nil
	x.in = trim(x.in)
	x.out = trim(x.out)
	x.off = 0
}

// fill decodes the next block into x.out. It returns io.EOF at the end of
// the payload.
func (x *xerialReader) fill() error {
	if x.err != nil {
		return x.err
	}
	if x.done {
		return io.EOF
	}
	x.out, x.off = x.out[:0], 0
	var err error
	if !x.started {
		x.started = true
		err = x.start()
	} else if x.framed {
		err = x.nextFrame()
	} else {
		err = io.EOF
	}
	if err != nil {
		if err == io.EOF {
			x.done = true
		} else {
			x.err = err
		}
	}
	return err
}

func (x *xerialReader) start() error {
	var head [xerialHeaderLen]byte
	n, err := io.ReadFull(x.src, head[:])
	switch {
	case n == 0 && err == io.EOF:
		return io.EOF // empty payload
	case n == xerialHeaderLen && bytes.Equal(head[:8], xerialMagic[:]):
		x.framed = true
		return x.nextFrame()
	case err != nil && err != io.ErrUnexpectedEOF:
		return err
	}
	// A bare block: the bytes already read are its start.
	x.in = append(x.in[:0], head[:n]...)
	if err == nil {
		if x.in, err = readAll(x.src, x.in); err != nil {
			return err
		}
	}
	x.out, err = decodeBlock(x.out, x.in)
	return err
}

func readAll(r io.Reader, buf []byte) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// nextFrame reads and decodes one length-prefixed block, skipping empty
// ones.
func (x *xerialReader) nextFrame() error {
	for {
		var prefix [4]byte
		if _, err := io.ReadFull(x.src, prefix[:]); err != nil {
			return err // io.EOF exactly at a block boundary ends the payload
		}
		size := binary.BigEndian.Uint32(prefix[:])
		if size == 0 {
			continue
		}
		if uint64(size) > uint64(maxInt) {
			return errMalformed
		}
		var err error
		if x.in, err = readBody(x.src, x.in, int(size)); err != nil {
			return err
		}
		x.out, err = decodeBlock(x.out, x.in)
		if err != nil || len(x.out) > 0 {
			return err
		}
	}
}

const maxInt = int(^uint(0) >> 1)

func (x *xerialReader) Read(p []byte) (int, error) {
	for x.off == len(x.out) {
		if len(p) == 0 {
			return 0, nil
		}
		if err := x.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, x.out[x.off:])
	x.off += n
	return n, nil
}

func (x *xerialReader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for {
		if x.off < len(x.out) {
			n, err := w.Write(x.out[x.off:])
			x.off += n
			total += int64(n)
			if err != nil {
				return total, err
			}
			continue
		}
		if err := x.fill(); err != nil {
			if err == io.EOF {
				return total, nil
			}
			return total, err
		}
	}
}

// xerialWriter buffers input and emits snappy blocks: one per 32 KiB when
// framed, a single one at close when not.
type xerialWriter struct {
	dst     io.Writer
	framed  bool
	encode  func(dst, src []byte) []byte
	wrote   bool // the xerial header is out
	err     error
	pending []byte
	encoded []byte
}

func (x *xerialWriter) reset(w io.Writer, framed bool, encode func(dst, src []byte) []byte) {
	x.dst = w
	x.framed = framed
	x.encode = encode
	x.wrote = false
	x.err = nil
	x.pending = trim(x.pending)
	x.encoded = trim(x.encoded)
}

func (x *xerialWriter) Write(p []byte) (int, error) {
	if x.err != nil {
		return 0, x.err
	}
	if !x.framed {
		x.pending = append(x.pending, p...)
		return len(p), nil
	}
	if cap(x.pending) < xerialBlockSize {
		x.pending = make([]byte, 0, xerialBlockSize)
	}
	written := 0
	for len(p) > 0 {
		n := copy(x.pending[len(x.pending):xerialBlockSize], p)
		x.pending = x.pending[:len(x.pending)+n]
		p = p[n:]
		written += n
		if xerialBlockSize-len(x.pending) < xerialBlockSlack {
			if err := x.flush(); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

// flush encodes and writes the buffered input, if any.
func (x *xerialWriter) flush() error {
	if x.err != nil {
		return x.err
	}
	if len(x.pending) == 0 {
		return nil
	}
	x.encoded = x.encode(x.encoded[:cap(x.encoded)], x.pending)
	x.pending = x.pending[:0]
	if x.framed {
		var head [xerialHeaderLen + 4]byte
		out := head[:0]
		if !x.wrote {
			h := xerialHeader()
			out = append(out, h[:]...)
		}
		out = binary.BigEndian.AppendUint32(out, uint32(len(x.encoded)))
		if _, err := x.dst.Write(out); err != nil {
			x.err = err
			return err
		}
		x.wrote = true
	}
	if _, err := x.dst.Write(x.encoded); err != nil {
		x.err = err
		return err
	}
	return nil
}
