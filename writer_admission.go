package kafka

import (
	"context"
	"errors"
	"io"
	"math"

	"github.com/segmentio/kafka-go/internal/writerbuf"
)

// admission decides when a message may enter a partition's buffer. It owns
// the three things a message may wait for:
//
//	line   the callers waiting to add a message to this partition, in
//	       arrival order; only the head may add
//	slots  this partition's MaxBufferedBatches+2 batch slots (nil without
//	       MaxBufferedBatches); a batch takes one when it opens
//	bytes  the Writer's MaxBufferedBytes budget, shared by every partition
//	       (nil without MaxBufferedBytes); a message takes its bytes when
//	       accepted, and a waiter holds a FIFO ticket for them
//
// Everything taken here is given back by giveBack, from the batch's finish
// (partitionWriter.finish), exactly once.
//
// The line and the decision to admit are guarded by the partition writer's
// mutex (every method but waiter.wait is called with it held); the budgets
// have leaf locks of their own and never block in the methods used here, so
// holding the partition's mutex while calling them is allowed (see
// internal/writerbuf). Only waiter.wait and a slot ticket's Wait block, and
// they are called with no lock held.
type admission struct {
	bytes *writerbuf.Budget
	slots *writerbuf.Budget
	line  []*admissionWaiter
}

// addMode says what a partition writer does with a message that has no
// room now.
type addMode int

const (
	addNoWait    addMode = iota // return errWouldBlock
	addWait                     // wait in line
	addOverdraft                // take the space beyond the bounds (see admission.force)
)

// admissionWaiter is a caller in line for a partition. Its bytes ticket is
// granted by the writer-wide budget in FIFO order, but grants and the
// moments callers get the partition's mutex back may come in any order, so
// the line itself decides who goes next: only its head may add a message,
// and turn is closed when the waiter becomes the head. Only the head asks
// for a slot.
type admissionWaiter struct {
	bytes *writerbuf.Ticket // nil without MaxBufferedBytes
	slot  *writerbuf.Ticket // the head's request for a slot, while it waits
	turn  chan struct{}
}

func newAdmission(bytes *writerbuf.Budget, maxBatches int) admission {
	a := admission{bytes: bytes}
	if maxBatches > 0 {
		a.slots = writerbuf.New(slotLimit(maxBatches))
	}
	return a
}

// slotLimit is the number of batches a partition may hold with
// MaxBufferedBatches = n: n waiting, plus the one being filled and the one
// being sent. It saturates instead of overflowing (n may be math.MaxInt).
func slotLimit(n int) int64 {
	if int64(n) > math.MaxInt64-2 {
		return math.MaxInt64
	}
	return int64(n) + 2
}

// bounded says whether any bound applies to this partition.
func (a *admission) bounded() bool { return a.bytes != nil || a.slots != nil }

// tryAdmit takes, without waiting, what a message of size bytes needs:
// its bytes, and a slot when needSlot (it opens a batch). It takes nothing
// and returns false when anyone is in line (a newcomer never overtakes a
// waiter) or when either is short. slot reports whether a slot was taken.
func (a *admission) tryAdmit(size int64, needSlot bool) (slot, ok bool) {
	if len(a.line) > 0 {
		return false, false
	}
	if a.bytes != nil && !a.bytes.TryAcquire(size) {
		return false, false
	}
	if !needSlot || a.slots == nil {
		return false, true
	}
	if a.slots.TryAcquire(1) {
		return true, true
	}
	if a.bytes != nil {
		a.bytes.Release(size)
	}
	return false, false
}

// join puts a caller in line for a message of size bytes, reserving its
// bytes now, so that places follow the order in which callers reached the
// partition.
func (a *admission) join(size int64) *admissionWaiter {
	wt := &admissionWaiter{turn: make(chan struct{})}
	if a.bytes != nil {
		wt.bytes = a.bytes.Reserve(size)
	}
	a.line = append(a.line, wt)
	if len(a.line) == 1 {
		close(wt.turn)
	}
	return wt
}

// wait waits, with no lock held, for the waiter's bytes and then for its
// turn at the head of the line.
func (wt *admissionWaiter) wait(ctx context.Context) error {
	if wt.bytes != nil {
		if err := wt.bytes.Wait(ctx); err != nil {
			if errors.Is(err, writerbuf.ErrClosed) {
				return io.ErrClosedPipe
			}
			return err
		}
	}
	select {
	case <-wt.turn:
		return nil
	default:
	}
	select {
	case <-wt.turn:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// slotTicket returns the head's request for a slot, making it on first
// call. Granted says whether the slot is already the waiter's; otherwise
// the caller waits on the ticket with no lock held.
func (a *admission) slotTicket(wt *admissionWaiter) *writerbuf.Ticket {
	if wt.slot == nil {
		wt.slot = a.slots.Reserve(1)
	}
	return wt.slot
}

// admitted ends wt's wait: it leaves the line, keeping its bytes, and
// keeping its slot when withSlot (the batch it opens holds it) or giving
// it up otherwise (an open batch took the message after all).
func (a *admission) admitted(wt *admissionWaiter, withSlot bool) {
	if wt.slot != nil && !withSlot {
		wt.slot.Cancel()
	}
	wt.slot = nil
	a.leave(wt)
}

// abandon ends wt's wait without a message: it leaves the line and gives
// back whatever was granted.
func (a *admission) abandon(wt *admissionWaiter) {
	a.leave(wt)
	if wt.bytes != nil {
		wt.bytes.Cancel()
	}
	if wt.slot != nil {
		wt.slot.Cancel()
		wt.slot = nil
	}
}

// leave removes wt from the line, and lets the next one go if wt was at
// its head.
func (a *admission) leave(wt *admissionWaiter) {
	for i, x := range a.line {
		if x != wt {
			continue
		}
		copy(a.line[i:], a.line[i+1:])
		a.line[len(a.line)-1] = nil
		a.line = a.line[:len(a.line)-1]
		if i == 0 && len(a.line) > 0 {
			close(a.line[0].turn)
		}
		return
	}
}

// force takes a message's bytes, and a slot when withSlot, beyond the
// bounds, for a WriteMessages call made by a Completion goroutine of the
// Writer, which must not wait (see partitionWriter.addOverdraftLocked).
func (a *admission) force(size int64, withSlot bool) {
	if a.bytes != nil {
		a.bytes.Force(size)
	}
	if withSlot && a.slots != nil {
		a.slots.Force(1)
	}
}

// giveBack returns what a finished batch held: its slot, if it took one,
// and its messages' bytes.
func (a *admission) giveBack(bytes int64, slot bool) {
	if slot {
		a.slots.Release(1)
	}
	if a.bytes != nil {
		a.bytes.Release(bytes)
	}
}

// close fails the callers waiting for a slot of this partition and every
// later request; the writer-wide bytes are closed by the Writer.
func (a *admission) close() {
	if a.slots != nil {
		a.slots.Close()
	}
}
