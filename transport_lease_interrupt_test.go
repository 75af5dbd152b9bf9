package kafka

// How a lease's holder being interrupted leaves its connection: a lease on
// one end of a net.Pipe whose other end the test plays the broker, with
// hooks that make an interruption land exactly between two reads; and a
// stress test on the fake broker. A connection goes back to its pool only
// at a frame boundary and with no deadline set, or is closed.

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math/rand"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/apiversions"
	"github.com/segmentio/kafka-go/protocol/fetch"
	"github.com/stretchr/testify/require"
)

// pipeConn is the client end of the pipe: onRead runs once, after the
// next read that returned bytes, before the bytes are handed up;
// interrupted receives when a deadline in the past is set (interrupt).
type pipeConn struct {
	net.Conn
	mu          sync.Mutex
	onRead      func(n int)
	interrupted chan struct{}
	deadline    time.Time
	reads       atomic.Int32
}

func (c *pipeConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.deadline = t
	c.mu.Unlock()
	if !t.IsZero() && t.Before(time.Unix(2, 0)) {
		select {
		case c.interrupted <- struct{}{}:
		default:
		}
	}
	return c.Conn.SetReadDeadline(t)
}

func (c *pipeConn) readDeadline() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deadline
}

func (c *pipeConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.reads.Add(1)
		c.mu.Lock()
		hook := c.onRead
		c.onRead = nil
		c.mu.Unlock()
		if hook != nil {
			hook(n)
		}
	}
	return n, err
}

// cancelOnRead makes the next read that returns bytes cancel ctx and wait
// for the interruption to have set its deadline before it returns: the
// interruption lands between that read and the next.
func (c *pipeConn) cancelOnRead(cancel context.CancelFunc) {
	c.mu.Lock()
	c.onRead = func(int) {
		cancel()
		select {
		case <-c.interrupted:
		case <-time.After(5 * time.Second):
			panic("no interruption")
		}
	}
	c.mu.Unlock()
}

// pipeBroker plays the broker on the other end: reqs receives the
// correlation ID of each request, out is written in order.
type pipeBroker struct {
	nc   net.Conn
	reqs chan int32
	out  chan []byte
}

func pipeFrame(id int32, body string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(4+len(body)))
	b = binary.BigEndian.AppendUint32(b, uint32(id))
	return append(b, body...)
}

func newPipeLease(t *testing.T) (*connPool, *brokerConn, *pipeConn, *pipeBroker) {
	client, server := net.Pipe()
	rc := &pipeConn{Conn: client, interrupted: make(chan struct{}, 1)}
	s := &pipeBroker{nc: server, reqs: make(chan int32, 16), out: make(chan []byte, 16)}
	go func() {
		for {
			var size [4]byte
			if _, err := io.ReadFull(server, size[:]); err != nil {
				return
			}
			body := make([]byte, binary.BigEndian.Uint32(size[:]))
			if _, err := io.ReadFull(server, body); err != nil {
				return
			}
			s.reqs <- int32(binary.BigEndian.Uint32(body[4:8]))
		}
	}()
	done := make(chan struct{})
	go func() {
		for {
			select {
			case b := <-s.out:
				if _, err := server.Write(b); err != nil {
					return
				}
			case <-done:
				return
			}
		}
	}()
	t.Cleanup(func() {
		close(done)
		client.Close()
		server.Close()
	})
	c := &brokerConn{
		nc: rc, br: bufio.NewReaderSize(rc, connReadBufferSize), own: true, address: "pipe",
		versions: map[protocol.ApiKey]int16{protocol.ApiVersions: 0}, wsem: make(chan struct{}, 1),
	}
	p := &connPool{idleTimeout: time.Hour, address: "pipe", conns: []*brokerConn{c}}
	return p, c, rc, s
}

func (s *pipeBroker) request(t *testing.T) int32 {
	select {
	case id := <-s.reqs:
		return id
	case <-time.After(5 * time.Second):
		t.Fatal("no request")
		return 0
	}
}

