package kafka

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go/internal/eof"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/apiversions"
)

// Name and version this client reports in ApiVersions v3+. Brokers only use
// them for metrics, but reject values outside [a-zA-Z0-9.-].
const (
	clientSoftwareName    = "segmentio-kafka-go"
	clientSoftwareVersion = "0.4.51"
)

// brokerConn is one network connection to a broker, negotiated and
// authenticated. It is of one of two kinds, for good:
//
//   - shared: any number of requests may be in flight on it; writes are
//     serialized by wsem and a read loop goroutine hands each response to
//     the request with the same correlation ID (roundTrip);
//   - own: one request at a time, written and read by whoever leased it
//     (connLease), without a read loop; br reads it.
type brokerConn struct {
	nc       net.Conn
	network  string
	address  string
	clientID string

	// versions holds the version to use for every API usable with this
	// broker; unusable holds the reason for every API the broker knows but
	// that we cannot talk to it with.
	versions map[protocol.ApiKey]int16
	unusable map[protocol.ApiKey]error
	ranges   map[protocol.ApiKey][2]int16

	wsem   chan struct{} // one-slot semaphore guarding writes to nc
	nextID atomic.Int32

	own bool
	br  *bufio.Reader // an own connection's reader

	mu      sync.Mutex
	pending map[int32]*pendingCall
	err     error         // why the connection is unusable, once it is
	done    chan struct{} // closed when the read loop exits (shared only)
	drain   *connDrain    // how its holder wants it closed (drainOnClose)

	// expires is when the connection stops taking requests: nine tenths
	// into the authenticated session the broker ends (zero for never). The
	// pool retires it then, and so does an acks=0 lane (sessionOver).
	expires time.Time

	// Fields below are owned by the connPool (guarded by its mutex).
	inflight  int
	retired   bool
	idleTimer *time.Timer
	idleSince time.Time
}

type pendingCall struct {
	key     protocol.ApiKey
	version int16
	result  chan callResult // buffered, receives exactly one value
}

type callResult struct {
	msg protocol.Message
	err error
}

// errConnClosed is reported to requests still waiting on a connection that
// the transport closed.
var errConnClosed = errors.New("kafka: connection closed by the transport")

// connReadBufferSize is the read buffer of a broker connection. It only
// needs to hold frame headers and small responses: the protocol package
// reads a larger frame into a buffer of its own, which bufio then fills
// straight from the socket. A consumer keeps a connection to each broker it
// talks to (the bootstrap one included), and the collector lets the heap
// grow to twice what is live: 64 KiB per connection cost a 3-partition
// consumer about 1 MB of heap for nothing (upstream's Conn uses bufio's
// default 4 KiB).
const connReadBufferSize = 4 << 10

// dialBroker opens a connection to address and sets it up (openConn) as a
// connection to the broker called name; a shared one starts its read loop.
func dialBroker(ctx context.Context, cfg *dialConfig, network, address, name string, own bool) (*brokerConn, error) {
	s, err := openConn(ctx, cfg, network, address, name)
	if err != nil {
		var de *dialError
		if errors.As(err, &de) {
			// What the dial function said, as it said it: v0.4.51's
			// Transport returns a refused dial as a *net.OpError, and
			// programs assert that type.
			return nil, de.err
		}
		return nil, err
	}
	c := &brokerConn{
		nc:       s.nc,
		network:  network,
		address:  address,
		clientID: cfg.clientID,
		versions: s.versions,
		unusable: s.unusable,
		ranges:   s.ranges,
		expires:  s.expires,
		wsem:     make(chan struct{}, 1),
		own:      own,
	}
	if own {
		c.br = s.br
		return c, nil
	}
	c.pending = make(map[int32]*pendingCall)
	c.done = make(chan struct{})
	go c.readLoop(s.br)
	return c, nil
}

// interruptOnDone calls interrupt when ctx ends, until the returned release
// function is called. release reports whether interrupt ran, and when it did,
// returns only after it has completed, so that the caller can undo its
// effect without racing with it.
func interruptOnDone(ctx context.Context, interrupt func()) (release func() bool) {
	if ctx.Done() == nil {
		return func() bool { return false } // the context never ends
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		interrupt()
		close(fired)
	})
	// release is only ever called from the goroutine that set up the
	// interruption, possibly twice (once deferred).
	var released, ran bool
	return func() bool {
		if !released {
			released = true
			if !stop() {
				<-fired
				ran = true
			}
		}
		return ran
	}
}

