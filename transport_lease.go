package kafka

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/segmentio/kafka-go/internal/eof"
	"github.com/segmentio/kafka-go/protocol"
)

// A connLease is a connection of its own, checked out of a broker's pool
// for one request at a time: the requests that the broker may hold for a
// long time (needsOwnConn), and the Reader's fetches, whose responses their
// holder reads off the socket itself, as they arrive. Such a connection
// has no read loop: between checkout and release only the holder writes
// and reads it, on its own goroutine, so nothing is handed between
// goroutines and no other request can wait behind it.
//
// The holder sends a request (send), reads its response (response, then
// the returned body, or roundTrip for a response decoded whole), and calls
// release once, typically deferred. A response read to its end leaves the
// connection ready for the next lease; one left unread, even one not
// started (the holder's context ended first), is skipped in the background
// (bounded by the holder's timeouts) before the connection goes back to the
// pool (an interruption, even of a read in progress, leaves the socket
// where the last read stopped); one whose reading failed closes the
// connection, and so does one left unread with no timeout to bound the
// skip.
type connLease struct {
	pool *connPool
	c    *brokerConn
	cl   *cluster // set by Transport.lease: released with the lease

	body     responseBody // the response being read, if any
	reading  bool         // body belongs to a response
	awaiting bool         // a request was sent and its response not asked for
	stopBody func() bool  // ends the interruption of body's reads by ctx
	released bool

	// The response's frame header (size and correlation ID) as read so
	// far: a holder interrupted before all 8 bytes arrived leaves the
	// rest of the header, and the whole body, to skip (release).
	id          int32
	hdr         [8]byte
	hdrRead     int
	readTimeout time.Duration

	// settle, from the request's context (withSettleSlot), is told when
	// the connection is done with a Produce abandoned unanswered.
	settle *settleSlot
}

// A settleSlot is how the sender of a Produce (the Writer) learns when a
// request it gave up on unanswered can no longer be appended: a broker
// works on a connection's requests in order and may still append one
// whose sender stopped waiting. The lease keeps such a connection and
// skips the response in the background (abandonedProduceBound), and done
// closes when that ends, answered or not; it stays nil when the request
// was answered, never sent, or its connection closed at once.
type settleSlot struct {
	done <-chan struct{}
	// cl is the cluster the request went through (cluster.send): the
	// skip keeps it alive, so that CloseIdleConnections does not cut the
	// connection the sender waits on.
	cl *cluster
}

type settleSlotKey struct{}

// withSettleSlot returns ctx carrying slot, for a Produce sent with it.
func withSettleSlot(ctx context.Context, slot *settleSlot) context.Context {
	return context.WithValue(ctx, settleSlotKey{}, slot)
}

// abandonedProduceBound bounds each wait for the rest of a Produce's
// response once its sender gave up on it, given the time the sender gave
// the request: the bound of the acks=0 drains (noAckDrainBound).
func abandonedProduceBound(ctx context.Context, req protocol.Message) time.Duration {
	if req.ApiKey() != protocol.Produce {
		return 0
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		return 0
	}
	return noAckDrainBound(time.Until(deadline))
}

// lease checks out a connection of its own: an idle one of the pool, or a
// new one.
func (p *connPool) lease(ctx context.Context) (*connLease, error) {
	c, err := p.acquire(ctx, true)
	if err != nil {
		return nil, err
	}
	return &connLease{pool: p, c: c}, nil
}

// send writes req at the version negotiated with the broker and returns
// that version and the request's correlation ID. A request that expects no
// response (a Produce with acks=0) is complete once written.
func (l *connLease) send(ctx context.Context, req protocol.Message) (version int16, id int32, err error) {
	if l.reading || l.awaiting {
		return 0, 0, errors.New("kafka: a leased connection sends one request at a time")
	}
	c := l.c
	if version, err = c.version(req.ApiKey()); err != nil {
		return 0, 0, err
	}
	c.prepare(req, version)
	id = c.nextID.Add(1)
	frame := getFrameBuffer()
	defer putFrameBuffer(frame)
	if err := protocol.WriteRequest(frame, version, id, c.clientID, req); err != nil {
		return 0, 0, err
	}
	if err := c.write(ctx, id, nil, frame.b); err != nil {
		return 0, 0, err
	}
	l.awaiting = expectsResponse(req)
	return version, id, nil
}