func inflight(p *connPool, c *brokerConn) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return c.inflight
}

func waitIdle(t *testing.T, p *connPool, c *brokerConn) {
	t.Helper()
	require.Eventually(t, func() bool { return inflight(p, c) == 0 }, 5*time.Second, time.Millisecond)
}

// leaseAndSend leases p's connection and sends an ApiVersions request on
// it, which s receives; it returns the lease and the request's ID.
func leaseAndSend(ctx context.Context, t *testing.T, p *connPool, s *pipeBroker) (*connLease, int32) {
	t.Helper()
	l, err := p.lease(ctx)
	require.NoError(t, err)
	_, id, err := l.send(ctx, &apiversions.Request{})
	require.NoError(t, err)
	require.Equal(t, id, s.request(t))
	return l, id
}

// checkNextFrame checks that the (only) connection was given back with no
// read deadline set, then leases it again and reads a response of its own
// off it, with no deadline of its own.
func checkNextFrame(t *testing.T, p *connPool, c *brokerConn, s *pipeBroker) {
	t.Helper()
	require.NoError(t, c.broken())
	require.True(t, c.nc.(*pipeConn).readDeadline().IsZero(), "deadline left: %v", c.nc.(*pipeConn).readDeadline())
	ctx := testContext(t)
	l, id := leaseAndSend(ctx, t, p, s)
	defer l.release()
	require.True(t, l.c == c)
	s.out <- pipeFrame(id, "next response")
	body, err := l.response(ctx, id, 0, 0)
	require.NoError(t, err)
	got, err := io.ReadAll(body)
	require.NoError(t, err)
	require.Equal(t, "next response", string(got))
}

// The header arrives in two pieces; the holder's context ends between its
// read of the first (3 bytes) and the next. With a header timeout, the rest
// of the header and the body are skipped and the connection is reused; with
// none (roundTrip), it is closed.
func TestLeasePartialHeaderInterruptedBetweenReads(t *testing.T) {
	for _, headerTimeout := range []time.Duration{10 * time.Second, 0} {
		p, c, rc, s := newPipeLease(t)
		ctx, cancel := context.WithCancel(testContext(t))
		l, id := leaseAndSend(ctx, t, p, s)
		frame := pipeFrame(id, strings.Repeat("abandoned", 100))
		rc.cancelOnRead(cancel)
		s.out <- frame[:3]
		_, err := l.response(ctx, id, headerTimeout, 10*time.Second)
		require.ErrorIs(t, err, context.Canceled)
		require.Equal(t, 3, l.hdrRead)
		require.False(t, l.body.broken)
		l.release()
		l.release()
		s.out <- frame[3:5]
		s.out <- frame[5:]
		waitIdle(t, p, c)
		if headerTimeout == 0 {
			require.Error(t, c.broken())
			continue
		}
		checkNextFrame(t, p, c, s)
	}
}

// The body is read in part, the holder's context ending between two reads:
// the rest is skipped and the connection reused, without a deadline left.
func TestLeaseBodyInterruptedBetweenReads(t *testing.T) {
	p, c, rc, s := newPipeLease(t)
	ctx, cancel := context.WithCancel(testContext(t))
	l, id := leaseAndSend(ctx, t, p, s)
	frame := pipeFrame(id, strings.Repeat("abandoned", 10000))
	s.out <- frame[:8]
	body, err := l.response(ctx, id, 10*time.Second, 10*time.Second)
	require.NoError(t, err)
	rc.cancelOnRead(cancel)
	s.out <- frame[8:100]
	buf := make([]byte, 10)
	var rerr error
	for rerr == nil {
		_, rerr = body.Read(buf)
	}
	require.ErrorIs(t, rerr, errStreamInterrupted)
	require.False(t, l.body.broken)
	l.release()
	s.out <- frame[100:]
	waitIdle(t, p, c)
	checkNextFrame(t, p, c, s)
}

