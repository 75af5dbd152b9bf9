package kafka

import (
	"context"
	"errors"
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
// its connection up, and a partition whose batch goes on another lane than
// its previous one (a leader moved) goes on, only once the broker is known
// to be done with what was written: it answered a barrier, a request it
// answers after those written before, or it closed the connection. A lane
// that cannot wait for a barrier (it timed out, the connection failed)
// half closes the connection and writes again only once the broker has
// closed its side (transport_drain.go): meanwhile its batches, and those of
// the partitions leaving it, are held back (heldBackError: retried, not
// counted as attempts), for at most noAckDrainBound.
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
	turn     chan struct{}
	lease    *connLease
	draining *brokerConn // the connection given up last, until its drain ends
	written  uint64      // requests written on the lane
	settled  uint64      // of those, the ones the broker is known to be done with

	users int // sinks whose last request went on the lane; guarded by noAckLanes.mu
}

// noAckDrainBound is the longest a lane waits for a broker to close its
// side of a connection given up: one that keeps neither answering nor
// closing for that long is taken for gone (what it does after is not
// known, as for any connection that fails). It is also how long batches
// may be held back, failing over from a broker gone silent.
func noAckDrainBound(writeTimeout time.Duration) time.Duration {
	return max(2*writeTimeout, 10*time.Second)
}

// heldBackError is the outcome of a batch not sent because the broker of
// a lane may still be working through requests written before it.
type heldBackError struct {
	broker string
	cause  error // the context's error, when the wait for the drain ended with it
	// unanswered: held behind a request with acks that went unanswered
	// (partitionWriter.settling), not behind an acks=0 lane.
	unanswered bool
}

func (e *heldBackError) Error() string {
	if e.unanswered {
		return "kafka: broker " + e.broker + " may still append an earlier attempt it did not answer"
	}
	msg := "kafka: broker " + e.broker + " still working through earlier acks=0 requests"
	if e.cause != nil {
		msg += ": " + e.cause.Error()
	}
	return msg
}

func (e *heldBackError) Unwrap() error { return e.cause }

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
// connection back, so that no connection stays leased by an idle Writer.
// A lane not settled (its connection is draining) stays, for the next
// sink that sends to the broker to wait for.
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
	if l.settleLocked(ctx, l.written) != nil {
		return
	}
	l.releaseSettled() // a lane that never wrote (its request failed) may hold one
	ls.mu.Lock()
	if l.users == 0 && ls.byPool[l.pool] == l {
		delete(ls.byPool, l.pool)
	}
	ls.mu.Unlock()
}

// settle makes sure the broker is done with the requests written on l up
// to seq before the caller writes elsewhere; a heldBackError says it is not
// known to be yet.
func (l *noAckLane) settle(ctx context.Context, seq uint64) error {
	select {
	case l.turn <- struct{}{}:
	case <-ctx.Done():
		return &heldBackError{broker: l.pool.address, cause: ctx.Err()}
	}
	defer func() { <-l.turn }()
	return l.settleLocked(ctx, seq)
}

// settleLocked settles the lane up to seq: with a barrier on its
// connection, which then goes back to the pool, or else by the end of the
// drain of the connection given up, which it does not wait for.
func (l *noAckLane) settleLocked(ctx context.Context, seq uint64) error {
	if l.settled >= seq {
		return nil
	}
	if l.lease != nil && l.lease.c.broken() == nil {
		if _, err := l.lease.roundTrip(ctx, &apiversions.Request{}); err == nil {
			l.releaseSettled()
			return nil
		}
	}
	if l.lease != nil {
		l.giveUp()
	}
	if l.draining == nil {
		l.drainEnded() // nothing written since the last barrier or drain
		return nil
	}
	return l.drainOver()
}

// releaseSettled gives the lane's connection, on which the broker is done
// with every request written, back to the pool.
func (l *noAckLane) releaseSettled() {
	if l.lease != nil {
		l.lease.c.closeAtOnce()
		l.lease.release()
		l.lease = nil
	}
	l.settled = l.written
}

// giveUp ends the lane's connection, which it cannot write another
// request on, with a drain that the lane's next write waits for. The
// connection is closed before the lease is released, so that it cannot go
// back to the pool.
func (l *noAckLane) giveUp() {
	c := l.lease.c
	l.draining = c // marked when leased
	c.close(errNoAckLaneGaveUp)
	l.lease.release()
	l.lease = nil
}

var errNoAckLaneGaveUp = errors.New("kafka: connection of an acks=0 lane given up")

// drainOver says whether the drain of the connection given up last, if
// any, has ended. It does not wait: a batch held back waits out of the
// lane's turn, which others need to learn the same, and with its whole
// timeout left for the write once the drain is over.
func (l *noAckLane) drainOver() error {
	if l.draining == nil {
		return nil
	}
	select {
	case <-l.draining.drained():
	default:
		return &heldBackError{broker: l.pool.address}
	}
	l.drainEnded()
	return nil
}

