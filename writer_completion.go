package kafka

import (
	"sync"

	"github.com/segmentio/kafka-go/internal/goid"
)

// The Completion side of the Writer: the goroutines that run Completion
// beside the sending loops, and how their own WriteMessages calls are
// recognized.

// complete runs the Completion calls, in batch order, beside the sending
// loop. Its goroutine is registered as a completer so that WriteMessages
// calls made from Completion are recognized (see addOverdraftLocked).
func (pw *partitionWriter) complete() {
	defer pw.w.inflight.Done()
	st := pw.w.state()
	id := goid.ID()
	st.completers.add(id)
	defer st.completers.remove(id)
	for {
		b := pw.completions.get()
		if b == nil {
			return
		}
		pw.w.Completion(b.msgs, b.err)
		pw.completing.Add(-1)
		pw.mu.Lock()
		partials := pw.finishLocked(b)
		pw.completedLocked(b.seq) // after the budget is back: Stats agrees once Flush returns
		pw.mu.Unlock()
		if partials {
			pw.w.sendPartials()
		}
	}
}

// completers is the set of goroutines running a Writer's Completion calls
// beside the sending loops.
type completers struct {
	mu  sync.Mutex
	ids map[uint64]struct{}
}

func (c *completers) add(id uint64) {
	if id == 0 {
		return // unknown: such a goroutine's calls wait like anyone's
	}
	c.mu.Lock()
	if c.ids == nil {
		c.ids = make(map[uint64]struct{})
	}
	c.ids[id] = struct{}{}
	c.mu.Unlock()
}

func (c *completers) remove(id uint64) {
	c.mu.Lock()
	delete(c.ids, id)
	c.mu.Unlock()
}

// current reports whether the calling goroutine is one of the set. It only
// reads the goroutine's id (about a microsecond) when the set is not empty.
func (c *completers) current() bool {
	c.mu.Lock()
	n := len(c.ids)
	c.mu.Unlock()
	if n == 0 {
		return false
	}
	id := goid.ID()
	c.mu.Lock()
	_, ok := c.ids[id]
	c.mu.Unlock()
	return ok
}

// completionQueue hands sent batches to the goroutine that runs Completion.
// Its length needs no bound of its own: every batch in it still holds its
// slot and bytes, so the partition's budget bounds it.
type completionQueue struct {
	mu     sync.Mutex
	q      batchQueue
	closed bool
	wake   chan struct{}
}

func newCompletionQueue() *completionQueue {
	return &completionQueue{wake: make(chan struct{}, 1)}
}

func (c *completionQueue) put(b *writeBatch) {
	c.mu.Lock()
	c.q.push(b)
	c.mu.Unlock()
	c.signal()
}

func (c *completionQueue) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.signal()
}

func (c *completionQueue) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// get returns the next batch, or nil once closed and drained.
func (c *completionQueue) get() *writeBatch {
	for {
		c.mu.Lock()
		b := c.q.pop()
		closed := c.closed
		c.mu.Unlock()
		if b != nil || closed {
			return b
		}
		<-c.wake
	}
}