// The holder's context ended before response (the common case of the bug
// fixed): the header is awaited within the header timeout; a broker that
// never answers costs the connection after it, not a goroutine forever.
func TestLeaseNotStartedNeverAnswered(t *testing.T) {
	p, c, _, s := newPipeLease(t)
	ctx, cancel := context.WithCancel(testContext(t))
	l, id := leaseAndSend(ctx, t, p, s)
	cancel()
	_, err := l.response(ctx, id, 100*time.Millisecond, time.Hour)
	require.ErrorIs(t, err, context.Canceled)
	l.release()
	waitIdle(t, p, c)
	require.Error(t, c.broken())
}

// Not started, answered late but within the header timeout, the body
// arriving slowly: skipped, and no deadline is left on the pooled
// connection.
func TestLeaseNotStartedAnsweredLate(t *testing.T) {
	p, c, rc, s := newPipeLease(t)
	ctx, cancel := context.WithCancel(testContext(t))
	l, id := leaseAndSend(ctx, t, p, s)
	cancel()
	_, err := l.response(ctx, id, 10*time.Second, 10*time.Second)
	require.ErrorIs(t, err, context.Canceled)
	l.release()
	frame := pipeFrame(id, strings.Repeat("x", 50000))
	time.Sleep(50 * time.Millisecond)
	s.out <- frame[:5]
	time.Sleep(50 * time.Millisecond)
	s.out <- frame[5:20000]
	time.Sleep(50 * time.Millisecond)
	s.out <- frame[20000:]
	waitIdle(t, p, c)
	require.True(t, rc.readDeadline().IsZero(), "deadline left: %v", rc.readDeadline())
	checkNextFrame(t, p, c, s)
}

// roundTrip (no header or read timeout: JoinGroup, SyncGroup, Produce)
// interrupted between two reads of the body, the broker then stalling:
// nothing bounds when the rest would come, so the connection is closed
// rather than held, with a goroutine, by a skip without end.
func TestLeaseRoundTripInterruptedMidBodyUnbounded(t *testing.T) {
	p, c, rc, s := newPipeLease(t)
	ctx, cancel := context.WithCancel(testContext(t))
	l, err := p.lease(ctx)
	require.NoError(t, err)
	go func() {
		id := s.request(t)
		frame := pipeFrame(id, strings.Repeat("\x00", 5000))
		s.out <- frame[:8]
		// The second read (the first of the body) ends the context.
		rc.cancelOnRead(cancel)
		s.out <- frame[8:100]
		// ... and the rest never comes.
	}()
	_, err = l.roundTrip(ctx, &apiversions.Request{})
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, l.body.broken)
	l.release()
	waitIdle(t, p, c)
	require.Error(t, c.broken())
}

