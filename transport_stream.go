package kafka

import (
	"bufio"
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/segmentio/kafka-go/internal/eof"
	"github.com/segmentio/kafka-go/protocol"
)

// streamedRequest is a request whose sender reads the response off the
// connection as it arrives, instead of the connection's read loop reading
// it whole into memory first: a partition Reader parses records from the
// socket as upstream's does, and so holds one record at a time rather than
// a whole fetch response.
//
// Only requests that get a connection of their own (needsOwnConn) may be
// streamed: the connection's read loop waits while the sender reads, so
// nothing else could be answered on it meanwhile.
//
// Ownership of the connection's read side, in order:
//
//	read loop: reads the frame header, hands a responseBody to the call,
//	           then waits for it to be released;
//	sender:    reads (part of) the body through it, then releases it;
//	read loop: skips whatever the sender left of the body, and goes on.
//
// A body whose reads failed (the connection broke, the sender's context
// ended while it waited for bytes) ends the connection.
type streamedRequest interface {
	protocol.Message
	// wireMessage is the request to encode.
	wireMessage() protocol.Message
	// streamOptions gives the context that bounds reading the body (its
	// end interrupts a read in progress) and how long one read may wait
	// for the broker (zero: no limit).
	streamOptions() (context.Context, time.Duration)
	// readStream reads the response from body, positioned after the
	// correlation ID of the response header.
	readStream(body *responseBody, version int16) (protocol.Message, error)
}

// responseBody is the part of a response frame after its correlation ID,
// read straight from the connection's buffered reader. It implements
// protocol.StreamSource. Its reads are made by one goroutine (the
// sender), except interrupt.
type responseBody struct {
	br      *bufio.Reader
	nc      interface{ SetReadDeadline(time.Time) error }
	left    int   // bytes of the frame not taken from br yet
	err     error // sticky: why reading stopped
	broken  bool  // err came from the connection, which is unusable
	timeout time.Duration

	// buf holds bytes taken from br and not read yet (buf[r:w]). The
	// connection's own buffer is small (connReadBufferSize, for idle
	// connections); a body read through it would take one system call
	// per 4 KiB, a fifth of a 1 KiB-message consumer's CPU.
	buf  *[streamBufferSize]byte
	r, w int

	mu          sync.Mutex // guards the deadline against interrupt
	stopped     bool       // interrupted or released: no more deadlines
	deadlineSet bool

	released chan struct{}
}

// streamBufferSize is the read-ahead of a response body.
const streamBufferSize = 32 << 10

var streamBuffers = sync.Pool{New: func() any { return new([streamBufferSize]byte) }}

// errStreamInterrupted is the error of a read cut short by the end of the
// sender's context.
var errStreamInterrupted = errors.New("kafka: reading the response was interrupted")

// handOver gives the body of a frame of size bytes (after the correlation
// ID) to call, and waits until its receiver released it. It returns an
// error when the connection can no longer be read.
func (c *brokerConn) handOver(br *bufio.Reader, call *pendingCall, size int) error {
	if _, err := br.Discard(8); err != nil { // size and correlation ID, peeked
		call.result <- callResult{err: eof.Unexpected(err)}
		return eof.Unexpected(err)
	}
	body := &responseBody{br: br, nc: c.nc, left: size, released: make(chan struct{})}
	call.result <- callResult{body: body}
	<-body.released
	if body.broken {
		return eof.Unexpected(body.err)
	}
	if body.left > 0 {
		// What the receiver did not read, bounded like its own waits
		// were: a broker that stalls here does not hold the connection.
		if body.timeout > 0 {
			c.nc.SetReadDeadline(time.Now().Add(body.timeout))
		}
		_, err := br.Discard(body.left)
		if err != nil {
			return eof.Unexpected(err)
		}
		if body.timeout > 0 {
			c.nc.SetReadDeadline(time.Time{})
		}
	}
	return nil
}

