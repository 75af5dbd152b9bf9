package protocol

import (
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"reflect"
	"slices"

	"github.com/segmentio/kafka-go/internal/eof"
)

// frameChunk bounds the memory committed to a frame before its bytes have
// actually arrived: a peer that announces a 2 GiB frame and sends ten bytes
// costs us this much, not 2 GiB.
const frameChunk = 64 << 10

// frameWhole is the size up to which a frame whose first chunk did arrive
// is then read into one buffer of its announced size, instead of growing
// by doubling: a fetch response at the default MaxBytes of 1 MB costs
// 1.06 MB of buffers and one copy of its first chunk, not 2 MB in five
// steps. Larger frames keep doubling, committing at most twice what
// arrived.
const frameWhole = 1 << 20

// readFrame reads one size-prefixed frame and returns its announced size and
// content. Any end of stream, even before the first byte, is reported as
// io.ErrUnexpectedEOF: a caller waiting for a frame never expects the
// stream to end.
func readFrame(r io.Reader) (int32, []byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, eof.Unexpected(err)
	}
	size := int32(binary.BigEndian.Uint32(hdr[:]))
	if size < 0 {
		return size, nil, fmt.Errorf("kafka protocol: invalid frame size %d", size)
	}
	n := int(size)
	buf := make([]byte, 0, min(n, frameChunk))
	for len(buf) < n {
		if len(buf) == cap(buf) {
			next := min(n, 2*cap(buf))
			if n <= frameWhole {
				next = n
			}
			grown := make([]byte, len(buf), next)
			copy(grown, buf)
			buf = grown
		}
		k, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+k]
		if err != nil {
			return size, nil, eof.Unexpected(err)
		}
	}
	return size, buf, nil
}

// looksLikeTLS reports whether the four bytes read as a frame size are the
// start of a TLS record (an alert, or a handshake), which is what a broker
// listening for TLS sends back to a plaintext client.
func looksLikeTLS(size int32) bool {
	b0 := byte(uint32(size) >> 24)
	if b0 != 0x15 && b0 != 0x16 {
		return false
	}
	version := uint16(uint32(size) >> 8)
	return version >= tls.VersionTLS10 && version <= tls.VersionTLS13
}

// responseHeaderFlexible tells whether a response of key at a flexible version has a
// tagged-fields section in its header: all do except ApiVersions, whose
// response header stays v0 so that a client can parse it before knowing
// which versions the broker supports.
func responseHeaderFlexible(key ApiKey, flexible bool) bool {
	return flexible && key != ApiVersions
}

// skipTaggedFields discards a tagged-fields section (of a header).
func skipTaggedFields(r *wireReader) {
	count := int(r.uvarint())
	if count > r.remaining()/2 {
		r.fail(errWireShort)
		return
	}
	for i := 0; i < count && r.err == nil; i++ {
		r.uvarint()
		r.take(int(r.uvarint()))
	}
}

// frameHeader is the header of a frame to encode: a request header when
// request is set, else a response header.
type frameHeader struct {
	request       bool
	tagged        bool // the header ends with an (empty) tagged-fields section
	key           ApiKey
	version       int16
	correlationID int32
	clientID      string
}

func (h *frameHeader) size() int {
	n := 4
	if h.request {
		n += 2 + 2 + 2 + len(h.clientID)
	}
	if h.tagged {
		n++
	}
	return n
}

func (h *frameHeader) write(w *wireWriter) {
	if h.request {
		w.int16(int16(h.key))
		w.int16(h.version)
	}
	w.int32(h.correlationID)
	if h.request {
		// The client ID is a nullable string (never compact, even in
		// header v2). Old brokers choke on a null one, so only the
		// flexible header, which they never see, sends "" as null.
		if h.clientID == "" && h.tagged {
			w.int16(-1)
		} else {
			w.int16(int16(len(h.clientID)))
			w.str(h.clientID)
		}
	}
	if h.tagged {
		w.uvarint(0)
	}
}

// encodeFrame renders one frame, header then the body of msg (with codec
// c), and hands it to w with a single Write.
func encodeFrame(w io.Writer, c *codec, msg Message, hdr *frameHeader) error {
	if p := reflect.ValueOf(msg); p.Kind() == reflect.Pointer && p.IsNil() {
		return fmt.Errorf("kafka protocol: cannot encode a nil %T", msg)
	}
	v := messageValue(msg)
	state := getEncodeState()
	defer putEncodeState(state)
	body := c.size(state, v)
	if state.err != nil {
		return state.err
	}
	total := hdr.size() + body
	if total > 1<<31-1-4 {
		return errBytesTooLong
	}
	if fa, ok := w.(frameAppender); ok {
		// The frame is encoded in place at the end of the caller's
		// buffer, instead of in one of ours and then copied there.
		p := fa.FrameBuffer()
		start := len(*p)
		ww := state.writer(slices.Grow(*p, 4+total))
		if err := writeFrame(ww, c, v, hdr, total); err != nil {
			*p = ww.b[:start]
			return err
		}
		*p = ww.b
		return nil
	}
	buf := wireGetBuffer(4 + total)
	defer wirePutBuffer(buf)
	ww := state.writer(*buf)
	err := writeFrame(ww, c, v, hdr, total)
	*buf = ww.b
	if err != nil {
		return err
	}
	_, err = w.Write(ww.b)
	return err
}

// frameAppender is implemented by writers that let a frame be encoded
// straight into their buffer: FrameBuffer returns it, and the encoder
// appends the frame to it (or leaves it as it was on error).
type frameAppender interface {
	FrameBuffer() *[]byte
}

// writeFrame encodes the frame of v, whose body takes total bytes after
// the size prefix, at the end of ww.b.
func writeFrame(ww *wireWriter, c *codec, v reflect.Value, hdr *frameHeader, total int) error {
	start := len(ww.b)
	ww.int32(int32(total))
	hdr.write(ww)
	c.encode(ww, v)
	if len(ww.b)-start != 4+total {
		// The size pass and the write pass disagree: a bug, never a
		// condition of the input. Refuse to send a corrupt frame.
		return fmt.Errorf("kafka protocol: internal error encoding %s: %d bytes written, %d expected", v.Type(), len(ww.b)-start, 4+total)
	}
	return nil
}

// messageValue returns the struct value behind msg (a pointer, usually).
func messageValue(msg Message) reflect.Value {
	v := reflect.ValueOf(msg)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	return v
}