// ctxCause returns the context's error when ctx ended, or when err is a
// socket timeout at or after ctx's deadline (which ctx may not have noticed
// yet), and nil when err is not the context's doing.
func ctxCause(ctx context.Context, err error) error {
	cerr := ctx.Err()
	if cerr == nil && isTimeout(err) {
		if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
			cerr = context.DeadlineExceeded
		}
	}
	return cerr
}

// ctxError prefers the context's error when the context ended, since the
// I/O error it caused (a socket deadline) says less: a cancelled context
// gives ctx.Err() itself, an expired deadline wraps the I/O error. A socket
// timeout at or after the context's deadline counts as the deadline even if
// the context has not noticed yet.
func ctxError(ctx context.Context, err error) error {
	cerr := ctxCause(ctx, err)
	switch {
	case cerr == nil:
		return err
	case errors.Is(cerr, context.DeadlineExceeded):
		return fmt.Errorf("%w (%v)", cerr, err)
	default:
		return cerr
	}
}

func splitAddress(address string) (string, int) {
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return address, 0
	}
	port, _ := strconv.Atoi(portStr)
	return host, port
}

// version returns the version to send key with on this connection.
func (c *brokerConn) version(key protocol.ApiKey) (int16, error) {
	if v, ok := c.versions[key]; ok {
		return v, nil
	}
	if err := c.unusable[key]; err != nil {
		return 0, fmt.Errorf("kafka: broker %s: %w", c.address, err)
	}
	return 0, fmt.Errorf("kafka: broker %s does not support the %s API: %w", c.address, key, protocol.ErrNoVersionOverlap)
}

// broken reports why the connection can no longer be used, or nil.
func (c *brokerConn) broken() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// close shuts the connection down; requests waiting on it fail with err.
// It does not block (pools call it with their lock held): closing a TLS
// connection writes an alert, which can take a while on a stuck socket.
func (c *brokerConn) close(err error) {
	c.mu.Lock()
	first := c.err == nil
	if first {
		c.err = err
	}
	d := c.drain
	c.mu.Unlock()
	switch {
	case !first:
	case d != nil:
		go c.shutDrained(d)
	default:
		go c.nc.Close()
	}
}

// prepare completes req for version before it is encoded.
func (c *brokerConn) prepare(req protocol.Message, version int16) {
	if p, ok := req.(protocol.PreparedMessage); ok {
		p.Prepare(version)
	}
	if av, ok := req.(*apiversions.Request); ok && version >= 3 && av.ClientSoftwareName == "" {
		// Brokers reject v3+ requests that do not name the client.
		av.ClientSoftwareName = clientSoftwareName
		av.ClientSoftwareVersion = clientSoftwareVersion
	}
}

// roundTrip sends req on a shared connection and waits for its response.
// Cancelling ctx abandons the wait (the response is then discarded by the
// read loop) and interrupts a write in progress, which leaves the
// connection unusable.
func (c *brokerConn) roundTrip(ctx context.Context, req protocol.Message) (protocol.Message, error) {
	key := req.ApiKey()
	version, err := c.version(key)
	if err != nil {
		return nil, err
	}
	c.prepare(req, version)
	id := c.nextID.Add(1)
	// Encoding first keeps a request that cannot be encoded from touching
	// the connection at all, and lets concurrent requests encode in
	// parallel rather than under the write lock.
	frame := getFrameBuffer()
	defer putFrameBuffer(frame)
	if err := protocol.WriteRequest(frame, version, id, c.clientID, req); err != nil {
		return nil, err
	}

	var call *pendingCall
	if expectsResponse(req) {
		call = &pendingCall{key: key, version: version, result: make(chan callResult, 1)}
	}

	select {
	case c.wsem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.done:
		return nil, c.broken()
	}
	err = c.write(ctx, id, call, frame.b)
	<-c.wsem
	if err != nil {
		return nil, err
	}
	if call == nil {
		return nil, nil
	}

	select {
	case r := <-call.result:
		return r.msg, r.err
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return nil, ctx.Err()
	}
}

