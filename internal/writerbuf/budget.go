// Package writerbuf holds the buffer budget of kafka.Writer: a counted
// amount of space (batch slots of one partition, or message bytes of the
// whole writer) that callers take before their data is buffered and give
// back once the data has left the buffer.
//
// # Lock discipline
//
// A Budget has one mutex, and it is a leaf: while holding it, the Budget
// calls nothing outside this file and never blocks (it only closes
// channels). This is what lets callers use the non-blocking methods
// (TryAcquire, Reserve, Release, Close, Used, Waiting) while they hold
// locks of their own, such as a partition writer's mutex: the lock order is
// always "caller's lock, then Budget.mu", never the reverse.
//
// The only blocking method is Ticket.Wait (and Acquire, which uses it). It
// must be called with no lock held that the space it waits for depends on:
// the space comes back through Release, which is called by whoever drains
// the buffer, and that party may need the caller's locks to get there.
//
// # Fairness
//
// Waiters are served strictly in arrival order. A request that does not fit
// blocks every request behind it, even smaller ones that would fit; without
// that a steady stream of small requests could starve a large one, and
// callers writing to the same partition could overtake each other.
package writerbuf

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// ErrClosed is returned to callers waiting on, or arriving at, a closed
// Budget.
var ErrClosed = errors.New("writerbuf: budget closed")

// Budget is a FIFO counting semaphore that can be closed. Its zero value is
// not usable; call New.
type Budget struct {
	limit int64

	mu     sync.Mutex
	used   int64
	closed bool
	// Queue of tickets that were not granted on arrival, oldest first.
	head, tail *Ticket
	queued     int
	// waiters mirrors queued for HasWaiters, which is read on the hot path
	// of every message without taking mu.
	waiters atomic.Int64
}

// New returns a Budget holding limit units. limit must be positive.
func New(limit int64) *Budget {
	if limit <= 0 {
		panic(fmt.Sprintf("writerbuf: budget limit must be positive, got %d", limit))
	}
	return &Budget{limit: limit}
}

// Limit returns the capacity the Budget was created with.
func (b *Budget) Limit() int64 { return b.limit }

// Used returns the units currently taken.
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Waiting returns the number of tickets queued and not yet granted.
func (b *Budget) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.queued
}

// HasWaiters reports, without locking, whether any ticket is queued. The
// answer may be stale by the time it is used; callers use it as a hint
// (send partial batches now, someone waits for space).
func (b *Budget) HasWaiters() bool { return b.waiters.Load() > 0 }

// Ticket is a place in a Budget's line, returned by Reserve. Exactly one of
// these ends a ticket's life: a successful Wait (the units then belong to the
// caller, who gives them back with Release), a failed Wait, or Cancel.
type Ticket struct {
	b     *Budget
	n     int64
	ready chan struct{} // closed once granted or failed

	// Guarded by b.mu.
	granted    bool
	err        error
	prev, next *Ticket
	inQueue    bool
}

// Granted reports whether the ticket already holds its units, without
// blocking; a ticket granted on arrival never needs a Wait.
func (t *Ticket) Granted() bool {
	t.b.mu.Lock()
	defer t.b.mu.Unlock()
	return t.granted
}

// TryAcquire takes n units if they are free and nobody is queued, and
// reports whether it did. It never blocks.
func (b *Budget) TryAcquire(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || b.queued > 0 || !b.fits(n) {
		return false
	}
	b.used += n
	return true
}

// Reserve joins the line for n units without blocking. The ticket is granted
// at once when the units are free and nobody is ahead; otherwise it waits in
// the queue until Release makes room for it (Wait blocks until then). A
// request larger than the limit, or made on a closed Budget, fails at once.
func (b *Budget) Reserve(n int64) *Ticket {
	t := &Ticket{b: b, n: n, ready: make(chan struct{})}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.closed:
		t.fail(ErrClosed)
	case n > b.limit:
		t.fail(fmt.Errorf("writerbuf: %d units requested from a budget of %d", n, b.limit))
	case b.queued == 0 && b.fits(n):
		b.used += n
		t.granted = true
		close(t.ready)
	default:
		b.push(t)
	}
	return t
}

