package kafka

import "sync"

// batchQueue carries complete batches from the goroutines that fill them to
// a partition's sending loop, first in, first out. put never blocks (it is
// called with the partition writer's mutex held); get blocks until a batch
// is available, and reports false once the queue is closed and drained.
type batchQueue interface {
	put(*writeBatch)
	get() (*writeBatch, bool)
	close()
}

// unboundedBatchQueue is the historical queue, used when MaxBufferedBatches
// is 0: it grows as long as batches come in faster than they are sent.
type unboundedBatchQueue struct {
	mu     sync.Mutex
	items  []*writeBatch
	head   int
	closed bool
	// wake holds a token when the consumer may have something to do; one
	// token is enough because there is a single consumer, which re-checks
	// the state after each wake-up.
	wake chan struct{}
}

func newUnboundedBatchQueue() *unboundedBatchQueue {
	return &unboundedBatchQueue{wake: make(chan struct{}, 1)}
}

func (q *unboundedBatchQueue) put(b *writeBatch) {
	q.mu.Lock()
	if q.head > 0 && q.head == len(q.items) {
		// Drained: reuse the array from the start.
		q.items = q.items[:0]
		q.head = 0
	}
	q.items = append(q.items, b)
	q.mu.Unlock()
	q.signal()
}

func (q *unboundedBatchQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *unboundedBatchQueue) get() (*writeBatch, bool) {
	for {
		q.mu.Lock()
		if q.head < len(q.items) {
			b := q.items[q.head]
			q.items[q.head] = nil
			q.head++
			q.mu.Unlock()
			return b, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return nil, false
		}
		<-q.wake
	}
}

func (q *unboundedBatchQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

func (q *unboundedBatchQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) - q.head
}

// boundedBatchQueue is the queue used with MaxBufferedBatches: a channel
// whose capacity the partition's slot budget guarantees is never exceeded.
type boundedBatchQueue struct {
	ch chan *writeBatch
}

func newBoundedBatchQueue(capacity int) *boundedBatchQueue {
	return &boundedBatchQueue{ch: make(chan *writeBatch, capacity)}
}

func (q *boundedBatchQueue) put(b *writeBatch) {
	select {
	case q.ch <- b:
	default:
		// Blocking here would stall the caller while it holds the partition
		// writer's mutex; the slot accounting makes it impossible.
		panic("kafka: writer batch queue over capacity (slot accounting bug)")
	}
}

func (q *boundedBatchQueue) get() (*writeBatch, bool) {
	b, ok := <-q.ch
	return b, ok
}

func (q *boundedBatchQueue) close() { close(q.ch) }

func (q *boundedBatchQueue) len() int { return len(q.ch) }