// drainEnded records that the broker is done with every request written.
func (l *noAckLane) drainEnded() {
	l.draining = nil
	l.settled = l.written
}

// endDrains ends the drains still going on, for Close: the Writer has
// nothing more to write after them.
func (ls *noAckLanes) endDrains() {
	ls.mu.Lock()
	lanes := make([]*noAckLane, 0, len(ls.byPool))
	for _, l := range ls.byPool {
		lanes = append(lanes, l)
	}
	ls.mu.Unlock()
	for _, l := range lanes {
		l.turn <- struct{}{}
		if l.draining != nil {
			l.draining.abortDrain()
		}
		<-l.turn
	}
}

// write writes req on the lane's connection, leased from cl when the lane
// has none, and returns the request's number on the lane.
func (l *noAckLane) write(ctx context.Context, cl *cluster, req *produceAPI.Request, drainBound time.Duration) (uint64, error) {
	select {
	case l.turn <- struct{}{}:
	case <-ctx.Done():
		// Whoever holds the turn is bounded by its own timeout.
		return 0, &heldBackError{broker: l.pool.address, cause: ctx.Err()}
	}
	defer func() { <-l.turn }()
	if l.lease != nil && l.lease.c.broken() != nil {
		l.giveUp()
	}
	if err := l.drainOver(); err != nil {
		return 0, err
	}
	if l.lease != nil && l.lease.c.sessionOver(time.Now()) {
		// The broker is about to end the connection's authenticated
		// session, after which it drops what comes and closes (KIP-368),
		// which acks=0 would not hear of: the connection is settled and
		// handed back for the pool to retire, and another one leased. The
		// barrier takes at most half the time left, the rest being the
		// request's.
		sctx, cancel := halfTimeLeft(ctx)
		err := l.settleLocked(sctx, l.written)
		cancel()
		if err != nil {
			return 0, err
		}
		l.releaseSettled()
	}
	if l.lease == nil {
		lease, err := cl.leaseFrom(ctx, l.pool)
		if err != nil {
			return 0, err
		}
		cl.enter() // left when the lease is released
		lease.cl = cl
		lease.c.drainOnClose(drainBound)
		l.lease = lease
	}
	if _, err := l.lease.roundTrip(ctx, req); err != nil {
		if l.lease.c.broken() != nil {
			// The write failed on the connection (a failure before
			// anything was written leaves it usable and in order).
			if ctx.Err() == nil {
				l.lease.invalidate() // the broker may have gone away, as RoundTrip assumes
			}
			l.giveUp()
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
		// Left once this request is written: the last one out settles
		// the lane with a barrier, which is not this request's time to
		// spend (a slow broker would take all of it).
		defer lanes.detach(s.lane, s.w.writeTimeout())
		s.lane = nil
	}
	if s.lane == nil {
		s.lane = lanes.attach(pool)
	}
	lane := s.lane
	// A partition whose previous batch went on another lane: that lane's
	// broker must be done with it first, or the partition is held back
	// (and left out of the request). A barrier takes at most half the
	// time left, the rest being the others' to be written in.
	settleCtx, cancel := halfTimeLeft(ctx)
	defer cancel()
	left := 0
	for i, pw := range parts {
		if prev := pw.noAckLane; errs[i] == nil && prev != nil && prev != lane {
			if err := prev.settle(settleCtx, pw.noAckSeq); err != nil {
				errs[i] = err
				dropPartition(req, pw.key)
			}
		}
		if errs[i] == nil {
			left++
		}
	}
	if left == 0 {
		return nil // every partition has its error
	}
	seq, err := lane.write(ctx, cl, req, noAckDrainBound(s.w.writeTimeout()))
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

// halfTimeLeft returns ctx with a deadline half as far as its own, if it
// has one: for a barrier that must leave the rest to a request.
func halfTimeLeft(ctx context.Context) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); ok {
		return context.WithDeadline(ctx, time.Now().Add(time.Until(dl)/2))
	}
	return ctx, func() {}
}

// dropPartition removes the batch of key from req.
func dropPartition(req *produceAPI.Request, key topicPartition) {
	for i := range req.Topics {
		t := &req.Topics[i]
		if t.Topic != key.topic {
			continue
		}
		for j := range t.Partitions {
			if t.Partitions[j].Partition == key.partition {
				t.Partitions = append(t.Partitions[:j], t.Partitions[j+1:]...)
				break
			}
		}
		if len(t.Partitions) == 0 {
			req.Topics = append(req.Topics[:i], req.Topics[i+1:]...)
		}
		return
	}
}