// response waits for the response to request id and returns its body,
// positioned after the correlation ID. headerTimeout bounds the wait for
// the response to start, readTimeout every later wait for the broker (zero:
// no bound); ctx ending interrupts any wait, until release. The body is
// read by the holder, from one goroutine, and is valid until release.
func (l *connLease) response(ctx context.Context, id int32, headerTimeout, readTimeout time.Duration) (*responseBody, error) {
	b := &l.body
	*b = responseBody{br: l.c.br, nc: l.c.nc, left: len(l.hdr), timeout: headerTimeout}
	l.reading, l.awaiting = true, false
	l.id, l.readTimeout = id, readTimeout
	if err := ctx.Err(); err != nil {
		// Read nothing: the response is skipped whole (release), where
		// an interruption racing with the first read would cost the
		// connection.
		l.stopBody = func() bool { return false }
		b.err = errStreamInterrupted
		return nil, err
	}
	l.stopBody = interruptOnDone(ctx, b.interrupt)
	var err error
	l.hdrRead, err = io.ReadFull(b, l.hdr[:])
	if err != nil {
		return nil, l.bodyError(ctx, err)
	}
	left, err := l.frameLeft()
	if err != nil {
		b.err, b.broken = err, true
		return nil, err
	}
	b.left = left
	b.timeout = readTimeout
	return b, nil
}

// frameLeft checks the frame header in l.hdr, read whole, and returns the
// length of the body that follows it.
func (l *connLease) frameLeft() (int, error) {
	size, err := responseFrameSize(l.hdr[:], l.c.address)
	if err != nil {
		return 0, err
	}
	if got := int32(binary.BigEndian.Uint32(l.hdr[4:])); got != l.id {
		return 0, fmt.Errorf("kafka: broker %s answered correlation ID %d to request %d", l.c.address, got, l.id)
	}
	return size - 4, nil
}

// bodyError is the error to report for a failed read of the response:
// the context's when it ended the read, else the connection's failure.
func (l *connLease) bodyError(ctx context.Context, err error) error {
	if errors.Is(err, errStreamInterrupted) {
		return ctxError(ctx, err)
	}
	return eof.Unexpected(err)
}

// roundTrip sends req and returns its response, decoded whole.
func (l *connLease) roundTrip(ctx context.Context, req protocol.Message) (protocol.Message, error) {
	version, id, err := l.send(ctx, req)
	if err != nil || !expectsResponse(req) {
		return nil, err
	}
	// ctx's deadline, if any, ends the waits (interrupting them). A
	// Produce given up on is skipped within a bound rather than cut with
	// its connection, so that its sender can tell when the broker is
	// done with it (settleSlot).
	bound := abandonedProduceBound(ctx, req)
	if bound > 0 {
		l.settle, _ = ctx.Value(settleSlotKey{}).(*settleSlot)
	}
	body, err := l.response(ctx, id, bound, bound)
	if err != nil {
		return nil, err
	}
	var hdr [8]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(4+body.left))
	binary.BigEndian.PutUint32(hdr[4:], uint32(id))
	_, msg, err := protocol.ReadResponse(io.MultiReader(bytes.NewReader(hdr[:]), body), req.ApiKey(), version)
	if body.err != nil {
		// The connection failed under the decoder: that is the error.
		return nil, l.bodyError(ctx, body.err)
	}
	return msg, err
}

// invalidate tells the lease's cluster that its metadata is out of date
// (the broker no longer leads the partitions the request was for).
func (l *connLease) invalidate() {
	if l.cl != nil {
		l.cl.invalidate()
	}
}

// release gives the connection back to its pool. It may be called more
// than once; only the first call counts.
func (l *connLease) release() {
	if l.released {
		return
	}
	l.released = true
	if l.cl != nil {
		defer l.cl.leave()
	}
	if !l.reading {
		if l.awaiting {
			// The response will come, and nobody is going to read it.
			l.c.close(errors.New("kafka: response to a leased request not read"))
		}
		l.pool.release(l.c, false)
		return
	}
	b := &l.body
	l.stopBody()
	b.finish()
	switch {
	case b.broken:
		l.c.close(eof.Unexpected(b.err))
		l.pool.release(l.c, false)
	case l.hdrRead == len(l.hdr) && b.left == 0:
		// The socket is at the end of the response (bytes of it left in
		// the read-ahead buffer are simply dropped).
		l.pool.release(l.c, false)
	case b.timeout <= 0:
		// Nothing bounds when the rest will come (a broker may hold a
		// JoinGroup for minutes): a connection is cheaper than a
		// goroutine and a connection held for that long.
		l.c.close(errLeaseAbandoned)
		l.pool.release(l.c, false)
	default:
		// The holder stopped before the end of the response (its
		// context ended, or it wanted no more): skip the rest, as long as
		// the broker sends it in time, then the connection serves the
		// next lease.
		var done chan struct{}
		var hold *cluster
		if l.settle != nil {
			done = make(chan struct{})
			l.settle.done = done
			if hold = l.settle.cl; hold != nil {
				hold.enter()
			}
		}
		go func() {
			if err := l.skip(); err != nil {
				l.c.close(err)
			}
			l.pool.release(l.c, false)
			if done != nil {
				close(done)
			}
			if hold != nil {
				hold.leave()
			}
		}()
	}
}

