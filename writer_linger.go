package kafka

import (
	"sync"
	"time"
)

// lingerQueue keeps the BatchTimeout of every open batch of a Writer with one
// timer, instead of a timer per batch (per partition): at 1000 partitions a
// timer each costs memory and wake-ups that follow the partition count, not
// the traffic.
//
// BatchTimeout is the same for every batch of a Writer, so the batches'
// deadlines come in the order they were opened: the queue is a FIFO, and the
// timer waits for its head. An entry whose batch left early (full, flushed)
// stays until its deadline and is then skipped (expire checks that the batch
// is still being filled); entries hold the batch, whose messages finish drops.
//
// mu is a leaf: add is called with a partition's mutex held, and the timer
// calls expire only after releasing mu.
type lingerQueue struct {
	mu      sync.Mutex
	q       []lingerEntry
	head    int
	timer   *time.Timer
	armed   bool // the timer is set for the head's deadline
	stopped bool
	due     []lingerEntry // reused by fire
}

type lingerEntry struct {
	pw *partitionWriter
	b  *writeBatch
	at time.Time
}

// add queues b's deadline at.
func (l *lingerQueue) add(pw *partitionWriter, b *writeBatch, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	if l.head > 0 && l.head == len(l.q) {
		clear(l.q)
		l.q, l.head = l.q[:0], 0
	}
	l.q = append(l.q, lingerEntry{pw: pw, b: b, at: at})
	if !l.armed {
		l.armLocked(time.Until(at))
	}
}

func (l *lingerQueue) armLocked(d time.Duration) {
	l.armed = true
	if l.timer == nil {
		l.timer = time.AfterFunc(d, l.fire)
	} else {
		l.timer.Reset(d)
	}
}

// fire expires the batches whose deadline passed and sets the timer for the
// next one.
func (l *lingerQueue) fire() {
	now := time.Now()
	l.mu.Lock()
	due := l.due[:0]
	for l.head < len(l.q) && !l.q[l.head].at.After(now) {
		due = append(due, l.q[l.head])
		l.q[l.head] = lingerEntry{}
		l.head++
	}
	if l.head > len(l.q)/2 {
		n := copy(l.q, l.q[l.head:])
		clear(l.q[n:])
		l.q, l.head = l.q[:n], 0
	}
	l.armed = false
	if l.head < len(l.q) && !l.stopped {
		l.armLocked(l.q[l.head].at.Sub(now))
	}
	l.due = nil // owned by this call until it gives it back
	l.mu.Unlock()

	for i := range due {
		due[i].pw.expire(due[i].b)
		due[i] = lingerEntry{}
	}

	l.mu.Lock()
	if l.due == nil {
		l.due = due[:0]
	}
	l.mu.Unlock()
}

// stop drops the queue once the Writer is closed (no batch is open then).
func (l *lingerQueue) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
	if l.timer != nil {
		l.timer.Stop()
	}
	clear(l.q)
	l.q, l.head, l.armed = nil, 0, false
}