// Stress: many leases on the fake broker, each holder's context ending at
// a random moment (before the response, while waiting for it, or in the
// middle of its body), the broker answering after a random delay, in
// pieces. No response may ever be read off a connection that is not at a
// frame boundary: every error is the holder's context's.
func TestLeaseStressRandomInterrupts(t *testing.T) {
	fc, tr := leaseBroker(t, func(r *fakebroker.Request) {
		pieces := fetchFrameV11(r.ID, 200, streamBatch(t, 0, 100), streamBatch(t, 100, 200))
		delay := time.Duration(rand.Intn(1500)) * time.Microsecond
		go func() {
			time.Sleep(delay)
			r.Conn.WMu.Lock()
			defer r.Conn.WMu.Unlock()
			for _, p := range pieces {
				for len(p) > 0 {
					k := min(len(p), 1+rand.Intn(700))
					if _, err := r.Conn.NC.Write(p[:k]); err != nil {
						return
					}
					p = p[k:]
				}
			}
		}()
	})
	var bad atomic.Int32
	var cases [5]atomic.Int32 // broken, complete, unbounded header, skip header, skip body
	classify := func(l *connLease) {
		b := &l.body
		switch {
		case b.broken:
			cases[0].Add(1)
		case l.hdrRead == len(l.hdr) && b.left == 0:
			cases[1].Add(1)
		case l.hdrRead < len(l.hdr) && b.timeout <= 0:
			cases[2].Add(1)
		case l.hdrRead < len(l.hdr):
			cases[3].Add(1)
		default:
			cases[4].Add(1)
		}
	}
	var reused, canceled atomic.Int32
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 150; i++ {
				base := testContext(t)
				ctx, cancel := context.WithCancel(base)
				req := leaseFetchRequest()
				l, err := tr.lease(base, fc.Addr(), req)
				if err != nil {
					t.Errorf("lease: %v", err)
					cancel()
					return
				}
				if l.c.nextID.Load() > 0 {
					reused.Add(1)
				}
				version, id, err := l.send(base, req)
				if err != nil {
					t.Errorf("send: %v", err)
					l.release()
					cancel()
					return
				}
				if rand.Intn(3) == 0 {
					cancel() // before response: the response is skipped whole
				} else {
					time.AfterFunc(time.Duration(rand.Intn(3000))*time.Microsecond, cancel)
				}
				headerTimeout := 2 * time.Second
				if rand.Intn(4) == 0 {
					headerTimeout = 0
				}
				body, err := l.response(ctx, id, headerTimeout, 2*time.Second)
				if err != nil {
					if ctx.Err() == nil {
						bad.Add(1)
						t.Errorf("response: %v", err)
					}
					canceled.Add(1)
					classify(l)
					l.release()
					continue
				}
				rs, err := fetch.NewResponseStream(body, body.Len(), version)
				if err != nil {
					if ctx.Err() == nil {
						bad.Add(1)
						t.Errorf("stream: %v", err)
					}
					l.release()
					continue
				}
				want := rand.Intn(250)
				n := 0
				for n < want {
					_, _, records, err := rs.Next()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						if ctx.Err() == nil {
							bad.Add(1)
							t.Errorf("next: %v", err)
						}
						break
					}
					var rerr error
					for n < want && rerr == nil {
						var b protocol.RecordReader
						b, rerr = records.Next()
						if rerr != nil {
							break
						}
						for n < want {
							rec, err := b.ReadRecord()
							if err != nil {
								break
							}
							if rec.Offset != int64(n) {
								bad.Add(1)
								t.Errorf("offset %d, want %d", rec.Offset, n)
							}
							closeRecord(rec)
							n++
						}
					}
					if rerr != nil && !errors.Is(rerr, io.EOF) && ctx.Err() == nil {
						bad.Add(1)
						t.Errorf("records: %v", rerr)
					}
					break
				}
				rs.Close()
				classify(l)
				l.release()
				l.release()
				cancel()
			}
		}()
	}
	wg.Wait()
	t.Logf("release cases: broken %d, complete %d, unbounded header %d, skip from header %d, skip body %d", cases[0].Load(), cases[1].Load(), cases[2].Load(), cases[3].Load(), cases[4].Load())
	t.Logf("canceled before a body %d, leases on a used connection %d, connections closed %d", canceled.Load(), reused.Load(), fc.Brokers[0].NumClosed())
	require.Zero(t, bad.Load())
}

// The Transport's connections closed (CloseIdleConnections, the last user
// of the cluster gone) while a skip waits for the abandoned response: the
// skip ends at once with the connection, and gives it back.
func TestLeaseTransportClosedDuringSkip(t *testing.T) {
	never := make(chan struct{})
	defer close(never)
	fc, tr := leaseBroker(t, func(r *fakebroker.Request) {}) // never answers
	ctx, cancel := context.WithCancel(testContext(t))
	req := leaseFetchRequest()
	l, err := tr.lease(ctx, fc.Addr(), req)
	require.NoError(t, err)
	_, id, err := l.send(ctx, req)
	require.NoError(t, err)
	cancel()
	_, err = l.response(ctx, id, time.Hour, time.Hour)
	require.ErrorIs(t, err, context.Canceled)
	l.release()
	time.Sleep(50 * time.Millisecond)
	require.Equal(t, 1, inflight(l.pool, l.c)) // the skip waits
	tr.CloseIdleConnections()
	require.Eventually(t, func() bool { return inflight(l.pool, l.c) == 0 }, 5*time.Second, time.Millisecond)
	require.Error(t, l.c.broken())
	require.Eventually(t, func() bool { return fc.Brokers[0].NumClosed() >= 1 }, 5*time.Second, time.Millisecond)
}

