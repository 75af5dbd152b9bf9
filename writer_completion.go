package kafka

import (
	"sync"

	"github.com/segmentio/kafka-go/internal/goid"
)

// The Completion side of the Writer: the goroutines that run Completion
// beside the sinks, and how their own WriteMessages calls are recognized.

// complete queues b, acknowledged or failed, for its Completion call. The
// calls of a partition run on a goroutine started when its queue stops
// being empty and gone when it is empty again: one at a time per
// partition, in batch order, and no goroutine for a partition with nothing
// to report. Completion does not run on the sink: a slow Completion would
// stop the requests of every partition of the broker, and with them the
// acknowledgements that give budget back; a Completion calling Flush would
// wait for batches that only the sink it blocks can send.
//
// Called by a sink, which holds a count of w.inflight, so that the Add
// below never races with the Wait in Close.
func (pw *partitionWriter) complete(b *writeBatch) {
	c := pw.completions
	c.mu.Lock()
	c.q.push(b)
	start := !c.running
	c.running = true
	c.mu.Unlock()
	if start {
		pw.w.inflight.Add(1)
		go pw.runCompletions()
	}
}

// runCompletions runs the queued Completion calls of the partition until
// the queue is empty. Its goroutine is registered as a completer so that
// WriteMessages calls made from Completion are recognized (see
// addOverdraftLocked).
func (pw *partitionWriter) runCompletions() {
	defer pw.w.inflight.Done()
	st := pw.w.state()
	id := goid.ID()
	st.completers.add(id)
	defer st.completers.remove(id)
	c := pw.completions
	for {
		c.mu.Lock()
		b := c.q.pop()
		if b == nil {
			c.running = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		pw.w.Completion(b.msgs, b.err)
		pw.completing.Add(-1)
		pw.mu.Lock()
		partials := pw.finishLocked(b)
		pw.mu.Unlock()
		if partials {
			pw.w.sendPartials()
		}
	}
}

// completers is the set of goroutines running a Writer's Completion calls
// beside the sinks.
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

// completionQueue holds a partition's batches waiting for their Completion
// call. Its length needs no bound of its own: every batch in it still holds
// its slot and bytes, so the partition's budget bounds it.
type completionQueue struct {
	mu      sync.Mutex
	q       batchQueue
	running bool // a goroutine is running the calls (runCompletions)
}
