package kafka

import (
	"sync"
	"time"

	"github.com/segmentio/kafka-go/internal/goid"
)

// The Completion side of the Writer: the goroutines that run Completion
// beside the sinks, and how their own WriteMessages calls are recognized.

// queueCompletionLocked queues b, acknowledged or failed, for its
// Completion call, and reports whether the partition needs a worker, which
// the caller asks for with startCompletions once pw.mu is released.
//
// It is called with pw.mu held (lock order: pw.mu, then the completion
// queue's mu, a leaf), in the step that records b's outcome: queued any
// later, the partition's next batch could be sent, answered and queued
// first, its Completion would run before b's, and a Flush waiting for b
// would return when that later call did.
//
// Completion does not run on the sink: a slow Completion would stop the
// requests of every partition of the broker, and with them the
// acknowledgements that give budget back; a Completion calling Flush would
// wait for batches that only the sink it blocks can send. The calls of a
// partition run one at a time, in batch order, on one of the Writer's
// completion workers (completionWorkers), which takes the partition when
// its queue stops being empty and runs its calls until the queue is empty
// again.
func (pw *partitionWriter) queueCompletionLocked(b *writeBatch) (start bool) {
	c := pw.completions
	c.mu.Lock()
	c.q.push(b)
	start = !c.running
	c.running = true
	c.mu.Unlock()
	return start
}

// startCompletions hands the partition to a completion worker. Called by a
// sink, which holds a count of w.inflight, so that starting a worker never
// races with the Wait in Close.
func (pw *partitionWriter) startCompletions() {
	pw.w.state().workers.schedule(pw)
}

// completionWorkers run the Completion calls of a Writer's partitions. A
// worker takes a partition from ready and runs its calls until its queue
// is empty, then takes the next; it ends when ready is empty. So the
// goroutines follow the calls to make, not the partitions: a burst of
// answers for 1000 partitions is run by a few workers.
//
// A Completion may block on another partition's Completion (a synchronous
// WriteMessages to another partition waits for that batch's Completion to
// return), so ready must never wait for good behind blocked calls. While
// ready is not empty and every worker is inside a Completion call, the
// Writer's one watchdog timer is armed; when it fires and no call has
// returned since it was armed, it starts one more worker (and is armed
// again if that is still the state). Workers that keep returning from
// their calls are left to drain ready themselves. Each worker started
// while no call returns doubles the wait before the next, up to
// completionStallMax, and a returned call resets it: on a loaded machine,
// where workers wait for a CPU inside their calls (and so does every new
// one), the workers grow by a few a second instead of one per partition
// queued, and a chain of Completion calls that each wait for another still
// goes on, a link per completionStallMax at worst.
//
// A Completion call that waits inside this Writer (a synchronous
// WriteMessages waiting for batches, whose Completion calls must run
// first) says so (park): it is blocked, not starved of CPU. When every
// worker is parked like this and a partition waits, a worker starts at
// once, without the watchdog's wait: a chain of Completion calls each
// writing synchronously to the next partition takes one worker per link
// and no timer. Workers started this way are at most one more than the
// parked ones, so CPU starvation alone (no call parks) still adds workers
// only through the watchdog.
//
// ready is never left without a worker: schedule starts one when there is
// none, and a worker ends only when ready is empty. So a worker that holds
// a count of w.inflight exists whenever the watchdog starts another, and
// its Add never races with the Wait in Close.
type completionWorkers struct {
	mu      sync.Mutex
	ready   []*partitionWriter
	workers int    // workers started and not ended
	idle    int    // of which not inside a Completion call
	parked  int    // of which inside a call waiting in the Writer (park)
	returns uint64 // Completion calls returned so far
	armed   bool   // the watchdog is set
	armedAt uint64 // returns when it was set
	stall   time.Duration
	timer   *time.Timer
	// stallMin and stallMax are completionStall and completionStallMax as
	// the Writer started (writerState), read once, so that a test setting
	// the variables never races with a Writer still running.
	stallMin, stallMax time.Duration
}

// completionStall is how long queued partitions wait for a worker while
// every worker is inside a Completion call that does not return; it
// doubles while workers are started without any call returning, up to
// completionStallMax. (Variables so that a test can take the watchdog out.)
var (
	completionStall    = 5 * time.Millisecond
	completionStallMax = 100 * time.Millisecond
)

// schedule queues pw, whose completion queue just stopped being empty.
func (cw *completionWorkers) schedule(pw *partitionWriter) {
	cw.mu.Lock()
	cw.ready = append(cw.ready, pw)
	start := cw.workers == 0 || cw.allParkedLocked()
	if start {
		cw.addLocked(pw.w)
	} else {
		cw.watchLocked(pw.w)
	}
	cw.mu.Unlock()
	if start {
		go cw.work(pw.w)
	}
}

// addLocked counts a new worker in; the caller then starts it. The caller
// holds a count of w.inflight (a sink, a worker) or there is a worker that
// does (the watchdog), so the Add never races with Close.
func (cw *completionWorkers) addLocked(w *Writer) {
	cw.workers++
	cw.idle++
	w.inflight.Add(1)
}

// allParkedLocked reports whether a partition waits while every worker is
// parked: none can take it before a call it waits for returns.
func (cw *completionWorkers) allParkedLocked() bool {
	return len(cw.ready) > 0 && cw.idle == 0 && cw.parked == cw.workers
}

// park is called by a worker whose Completion call is about to wait inside
// the Writer; unpark when the wait is over. The caller, a worker, holds a
// count of w.inflight.
func (cw *completionWorkers) park(w *Writer) {
	cw.mu.Lock()
	cw.parked++
	start := cw.allParkedLocked()
	if start {
		cw.addLocked(w)
	}
	cw.mu.Unlock()
	if start {
		go cw.work(w)
	}
}

func (cw *completionWorkers) unpark() {
	cw.mu.Lock()
	cw.parked--
	cw.mu.Unlock()
}

// watchLocked arms the watchdog when ready waits and no worker is idle.
func (cw *completionWorkers) watchLocked(w *Writer) {
	if cw.armed || len(cw.ready) == 0 || cw.idle > 0 {
		return
	}
	cw.armed, cw.armedAt = true, cw.returns
	if cw.stall == 0 {
		cw.stall = cw.stallMin
	}
	if cw.timer == nil {
		cw.timer = time.AfterFunc(cw.stall, func() { cw.stalled(w) })
	} else {
		cw.timer.Reset(cw.stall)
	}
}

// stalled is the watchdog: one more worker when no call returned since it
// was armed and ready still waits for an idle worker.
func (cw *completionWorkers) stalled(w *Writer) {
	cw.mu.Lock()
	cw.armed = false
	start := len(cw.ready) > 0 && cw.idle == 0 && cw.returns == cw.armedAt
	if start {
		cw.stall = min(2*cw.stall, cw.stallMax)
		cw.addLocked(w)
	} else {
		if cw.returns != cw.armedAt {
			cw.stall = cw.stallMin
		}
		cw.watchLocked(w)
	}
	cw.mu.Unlock()
	if start {
		go cw.work(w)
	}
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
			cw.workers--
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
		cw.watchLocked(w)
		cw.mu.Unlock()
		w.Completion(pw.completionMessages(b), b.err)
		cw.mu.Lock()
		cw.idle++
		cw.returns++
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