// An acks=0 lane's lease: many requests without a response, then a
// barrier (roundTrip) read whole; the lease goes back to the pool usable.
// A barrier whose context ended before its response closes the connection.
func TestLeaseAcksNoneLaneReuse(t *testing.T) {
	for _, cancelBarrier := range []bool{false, true} {
		p, c, rc, s := newPipeLease(t)
		c.versions[protocol.Produce] = 3
		ctx, cancel := context.WithCancel(testContext(t))
		l, err := p.lease(ctx)
		require.NoError(t, err)
		for i := 0; i < 3; i++ {
			res, err := l.roundTrip(ctx, tpProduceRequest(0, 0))
			require.NoError(t, err)
			require.Nil(t, res)
			s.request(t)
			require.False(t, l.awaiting)
		}
		go func() {
			id := s.request(t)
			if cancelBarrier {
				cancel()
				select { // the holder's wait for the header is cut
				case <-rc.interrupted:
				case <-time.After(5 * time.Second):
				}
			}
			var b []byte
			// An ApiVersions v0 response: error code, empty array.
			b = binary.BigEndian.AppendUint16(b, 0)
			b = binary.BigEndian.AppendUint32(b, 0)
			s.out <- pipeFrame(id, string(b))
		}()
		_, err = l.roundTrip(ctx, &apiversions.Request{})
		if cancelBarrier {
			require.ErrorIs(t, err, context.Canceled)
		} else {
			require.NoError(t, err)
		}
		l.release()
		waitIdle(t, p, c)
		if cancelBarrier {
			require.Error(t, c.broken())
			continue
		}
		checkNextFrame(t, p, c, s)
	}
}

// A write interrupted mid-frame (the broker not reading) closes the
// connection; release then gives it back once, closed.
func TestLeaseSendInterruptedMidWrite(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	c := &brokerConn{nc: client, br: bufio.NewReader(client), own: true, address: "pipe",
		versions: map[protocol.ApiKey]int16{protocol.ApiVersions: 0}, wsem: make(chan struct{}, 1)}
	p := &connPool{idleTimeout: time.Hour, conns: []*brokerConn{c}}
	ctx, cancel := context.WithCancel(testContext(t))
	l, err := p.lease(ctx)
	require.NoError(t, err)
	go func() {
		var b [3]byte
		io.ReadFull(server, b[:]) // part of the frame only
		cancel()
	}()
	_, _, err = l.send(ctx, &apiversions.Request{})
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, l.awaiting)
	l.release()
	l.release()
	require.Zero(t, inflight(p, c))
	require.Error(t, c.broken())
	require.Empty(t, p.conns)
}

// send refuses a second request while the response to the first is still
// expected: else a second that expects none would leave the first's
// response on the connection, unseen by release.
func TestLeaseSendRefusedWhileAResponseIsExpected(t *testing.T) {
	p, c, _, s := newPipeLease(t)
	c.versions[protocol.Produce] = 3
	ctx := testContext(t)
	l, err := p.lease(ctx)
	require.NoError(t, err)
	_, _, err = l.send(ctx, &apiversions.Request{})
	require.NoError(t, err)
	s.request(t)
	_, _, err = l.send(ctx, tpProduceRequest(0, 0))
	require.Error(t, err)
	l.release()
	waitIdle(t, p, c)
	require.Error(t, c.broken(), "pooled with a response on it")
}