// consume lets req read the body of its response, then gives the
// connection back to its read loop.
func (c *brokerConn) consume(req streamedRequest, body *responseBody, version int16) (protocol.Message, error) {
	ctx, timeout := req.streamOptions()
	body.timeout = timeout
	stop := interruptOnDone(ctx, body.interrupt)
	msg, err := req.readStream(body, version)
	stop()
	body.release()
	if body.err != nil {
		// The connection failed under the reader: that, not what the
		// decoder made of it, is the error.
		if errors.Is(body.err, errStreamInterrupted) {
			return nil, ctxError(ctx, body.err)
		}
		return nil, eof.Unexpected(body.err)
	}
	return msg, err
}

// arm gives the next wait for the broker its deadline.
func (b *responseBody) arm() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return errStreamInterrupted
	}
	if b.timeout > 0 {
		b.nc.SetReadDeadline(time.Now().Add(b.timeout))
		b.deadlineSet = true
	}
	return nil
}

// interrupt ends the read in progress, if any, and every later one.
func (b *responseBody) interrupt() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.stopped {
		b.stopped = true
		b.deadlineSet = true
		b.nc.SetReadDeadline(time.Unix(1, 0))
	}
}

// release hands the connection back to the read loop. The read deadline is
// cleared unless a read failed (the connection is then closed anyway): an
// interruption that found no read in progress leaves the connection
// usable, the read loop skipping the rest of the response.
func (b *responseBody) release() {
	b.mu.Lock()
	b.stopped = true
	if b.deadlineSet && !b.broken {
		b.nc.SetReadDeadline(time.Time{})
	}
	b.mu.Unlock()
	if b.buf != nil {
		streamBuffers.Put(b.buf)
		b.buf, b.r, b.w = nil, 0, 0
	}
	close(b.released)
}

// fail records the error of a read from the connection, which is then
// unusable.
func (b *responseBody) fail(err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	b.mu.Lock()
	if b.stopped && isTimeout(err) {
		err = errStreamInterrupted
	}
	b.mu.Unlock()
	b.err, b.broken = err, true
	return err
}

// armOrStop gives the next wait its deadline, or records that reading was
// interrupted before it started (the connection stays usable).
func (b *responseBody) armOrStop() error {
	if err := b.arm(); err != nil {
		b.err = err
		return err
	}
	return nil
}

// readConn reads into p the next bytes of the frame, at most those left:
// those br holds, or as many as one read from the socket gives (with br
// empty, a read of at least its size goes straight to the socket).
func (b *responseBody) readConn(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.left == 0 {
		return 0, io.EOF
	}
	if b.br.Buffered() == 0 {
		if err := b.armOrStop(); err != nil {
			return 0, err
		}
	}
	n, err := b.br.Read(p[:min(len(p), b.left)])
	b.left -= n
	if n == 0 {
		if err == nil {
			err = io.ErrNoProgress // a connection that reads nothing
		}
		return 0, b.fail(err)
	}
	return n, nil
}

// fill refills buf, which is empty, from the connection.
func (b *responseBody) fill() error {
	if b.buf == nil {
		b.buf = streamBuffers.Get().(*[streamBufferSize]byte)
	}
	n, err := b.readConn(b.buf[:])
	b.r, b.w = 0, n
	return err
}

func (b *responseBody) Read(p []byte) (int, error) {
	if b.r == b.w {
		if len(p) >= streamBufferSize {
			return b.readConn(p) // large reads skip buf
		}
		if err := b.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, b.buf[b.r:b.w])
	b.r += n
	return n, nil
}

func (b *responseBody) ReadByte() (byte, error) {
	if b.r == b.w {
		if err := b.fill(); err != nil {
			return 0, err
		}
	}
	c := b.buf[b.r]
	b.r++
	return c, nil
}

// Discard skips n bytes of the body (protocol.BatchStream skips what a
// reader did not read through it); io.EOF if the body holds fewer.
func (b *responseBody) Discard(n int) (int, error) {
	done := 0
	for done < n {
		if b.r == b.w {
			if err := b.fill(); err != nil {
				return done, err
			}
		}
		k := min(n-done, b.w-b.r)
		b.r += k
		done += k
	}
	return done, nil
}
