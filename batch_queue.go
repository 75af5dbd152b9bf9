package kafka

// batchQueue is a FIFO of batches on a ring buffer: the complete batches of
// a partition waiting for its sending loop, and the sent batches waiting
// for their Completion call. It is unbounded as a structure; what bounds
// its length is the budget each batch holds (MaxBufferedBatches,
// MaxBufferedBytes), or nothing in the historical unbounded mode.
//
// The ring starts empty and grows by doubling only when full, so a queue
// costs nothing until batches exist (MaxBufferedBatches may be huge), and
// a queue that never drains completely reuses its array instead of
// growing it for ever. Not safe for concurrent use: its owner's mutex
// guards it.
type batchQueue struct {
	ring []*writeBatch
	head int // index of the oldest batch
	n    int // batches queued
}

func (q *batchQueue) push(b *writeBatch) {
	if q.n == len(q.ring) {
		q.grow()
	}
	q.ring[(q.head+q.n)%len(q.ring)] = b
	q.n++
}

// pop removes and returns the oldest batch, or nil when empty.
func (q *batchQueue) pop() *writeBatch {
	if q.n == 0 {
		return nil
	}
	b := q.ring[q.head]
	q.ring[q.head] = nil // let the batch be collected once done
	q.head = (q.head + 1) % len(q.ring)
	q.n--
	if q.n == 0 {
		q.head = 0
	}
	return b
}

func (q *batchQueue) len() int { return q.n }

func (q *batchQueue) grow() {
	size := 2 * len(q.ring)
	if size == 0 {
		size = 4
	}
	ring := make([]*writeBatch, size)
	// Unroll the wrapped contents to the start of the new array.
	k := copy(ring, q.ring[q.head:])
	copy(ring[k:], q.ring[:q.head])
	q.ring, q.head = ring, 0
}