// fits says whether n more units stay within the limit. Written so that
// nothing overflows, even with a limit near math.MaxInt64 or units taken
// beyond the limit by Force. Called with b.mu held.
func (b *Budget) fits(n int64) bool {
	return n >= 0 && n <= b.limit-b.used
}

// Force takes n units at once, whatever the limit, the queue or Close say:
// used may then exceed the limit, and nobody else is granted anything until
// enough is released to bring it back under. It never blocks. It exists for
// a caller that must not wait because the space it would wait for can only
// come back after it returns (see the Writer's Completion); the units are
// given back with Release as usual.
func (b *Budget) Force(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used += n
}

// Wait blocks until the ticket is granted (nil), ctx is done (ctx.Err()), or
// the Budget is closed (ErrClosed). When it fails, the ticket has left the
// line and holds nothing. A ticket granted at the very moment ctx ends is
// kept: Wait then returns nil, because the caller owns the units either way
// and using them is cheaper than handing them on.
func (t *Ticket) Wait(ctx context.Context) error {
	select {
	case <-t.ready:
	case <-ctx.Done():
		b := t.b
		b.mu.Lock()
		if !t.granted && t.err == nil {
			b.remove(t)
			t.fail(ctx.Err())
			// Leaving may let the ones behind through.
			b.grant()
		}
		b.mu.Unlock()
	}
	t.b.mu.Lock()
	defer t.b.mu.Unlock()
	return t.err
}

// Cancel gives the ticket up: it leaves the line, or, when already granted,
// returns its units.
func (t *Ticket) Cancel() {
	b := t.b
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case t.granted:
		t.granted = false
		b.used -= t.n
		t.err = ErrClosed // the ticket is spent
	case t.err == nil:
		b.remove(t)
		t.fail(ErrClosed)
	default:
		return
	}
	b.grant()
}

// Acquire takes n units, waiting in line if needed; see Reserve and Wait.
func (b *Budget) Acquire(ctx context.Context, n int64) error {
	return b.Reserve(n).Wait(ctx)
}

// Release gives back n units and grants as many queued tickets, in order,
// as now fit. It never blocks. Release keeps working after Close so that
// Used stays exact while the buffer drains.
func (b *Budget) Release(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	if b.used < 0 {
		panic(fmt.Sprintf("writerbuf: released more than acquired (used=%d)", b.used))
	}
	b.grant()
}

// Close fails every queued ticket and all future requests with ErrClosed.
// Units already granted stay taken until released.
func (b *Budget) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	for t := b.head; t != nil; {
		next := t.next
		b.remove(t)
		t.fail(ErrClosed)
		t = next
	}
}

// grant hands units to queued tickets in order while the head fits. Called
// with b.mu held.
func (b *Budget) grant() {
	for t := b.head; t != nil && b.fits(t.n); t = b.head {
		b.remove(t)
		b.used += t.n
		t.granted = true
		close(t.ready)
	}
}

func (b *Budget) push(t *Ticket) {
	t.inQueue = true
	t.prev = b.tail
	if b.tail != nil {
		b.tail.next = t
	} else {
		b.head = t
	}
	b.tail = t
	b.queued++
	b.waiters.Store(int64(b.queued))
}

func (b *Budget) remove(t *Ticket) {
	if !t.inQueue {
		return
	}
	if t.prev != nil {
		t.prev.next = t.next
	} else {
		b.head = t.next
	}
	if t.next != nil {
		t.next.prev = t.prev
	} else {
		b.tail = t.prev
	}
	t.prev, t.next, t.inQueue = nil, nil, false
	b.queued--
	b.waiters.Store(int64(b.queued))
}

// fail ends a ticket that was never granted. Called with b.mu held.
func (t *Ticket) fail(err error) {
	t.err = err
	close(t.ready)
}
