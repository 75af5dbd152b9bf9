package kafka

import (
	"context"
	"sync"
	"time"

	"github.com/segmentio/kafka-go/protocol/apiversions"
	produceAPI "github.com/segmentio/kafka-go/protocol/produce"
)

// With RequireNone a batch is done once written, so a partition's next
// batch may follow before the broker has appended the previous one. A
// broker works on the requests of one connection in order, and on
// different connections' side by side. So a Writer's acks=0 requests to a
// broker all go on one connection, the broker's lane, whichever sink sends
// them: the sinks follow the Writer's view of the leaders and the
// Transport routes by its own, which may differ for a while. A lane gives
// its connection up only after a barrier, a request the broker answers
// once it has worked through those written before; and a partition whose
// batch goes on another lane than its previous one (a leader moved) waits
// for such a barrier on the previous lane first.
//
// Lock order: a sink's goroutine holds no sink or partition lock while it
// uses lanes; it holds at most one lane's turn at a time; noAckLanes.mu is
// taken inside a turn, and the pools' locks inside both.
type noAckLanes struct {
	mu     sync.Mutex
	byPool map[*connPool]*noAckLane
}

type noAckLane struct {
	pool *connPool
	// turn holds a token while a request or a barrier is written on the
	// lane; the fields below are guarded by it.
	turn    chan struct{}
	lease   *connLease
	written uint64 // requests written on the lane
	settled uint64 // of those, the ones the broker is known to be done with

	users int // sinks whose last request went on the lane; guarded by noAckLanes.mu
}

// attach returns the lane to pool for a sink that sends on it.
func (ls *noAckLanes) attach(pool *connPool) *noAckLane {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l := ls.byPool[pool]
	if l == nil {
		if ls.byPool == nil {
			ls.byPool = make(map[*connPool]*noAckLane)
		}
		l = &noAckLane{pool: pool, turn: make(chan struct{}, 1)}
		ls.byPool[pool] = l
	}
	l.users++
	return l
}

// detach is called by a sink that no longer sends on l. The last one out
// settles the lane (a barrier, bounded by timeout) and gives its
// connection back, so that no connection stays leased by an idle Writer,
// and the next request, on whichever connection, cannot overtake those
// written before.
func (ls *noAckLanes) detach(l *noAckLane, timeout time.Duration) {
	ls.mu.Lock()
	l.users--
	last := l.users == 0
	ls.mu.Unlock()
	if !last {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// The turn is taken without ctx: whoever holds it writes one request,
	// bounded by its own timeout, and the barrier must not be skipped.
	l.turn <- struct{}{}
	defer func() { <-l.turn }()
	l.settleLocked(ctx, l.written)
	l.dropLease() // settled already: nothing written since the last barrier
	ls.mu.Lock()
	if l.users == 0 && ls.byPool[l.pool] == l {
		delete(ls.byPool, l.pool)
	}
	ls.mu.Unlock()
}

// settle makes sure the broker is done with the requests written on l up
// to seq before the caller writes elsewhere.
func (l *noAckLane) settle(ctx context.Context, seq uint64) {
	l.turn <- struct{}{}
	defer func() { <-l.turn }()
	if l.settled < seq {
		l.settleLocked(ctx, seq)
	}
}

// settleLocked writes a barrier on the lane's connection and waits for its
// answer, then gives the connection back: every request written is then
// done with, so the next may go on any connection. A failed barrier closes
// the connection; what the broker did with the requests on it is not
// known, as for any connection that fails.
func (l *noAckLane) settleLocked(ctx context.Context, seq uint64) {
	if l.lease == nil || l.settled >= seq {
		return
	}
	if _, err := l.lease.roundTrip(ctx, &apiversions.Request{}); err != nil {
		l.lease.c.close(err)
	}
	l.dropLease()
}

// dropLease gives the lane's connection back; whatever was written on it
// counts as settled, nothing more being known of it.
func (l *noAckLane) dropLease() {
	if l.lease != nil {
		l.lease.release()
		l.lease = nil
	}
	l.settled = l.written
}

// write writes req on the lane's connection, leased from cl when the lane
// has none, and returns the request's number on the lane.
func (l *noAckLane) write(ctx context.Context, cl *cluster, req *produceAPI.Request) (uint64, error) {
	select {
	case l.turn <- struct{}{}:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	defer func() { <-l.turn }()
	if l.lease != nil && l.lease.c.broken() != nil {
		l.dropLease()
	}
	if l.lease == nil {
		lease, err := cl.leaseFrom(ctx, l.pool)
		if err != nil {
			return 0, err
		}
		cl.enter() // left when the lease is released
		lease.cl = cl
		l.lease = lease
	}
	if _, err := l.lease.roundTrip(ctx, req); err != nil {
		if l.lease.c.broken() != nil {
			// The write failed on the connection (a failure before
			// anything was written leaves it usable and in order).
			if ctx.Err() == nil {
				l.lease.invalidate() // the broker may have gone away, as RoundTrip assumes
			}
			l.dropLease()
		}
		return 0, err
	}
	l.written++
	return l.written, nil
}

// laneRoundTrip writes req, a request of a Writer with RequireNone carrying
// the batches of the partitions of parts without an error in errs, on the
// lane of the broker the Transport routes it to.
func (s *brokerSink) laneRoundTrip(ctx context.Context, t *Transport, req *produceAPI.Request, parts []*partitionWriter, errs []error) error {
	cl, pool, err := t.route(ctx, s.w.Addr, req)
	if err != nil {
		return err
	}
	defer cl.leave()
	lanes := &s.w.state().noAck
	if s.lane != nil && s.lane.pool != pool {
		old := s.lane
		s.lane = nil
		lanes.detach(old, s.w.writeTimeout())
	}
	if s.lane == nil {
		s.lane = lanes.attach(pool)
	}
	lane := s.lane
	// A partition whose previous batch went on another lane: that lane's
	// broker must be done with it first.
	for i, pw := range parts {
		if prev := pw.noAckLane; errs[i] == nil && prev != nil && prev != lane {
			prev.settle(ctx, pw.noAckSeq)
		}
	}
	seq, err := lane.write(ctx, cl, req)
	if err != nil {
		return err
	}
	for i, pw := range parts {
		if errs[i] == nil {
			pw.noAckLane, pw.noAckSeq = lane, seq
		}
	}
	return nil
}
