package kafka

import (
	"encoding/binary"
	"fmt"
)

// FrameBuffer lets the protocol encoder write a request frame straight
// into f (it checks for this method), saving a copy of every request,
// record batches included, through a buffer of its own.
func (f *frameBuffer) FrameBuffer() *[]byte { return &f.b }

// responseFrameSize reads the size at the start of a response frame: the
// bytes after it, correlation ID first, so fewer than 4 is an error. Every
// reader of responses (a connection's read loop, a lease, the connection
// setup) checks frames this one way. address names the broker, if known.
func responseFrameSize(hdr []byte, address string) (int, error) {
	size := int32(binary.BigEndian.Uint32(hdr[:4]))
	if size >= 4 {
		return int(size), nil
	}
	if address == "" {
		return 0, fmt.Errorf("kafka: invalid response frame size %d", size)
	}
	return 0, fmt.Errorf("kafka: invalid response frame size %d from broker %s", size, address)
}