// errLeaseAbandoned closes a connection whose holder left a response
// unread with no timeout to bound the wait for the rest.
var errLeaseAbandoned = errors.New("kafka: leased request abandoned before the end of its response")

// skip reads the rest of an abandoned response off the connection, from
// the background: the rest of its header first, if the holder had not
// read it all, each wait bounded by the timeout the holder had; with none
// for the body, the connection is given up instead.
func (l *connLease) skip() error {
	c, left := l.c, l.body.left
	// A given-up Produce's sender waits for the skip: one deadline bounds
	// it whole (abandonedProduceBound), not one per phase.
	var by time.Time
	if l.settle != nil {
		by = time.Now().Add(l.readTimeout)
	}
	deadline := func(d time.Duration) time.Time {
		if !by.IsZero() {
			return by
		}
		return time.Now().Add(d)
	}
	if l.hdrRead < len(l.hdr) {
		c.nc.SetReadDeadline(deadline(l.body.timeout))
		if _, err := io.ReadFull(c.br, l.hdr[l.hdrRead:]); err != nil {
			return eof.Unexpected(err)
		}
		var err error
		if left, err = l.frameLeft(); err != nil {
			return err
		}
		c.nc.SetReadDeadline(time.Time{})
	}
	if left > 0 && l.readTimeout <= 0 {
		return errLeaseAbandoned
	}
	if left > 0 {
		c.nc.SetReadDeadline(deadline(l.readTimeout))
		if _, err := c.br.Discard(left); err != nil {
			return eof.Unexpected(err)
		}
		c.nc.SetReadDeadline(time.Time{})
	}
	return nil
}

// responseBody is the part of a response frame still to be read off a
// leased connection, read through a pooled read-ahead buffer. It
// implements protocol.StreamSource. Its reads are made by the lease's
// holder, on one goroutine; only interrupt comes from elsewhere.
type responseBody struct {
	br      *bufio.Reader
	nc      net.Conn
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
	stopped     bool       // interrupted or finished: no more deadlines
	deadlineSet bool
}

// Len returns how many bytes of the body are left to read.
func (b *responseBody) Len() int { return b.left + (b.w - b.r) }

// streamBufferSize is the read-ahead of a response body.
const streamBufferSize = 32 << 10

var streamBuffers = sync.Pool{New: func() any { return new([streamBufferSize]byte) }}

// errStreamInterrupted is the error of a read cut short by the end of the
// holder's context.
var errStreamInterrupted = errors.New("kafka: reading the response was interrupted")

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

// finish ends the reading: the read deadline is cleared unless a read
// failed (the connection is then closed anyway), and the read-ahead
// buffer goes back to its pool.
func (b *responseBody) finish() {
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
}

// fail records the error of a read from the connection that read
// nothing: the connection is unusable, unless interrupt cut the read.
func (b *responseBody) fail(err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	b.mu.Lock()
	interrupted := b.stopped && isTimeout(err)
	b.mu.Unlock()
	if interrupted {
		// A read cut by interrupt's deadline took nothing off the
		// socket (nor does TLS keep such an error): the connection is
		// where the previous read left it, and can be skipped on.
		b.err = errStreamInterrupted
		return b.err
	}
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

// Peek returns the next n bytes of the body without consuming them (see
// Discard), reading more from the connection as needed: a window on the
// read-ahead buffer, valid until the next read. protocol.BatchStream parses
// a record in place this way instead of copying it out first. n above the
// buffer's size gives bufio.ErrBufferFull; a body that ends first gives
// what is left with io.EOF, like bufio.Reader.Peek.
func (b *responseBody) Peek(n int) ([]byte, error) {
	if n > streamBufferSize {
		return nil, bufio.ErrBufferFull
	}
	if b.w-b.r >= n {
		return b.buf[b.r : b.r+n], nil
	}
	if b.buf == nil {
		b.buf = streamBuffers.Get().(*[streamBufferSize]byte)
	}
	// Move what is left to the front, and read after it.
	b.w = copy(b.buf[:], b.buf[b.r:b.w])
	b.r = 0
	for b.w < n {
		m, err := b.readConn(b.buf[b.w:])
		b.w += m
		if err != nil {
			return b.buf[:b.w], err
		}
	}
	return b.buf[:n], nil
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
