package kafka

import (
	"sync"

	"github.com/segmentio/kafka-go/internal/goid"
)

// The Completion side of the Writer: the goroutines that run Completion
// beside the sinks, and how their own WriteMessages calls are recognized.

// complete queues b, acknowledged or failed, for its Completion call.
// Completion does not run on the sink: a slow Completion would stop the
// requests of every partition of the broker, and with them the
// acknowledgements that give budget back; a Completion calling Flush would
// wait for batches that only the sink it blocks can send.
//
// The calls of a partition run one at a time, in batch order, on one of
// the Writer's completion workers (completionWorkers), which takes the
// partition when its queue stops being empty and runs its calls until the
// queue is empty again. Called by a sink, which holds a count of
// w.inflight, so that starting a worker never races with the Wait in Close.
func (pw *partitionWriter) complete(b *writeBatch) {
	c := pw.completions
	c.mu.Lock()
	c.q.push(b)
	start := !c.running
	c.running = true
	c.mu.Unlock()
	if start {
		pw.w.state().workers.schedule(pw)
	}
}

// completionWorkers run the Completion calls of a Writer's partitions. A
// worker takes a partition from ready and runs its calls until its queue
// is empty, then takes the next; it ends when ready is empty. So the
// goroutines follow the calls to make, not the partitions: a burst of
// answers for 1000 partitions is run by a few workers.
//
// A Completion may block on another partition's Completion (a synchronous
// WriteMessages to another partition waits for that batch's Completion to
// return), so ready must never wait behind blocked calls: whenever ready
// is not empty, some worker is idle (not inside a Completion call) and
// will take it. schedule starts a worker when none is idle, and a worker
// about to call Completion starts one when it was the last idle worker and
// ready is not empty.
type completionWorkers struct {
	mu    sync.Mutex
	ready []*partitionWriter
	idle  int // workers started and not inside a Completion call
}

// schedule queues pw, whose completion queue just stopped being empty.
func (cw *completionWorkers) schedule(pw *partitionWriter) {
	cw.mu.Lock()
	cw.ready = append(cw.ready, pw)
	start := cw.startLocked(pw.w)
	cw.mu.Unlock()
	if start {
		go cw.work(pw.w)
	}
}

// startLocked counts a new worker in when ready has work that no idle
// worker will take; the caller then starts it. The caller holds a count of
// w.inflight (a sink or a worker), so the Add never races with Close.
func (cw *completionWorkers) startLocked(w *Writer) bool {
	if len(cw.ready) == 0 || cw.idle > 0 {
		return false
	}
	cw.idle++
	w.inflight.Add(1)
	return true
}

// work is a worker. Its goroutine is registered as a completer so that
// WriteMessages calls made from Completion are recognized (see
// addOverdraftLocked).
func (cw *completionWorkers) work(w *Writer) {
	defer w.inflight.Done()
	st := w.state()
	id := goid.ID()
	st.completers.add(id)
	defer st.completers.remove(id)
	for {
		cw.mu.Lock()
		if len(cw.ready) == 0 {
			cw.idle--
			cw.mu.Unlock()
			return
		}
		pw := cw.ready[0]
		cw.ready[0] = nil
		cw.ready = cw.ready[1:]
		if len(cw.ready) == 0 {
			cw.ready = nil // let the array go
		}
		cw.mu.Unlock()
		cw.run(pw)
	}
}

// run makes pw's Completion calls until its queue is empty.
func (cw *completionWorkers) run(pw *partitionWriter) {
	w := pw.w
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

		cw.mu.Lock()
		cw.idle--
		start := cw.startLocked(w)
		cw.mu.Unlock()
		if start {
			go cw.work(w)
		}
		w.Completion(b.msgs, b.err)
		cw.mu.Lock()
		cw.idle++
		cw.mu.Unlock()

		pw.completing.Add(-1)
		pw.mu.Lock()
		partials := pw.finishLocked(b)
		pw.completedLocked(b.seq) // after the budget is back: Stats agrees once Flush returns
		pw.mu.Unlock()
		if partials {
			w.sendPartials()
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
	running bool // the partition is in a worker's hands (ready or running)
}