func (c *brokerConn) write(ctx context.Context, id int32, call *pendingCall, frame []byte) error {
	if err := ctx.Err(); err != nil {
		return err // nothing written: the connection stays usable
	}
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	if call != nil {
		c.pending[id] = call
	}
	c.mu.Unlock()

	// Most requests go out in one non-blocking write, which needs no
	// deadline nor interruption; the rest, if any, is written below.
	n := writeNow(c.nc, frame)
	if n == len(frame) {
		return nil
	}
	frame = frame[n:]

	_, hasDeadline := ctx.Deadline()
	if hasDeadline {
		d, _ := ctx.Deadline()
		c.nc.SetWriteDeadline(d)
	}
	release := interruptOnDone(ctx, func() { c.nc.SetWriteDeadline(time.Unix(1, 0)) })
	_, err := c.nc.Write(frame)
	interrupted := release()
	if err == nil {
		if hasDeadline || interrupted {
			// The write completed: the deadline must not hit the next one.
			c.nc.SetWriteDeadline(time.Time{})
		}
		return nil
	}
	// A partial frame may be on the wire: nothing else can be sent here.
	// The socket's deadline may pass before ctx notices its own: either
	// way the error is the context's, as it is (under TLS the I/O error
	// is not retriable).
	if cerr := ctxCause(ctx, err); cerr != nil {
		err = cerr
	}
	c.close(fmt.Errorf("kafka: write to broker %s interrupted: %w", c.address, err))
	return err
}

// readLoop delivers responses to the requests waiting for them until the
// connection fails or is closed.
func (c *brokerConn) readLoop(br *bufio.Reader) {
	err := c.readResponses(br)
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	} else {
		err = c.err
	}
	pending := c.pending
	c.pending = map[int32]*pendingCall{}
	c.mu.Unlock()
	c.nc.Close()
	for _, call := range pending {
		call.result <- callResult{err: err}
	}
	close(c.done)
}

func (c *brokerConn) readResponses(br *bufio.Reader) error {
	for {
		hdr, err := br.Peek(8)
		if err != nil {
			// Even at a frame boundary the end of the stream is
			// unexpected for the requests waiting on it, and for any
			// sent on the connection later (they get c.err): as in
			// upstream, they all see io.ErrUnexpectedEOF, which callers
			// retry on, never a bare io.EOF.
			return eof.Unexpected(err)
		}
		size, err := responseFrameSize(hdr, c.address)
		if err != nil {
			return err
		}
		id := int32(binary.BigEndian.Uint32(hdr[4:]))
		c.mu.Lock()
		call := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if call == nil {
			// Nobody waits for it any more (its context ended).
			if _, err := br.Discard(4 + size); err != nil {
				return eof.Unexpected(err)
			}
			continue
		}
		fr := &frameReader{r: br, left: 4 + size}
		_, msg, err := protocol.ReadResponse(fr, call.key, call.version)
		if fr.err == nil && fr.left > 0 {
			// The decoder gave up before the end of the frame.
			_, fr.err = br.Discard(fr.left)
		}
		if fr.err != nil {
			serr := eof.Unexpected(fr.err)
			call.result <- callResult{err: serr}
			return serr
		}
		// The frame was consumed whole, so even when it failed to decode
		// only this request fails and the stream stays usable.
		call.result <- callResult{msg: msg, err: err}
	}
}

// frameReader reads the bytes of one frame from the connection, recording
// whether the connection itself failed.
type frameReader struct {
	r    io.Reader
	left int
	err  error
}

func (f *frameReader) Read(p []byte) (int, error) {
	if f.left == 0 {
		return 0, io.EOF
	}
	if len(p) > f.left {
		p = p[:f.left]
	}
	n, err := f.r.Read(p)
	f.left -= n
	if err != nil {
		f.err = err
	}
	return n, err
}

type responseExpecter interface{ HasResponse() bool }

func expectsResponse(req protocol.Message) bool {
	r, ok := req.(responseExpecter)
	return !ok || r.HasResponse()
}

// frameBuffer collects an encoded request frame (which the protocol
// package hands over in a single Write).
type frameBuffer struct{ b []byte }

func (f *frameBuffer) Write(p []byte) (int, error) {
	f.b = append(f.b, p...)
	return len(p), nil
}

var frameBuffers = sync.Pool{New: func() any { return new(frameBuffer) }}

func getFrameBuffer() *frameBuffer { return frameBuffers.Get().(*frameBuffer) }

func putFrameBuffer(f *frameBuffer) {
	if cap(f.b) > 1<<20 {
		return // do not keep the memory of exceptionally large requests
	}
	f.b = f.b[:0]
	frameBuffers.Put(f)
}

// sessionOver says whether c is past expires at now: no request should be
// written on it any more.
func (c *brokerConn) sessionOver(now time.Time) bool {
	return !c.expires.IsZero() && now.After(c.expires)
}
