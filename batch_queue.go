package kafka

// batchFIFO holds the complete batches of a partition that wait for its
// sending loop, oldest first. It is only used with the partition writer's
// mutex held, and never blocks.
type batchFIFO interface {
	// push appends b, or reports false when the queue is full.
	push(b *writeBatch) bool
	// pop removes and returns the oldest batch, or nil when empty.
	pop() *writeBatch
	len() int
}

// batchQueue is the historical, unbounded queue, used when
// MaxBufferedBatches is 0: it grows for as long as batches come in faster
// than they are sent, and push always succeeds.
type batchQueue struct {
	items []*writeBatch
	head  int
}

func (q *batchQueue) push(b *writeBatch) bool {
	if q.head > 0 && q.head == len(q.items) {
		// Drained: reuse the array from its start.
		q.items, q.head = q.items[:0], 0
	}
	q.items = append(q.items, b)
	return true
}

func (q *batchQueue) pop() *writeBatch {
	if q.head == len(q.items) {
		return nil
	}
	b := q.items[q.head]
	q.items[q.head] = nil // let the batch be collected once sent
	q.head++
	return b
}

func (q *batchQueue) len() int { return len(q.items) - q.head }

// boundedBatchQueue is the queue used with MaxBufferedBatches = N: a
// channel of capacity N, so that at most N complete batches ever wait. The
// channel is only a bounded FIFO here: both ends use it without blocking.
type boundedBatchQueue struct {
	ch chan *writeBatch
}

func newBoundedBatchQueue(capacity int) *boundedBatchQueue {
	return &boundedBatchQueue{ch: make(chan *writeBatch, capacity)}
}

func (q *boundedBatchQueue) push(b *writeBatch) bool {
	select {
	case q.ch <- b:
		return true
	default:
		return false
	}
}

func (q *boundedBatchQueue) pop() *writeBatch {
	select {
	case b := <-q.ch:
		return b
	default:
		return nil
	}
}

func (q *boundedBatchQueue) len() int { return len(q.ch) }
