package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go/internal/goid"
	"github.com/segmentio/kafka-go/internal/writerbuf"
	"github.com/segmentio/kafka-go/protocol"
	produceAPI "github.com/segmentio/kafka-go/protocol/produce"
)

// partitionWriter owns the batches of one topic-partition and the goroutine
// that sends them, one at a time, which is what keeps a partition's messages
// in order without an idempotent producer. A batch moves through these
// places:
//
//	cur          being filled (at most one)
//	queue        complete, waiting for the sending loop
//	sending      being sent (or retried) by the sending loop
//	completions  acknowledged or failed, waiting for (or in) its Completion
//	             call, when Completion runs on a goroutine of its own
//
// cur, queue and sending are guarded by mu. Batches always enter at the back
// and leave from the front, so order holds. The sending loop refills sending
// from the queue under mu in the same step that records the previous
// batch's outcome, so a non-empty queue always has a batch being sent in
// front of it.
//
// Budget: a batch takes one of the partition's MaxBufferedBatches+2 slots
// when opened, and each message takes its bytes from the writer-wide
// MaxBufferedBytes budget when accepted. Both are given back only when the
// batch is finished with: after its Completion call returned, or, without a
// Completion, once it is acknowledged or failed. So the bounds count every
// place above, the completion backlog included, and a slow Completion slows
// WriteMessages down instead of growing memory. Moving a batch forward never
// needs budget, so the sending loop never waits for space.
//
// A WriteMessages call made by a Completion goroutine of this Writer never
// waits for space either (see addOverdraft): the space it would wait for may
// be held by the very batch whose Completion is calling, or by batches that
// can only complete after it.
//
// Lock order: Writer.mu is released before any partition writer's mu is
// taken; pw.mu may be held while calling the non-blocking methods of a
// Budget (whose lock is a leaf). pw.mu is never held while waiting for
// budget, for the network, or for Completion.
type partitionWriter struct {
	w   *Writer
	key topicPartition

	// slots is nil without MaxBufferedBatches.
	slots *writerbuf.Budget
	// wake holds a token when the sending loop may have work.
	wake chan struct{}
	// completions, set when there is a Completion, runs it beside the
	// sending loop; see newPartitionWriter.
	completions *completionQueue
	// completing counts the batches sent whose Completion has not returned
	// yet (they still hold their budget).
	completing atomic.Int64

	mu      sync.Mutex
	cur     *writeBatch
	queue   batchQueue
	sending *writeBatch
	closed  bool
	// closedSeq numbers the batches in the order they were closed (1, 2,
	// ...); ackedSeq is the number of the last one acknowledged or failed.
	// flushes are the Flush calls waiting for ackedSeq to reach theirs.
	closedSeq, ackedSeq uint64
	flushes             []flushWaiter
	// pending is the line of callers waiting to add a message, in arrival
	// order; see slotWaiter.
	pending []*slotWaiter

	// idem is the sequence state of an idempotent Writer (nil otherwise),
	// used by the sending loop only; see writer_idempotent.go.
	idem *idemPartition
}

// flushWaiter is a Flush call waiting for batch number seq to be
// acknowledged or failed.
type flushWaiter struct {
	seq  uint64
	done chan struct{}
}

// newPartitionWriter starts the goroutines of a new partition writer. Called
// with w.mu held and w not closed, so the inflight.Add calls are safe.
func newPartitionWriter(w *Writer, key topicPartition) *partitionWriter {
	pw := &partitionWriter{w: w, key: key, wake: make(chan struct{}, 1)}
	if w.Idempotent {
		pw.idem = &idemPartition{p: &w.idem}
	}
	if n := w.MaxBufferedBatches; n > 0 {
		pw.slots = writerbuf.New(slotLimit(n))
	}
	// Completion does not run on the sending loop: a slow Completion would
	// stop the partition's sends, and with them the acknowledgements that
	// give budget back; a Completion calling Flush would wait for batches
	// that only the loop it blocks can send.
	if w.Completion != nil {
		pw.completions = newCompletionQueue()
		w.inflight.Add(1)
		go pw.complete()
	}
	w.inflight.Add(1)
	go pw.run()
	return pw
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

// writeBatch is a batch of messages for one partition.
type writeBatch struct {
	opened time.Time
	msgs   []Message
	bytes  int64 // sum of the messages' sizes, as accounted in the budgets
	slot   bool  // holds one of the partition's slots
	seq    uint64
	timer  *time.Timer
	// lingering is set when the batch should leave as soon as the
	// partition's sending loop is free, but that loop is busy: BatchTimeout
	// passed (with a buffer bound only), or a caller waits for space. The
	// batch stays open meanwhile; see expire and sendPartialLocked.
	lingering bool

	// err is set before done is closed, and read after.
	err  error
	done chan struct{}
}

func (b *writeBatch) fits(size, maxBytes int64) bool {
	return len(b.msgs) == 0 || b.bytes+size <= maxBytes
}

// slotWaiter is a caller in line for a partition. Its bytes ticket is
// granted by the writer-wide budget in FIFO order, but grants and the
// moments callers get the partition's mutex back may come in any order, so
// the line itself (pending) decides who goes next: only its head may add a
// message, and turn is closed when the waiter becomes the head. Only the
// head asks for a slot.
type slotWaiter struct {
	bytes *writerbuf.Ticket // nil without MaxBufferedBytes
	slot  *writerbuf.Ticket // the head's request for a slot, while it waits
	turn  chan struct{}
}

// addMode says what a partition writer does with a message that has no
// room now.
type addMode int

const (
	addNoWait    addMode = iota // return errWouldBlock
	addWait                     // wait in line
	addOverdraft                // take the space beyond the bounds (see addOverdraftLocked)
)

// add accepts m into the partition: it takes the message's bytes from the
// writer-wide budget, and puts the message into the batch being filled or
// into a new batch, which needs a slot. It returns the batch that received
// m.
func (pw *partitionWriter) add(ctx context.Context, m *Message, size int64, mode addMode) (*writeBatch, error) {
	bytes := pw.w.state().bytes

	pw.mu.Lock()
	if pw.closed {
		pw.mu.Unlock()
		return nil, io.ErrClosedPipe
	}
	if b := pw.tryAddLocked(m, size, mode); b != nil {
		pw.mu.Unlock()
		return b, nil
	}
	if mode == addNoWait {
		pw.mu.Unlock()
		return nil, errWouldBlock
	}

	// Get in line while holding the lock, so that places follow the order
	// in which callers reached the partition, then wait without it: the
	// sending loop needs the lock to make room. The writer-wide bytes are
	// reserved now, in that same order; a slot is only asked for by the
	// head of the line, and only when no open batch can take its message,
	// so that one freed slot lets a whole batch of waiters in, not one.
	sw := &slotWaiter{turn: make(chan struct{})}
	if bytes != nil {
		sw.bytes = bytes.Reserve(size)
	}
	pw.pending = append(pw.pending, sw)
	if len(pw.pending) == 1 {
		close(sw.turn)
	}
	pw.mu.Unlock()
	if sw.bytes != nil && pw.w.state().returning.Load() == 0 {
		// No batch will give bytes back by itself: what is taken sits in
		// partial batches, which only their sending gives back.
		pw.w.sendPartials()
	}

	s := pw.w.state().stats
	start := time.Now()
	b, err := pw.addInLine(ctx, sw, m, size)
	s.bufferWaits.add(1)
	s.bufferWaitTime.observeSince(start)
	return b, err
}

// tryAddLocked is add without waiting: it accepts m if that needs no
// wait (or overdrafts, in addOverdraft mode) and returns its batch, or
// returns nil, having taken nothing, when m would have to wait.
func (pw *partitionWriter) tryAddLocked(m *Message, size int64, mode addMode) *writeBatch {
	bytes := pw.w.state().bytes
	if pw.slots == nil && bytes == nil {
		return pw.appendLocked(m, size, false)
	}
	if mode == addOverdraft {
		return pw.addOverdraftLocked(m, size)
	}
	maxBytes := pw.w.batchBytes()
	if pw.cur != nil && !pw.cur.fits(size, maxBytes) {
		// Full for this message: send it on now rather than at its timeout,
		// whether or not the message then has to wait.
		pw.closeCurrentLocked()
	}
	// Nobody in line: go straight in if the space is there.
	if len(pw.pending) == 0 && (bytes == nil || bytes.TryAcquire(size)) {
		switch {
		case pw.slots == nil || (pw.cur != nil && pw.cur.fits(size, maxBytes)):
			return pw.appendLocked(m, size, false)
		case pw.slots.TryAcquire(1):
			return pw.appendLocked(m, size, true)
		}
		if bytes != nil {
			bytes.Release(size)
		}
	}
	return nil
}

// addRun accepts, under one hold of pw.mu, the messages of g from g.next on
// that need no wait, and stops at the first that would (or at the end). A
// call's messages for a partition thus land together, as in earlier
// versions: a BatchTimeout that fires meanwhile cannot split them, and the
// lock is taken once per call instead of once per message. Sync calls
// record in batches which batch took each message.
func (pw *partitionWriter) addRun(msgs []Message, g *partitionGroup, batches map[*writeBatch][]int32, mode addMode) error {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if pw.closed {
		return io.ErrClosedPipe
	}
	var last *writeBatch
	var lastIdx []int32
	for g.next < len(g.indexes) {
		i := g.indexes[g.next]
		m := &msgs[i]
		b := pw.tryAddLocked(m, m.totalSize(), mode)
		if b == nil {
			break
		}
		if batches != nil {
			if b != last {
				if last != nil {
					batches[last] = lastIdx
				}
				last, lastIdx = b, batches[b]
			}
			lastIdx = append(lastIdx, i)
		}
		g.next++
	}
	if last != nil {
		batches[last] = lastIdx
	}
	return nil
}

// addOverdraftLocked accepts m without waiting, for a WriteMessages call
// made by one of the Writer's Completion goroutines that found no room.
// Such a call must not wait: the space it would wait for may be held by the
// batch whose Completion is calling, or by batches that complete only after
// it (one Completion at a time per partition), and a Completion retrying
// to another partition may wait on that partition's Completion which
// itself waits on this one. So the bytes and the slot are taken beyond the
// bounds (writerbuf.Budget.Force); everyone else then waits until the
// Writer is back under them. docs/backpressure.md derives the resulting
// bound.
func (pw *partitionWriter) addOverdraftLocked(m *Message, size int64) *writeBatch {
	if bytes := pw.w.state().bytes; bytes != nil {
		bytes.Force(size)
	}
	if pw.cur != nil && !pw.cur.fits(size, pw.w.batchBytes()) {
		pw.closeCurrentLocked()
	}
	withSlot := false
	if pw.slots != nil && pw.cur == nil {
		pw.slots.Force(1)
		withSlot = true
	}
	return pw.appendLocked(m, size, withSlot)
}

// addInLine waits for sw's bytes and turn, then adds m as the head of the
// line, waiting for a slot when it must open a batch.
func (pw *partitionWriter) addInLine(ctx context.Context, sw *slotWaiter, m *Message, size int64) (*writeBatch, error) {
	maxBytes := pw.w.batchBytes()
	err := sw.wait(ctx)
	pw.mu.Lock()
	defer pw.mu.Unlock()
	for err == nil {
		if pw.closed {
			err = io.ErrClosedPipe
			break
		}
		if pw.cur != nil && !pw.cur.fits(size, maxBytes) {
			pw.closeCurrentLocked()
		}
		if pw.slots == nil || pw.cur != nil {
			// An open batch takes m (only the head adds, so one opened
			// while we waited for a slot is ours to join).
			if sw.slot != nil {
				sw.slot.Cancel()
				sw.slot = nil
			}
			pw.leaveLine(sw)
			return pw.appendLocked(m, size, false), nil
		}
		if sw.slot == nil {
			sw.slot = pw.slots.Reserve(1)
		}
		if sw.slot.Granted() {
			sw.slot = nil // the new batch holds it now
			pw.leaveLine(sw)
			return pw.appendLocked(m, size, true), nil
		}
		t := sw.slot
		pw.mu.Unlock()
		err = t.Wait(ctx)
		pw.mu.Lock()
		if errors.Is(err, writerbuf.ErrClosed) {
			err = io.ErrClosedPipe
		}
	}
	// Give back whatever was granted.
	pw.leaveLine(sw)
	if sw.bytes != nil {
		sw.bytes.Cancel()
	}
	if sw.slot != nil {
		sw.slot.Cancel()
	}
	return nil, err
}

// wait waits for the waiter's bytes and then for its turn.
func (sw *slotWaiter) wait(ctx context.Context) error {
	if sw.bytes != nil {
		if err := sw.bytes.Wait(ctx); err != nil {
			if errors.Is(err, writerbuf.ErrClosed) {
				return io.ErrClosedPipe
			}
			return err
		}
	}
	select {
	case <-sw.turn:
		return nil
	default:
	}
	select {
	case <-sw.turn:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// leaveLine removes sw from the line, and lets the next one go if sw was
// at its head.
func (pw *partitionWriter) leaveLine(sw *slotWaiter) {
	for i, x := range pw.pending {
		if x != sw {
			continue
		}
		copy(pw.pending[i:], pw.pending[i+1:])
		pw.pending[len(pw.pending)-1] = nil
		pw.pending = pw.pending[:len(pw.pending)-1]
		if i == 0 && len(pw.pending) > 0 {
			close(pw.pending[0].turn)
		}
		return
	}
}

// appendLocked adds m to the batch being filled, first closing it if m does
// not fit and opening a new one if needed; withSlot says whether the caller
// holds a slot for that new batch (and must then not have an open batch
// that fits m).
func (pw *partitionWriter) appendLocked(m *Message, size int64, withSlot bool) *writeBatch {
	if pw.cur != nil && !pw.cur.fits(size, pw.w.batchBytes()) {
		pw.closeCurrentLocked()
	}
	if pw.cur == nil {
		pw.openLocked(withSlot)
	} else if withSlot {
		panic("kafka: writer slot taken for a message that fits the open batch")
	}
	b := pw.cur
	b.msgs = append(b.msgs, *m)
	b.bytes += size
	pw.w.state().stats.bufferedBytes.Add(size)
	if len(b.msgs) >= pw.w.batchSize() || b.bytes >= pw.w.batchBytes() {
		pw.closeCurrentLocked()
	} else if pw.w.partialsWanted() {
		pw.sendPartialLocked()
	}
	return b
}

// partialsWanted says whether partial batches should be sent now: a caller
// waits for writer-wide bytes, and no batch holding bytes is on its way
// back (queued, being sent, or waiting for its Completion), so only sending
// partial batches can give bytes back. While some are on their way, the
// partial batches keep filling: sending them early would only make batches
// smaller. The conditions are checked at every event that can make both
// true (a caller starts waiting, a batch gives its bytes back, a message
// lands in a batch), so a caller never waits for BatchTimeout while the
// broker idles. (A caller waiting for a partition's slot needs no such
// help: the head of the line asks for a slot only when no open batch can
// take its message, and the ones behind it join the batch it opens.)
func (w *Writer) partialsWanted() bool {
	st := w.state()
	return st.bytes != nil && st.bytes.HasWaiters() && st.returning.Load() == 0
}

// sendPartialLocked makes the batch being filled sendable now (see
// partialsWanted): it holds budget that only its sending gives back, and
// waiting for BatchTimeout would leave the broker idle while callers wait. When the sending loop is busy, the batch
// stays open (lingering) and leaves as soon as the loop is free, which is
// no later than it could have left closed, and fuller.
func (pw *partitionWriter) sendPartialLocked() {
	switch {
	case pw.cur == nil:
	case pw.sending == nil:
		pw.closeCurrentLocked()
	default:
		pw.cur.lingering = true
	}
}

// openLocked starts a new batch; slot says whether it holds a slot.
func (pw *partitionWriter) openLocked(slot bool) {
	size := pw.w.batchSize()
	if size > 1024 {
		size = 1024 // grow beyond this only if really used
	}
	b := &writeBatch{
		opened: time.Now(),
		msgs:   make([]Message, 0, size),
		slot:   slot,
		done:   make(chan struct{}),
	}
	// The BatchTimeout flush only moves the batch to the queue, which never
	// blocks and needs no budget, so it can always happen.
	b.timer = time.AfterFunc(pw.w.batchTimeout(), func() { pw.expire(b) })
	pw.w.state().stats.bufferedBatches.Add(1)
	pw.cur = b
}

// closeCurrentLocked moves the batch being filled to the back of the line.
func (pw *partitionWriter) closeCurrentLocked() {
	b := pw.cur
	pw.cur = nil
	b.timer.Stop()
	pw.w.state().stats.batchQueueTime.observeSince(b.opened)
	pw.closedSeq++
	b.seq = pw.closedSeq
	pw.w.state().returning.Add(b.bytes)
	if pw.sending == nil {
		pw.sending = b
		pw.signal()
	} else {
		pw.queue.push(b)
	}
}

func (pw *partitionWriter) signal() {
	select {
	case pw.wake <- struct{}{}:
	default:
	}
}

// expire is the BatchTimeout of b. With a buffer bound, a batch that could
// not be sent right away stays open (lingering) instead: closed, it would
// only wait in the queue, and the partition's next messages would need a
// new batch, with a slot and bytes of its own. A caller that is slower than
// BatchTimeout (one waiting for space, or blocked on other partitions)
// would then fill each freed place with a batch of one message, and a slow
// broker would be served smaller and smaller batches. The lingering batch
// goes as soon as the sending loop is free for it; it is sent no later
// than it would have been, only fuller. Without a bound, batches close at
// BatchTimeout as they always did.
func (pw *partitionWriter) expire(b *writeBatch) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if pw.cur != b {
		return
	}
	if pw.sending != nil && (pw.slots != nil || pw.w.state().bytes != nil) {
		b.lingering = true
		return
	}
	pw.closeCurrentLocked()
}

// flush closes the batch being filled and returns a channel closed once
// every batch closed so far is acknowledged or failed, or nil when they all
// are already. It does not wait for Completion: a Flush called from
// Completion would otherwise wait for itself.
func (pw *partitionWriter) flush() <-chan struct{} {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if pw.cur != nil {
		pw.closeCurrentLocked()
	}
	if pw.ackedSeq >= pw.closedSeq {
		return nil
	}
	done := make(chan struct{})
	pw.flushes = append(pw.flushes, flushWaiter{seq: pw.closedSeq, done: done})
	return done
}

// ackedLocked records that batch number seq is acknowledged or failed
// (batches are sent in order, so every earlier one is too), and releases
// the Flush calls that waited for it.
func (pw *partitionWriter) ackedLocked(seq uint64) {
	pw.ackedSeq = seq
	n := 0
	for _, f := range pw.flushes {
		if f.seq > seq {
			break
		}
		close(f.done)
		n++
	}
	if n > 0 {
		k := copy(pw.flushes, pw.flushes[n:])
		clear(pw.flushes[k:])
		pw.flushes = pw.flushes[:k]
	}
}

// close stops accepting messages, wakes the callers waiting for a slot,
// and lets the sending loop drain what is left and exit.
func (pw *partitionWriter) close() {
	pw.mu.Lock()
	if pw.closed {
		pw.mu.Unlock()
		return
	}
	pw.closed = true
	if pw.cur != nil {
		pw.closeCurrentLocked()
	}
	pw.signal()
	pw.mu.Unlock()
	if pw.slots != nil {
		pw.slots.Close()
	}
}

// run is the sending loop.
func (pw *partitionWriter) run() {
	defer pw.w.inflight.Done()
	for {
		pw.mu.Lock()
		for pw.sending == nil && !pw.closed {
			pw.mu.Unlock()
			<-pw.wake
			pw.mu.Lock()
		}
		b := pw.sending
		pw.mu.Unlock()
		if b == nil {
			break // closed and drained
		}
		pw.send(b)
	}
	if pw.completions != nil {
		pw.completions.close()
	}
}

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
		pw.release(b)
		b.finish()
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

func (b *writeBatch) finish() {
	b.msgs = nil // the batch may stay referenced; its messages need not
	close(b.done)
}

// release gives back the budget of a batch whose Completion returned,
// gauges first, so that they never show less than what the budgets hold.
func (pw *partitionWriter) release(b *writeBatch) {
	s := pw.w.state().stats
	s.bufferedBytes.Add(-b.bytes)
	s.bufferedBatches.Add(-1)
	pw.completing.Add(-1)
	if b.slot {
		pw.slots.Release(1)
	}
	pw.releaseBytes(b)
}

// releaseBytes gives b's bytes back to the writer-wide budget, and sends
// partial batches if a caller waits for bytes that only they hold.
func (pw *partitionWriter) releaseBytes(b *writeBatch) {
	st := pw.w.state()
	st.returning.Add(-b.bytes)
	if st.bytes != nil {
		st.bytes.Release(b.bytes)
		if pw.w.partialsWanted() {
			pw.w.sendPartials()
		}
	}
}

func (pw *partitionWriter) send(b *writeBatch) {
	w := pw.w
	s := w.state().stats
	s.batchTime.observeSince(b.opened)
	s.batchSize.observe(int64(len(b.msgs)))
	s.batchBytes.observe(b.bytes)

	res, err := pw.produceWithRetries(b)
	if res != nil {
		for i := range b.msgs {
			m := &b.msgs[i]
			m.Topic = pw.key.topic
			m.Partition = int(pw.key.partition)
			m.Offset = res.baseOffset + int64(i)
			if res.baseOffset < 0 {
				m.Offset = -1 // a duplicate the broker did not place
			}
			if m.Time.IsZero() {
				m.Time = res.logAppendTime
			}
		}
	}
	b.err = err

	completion := w.Completion
	if completion == nil {
		// Nothing else holds the batch: its space is free before anyone
		// (a synchronous caller, Flush) hears about the outcome. The
		// gauges drop first, so that they never show less than is held.
		s.bufferedBytes.Add(-b.bytes)
		s.bufferedBatches.Add(-1)
	}
	// Refilling the sending place in the same step as the slot changes
	// hands (given back, or kept by the batch now waiting for Completion)
	// keeps the partition's batches within N+2 at every instant, and
	// "queue not empty implies a batch is being sent" true at all times.
	pw.mu.Lock()
	if completion == nil {
		if b.slot {
			pw.slots.Release(1)
		}
	} else {
		pw.completing.Add(1)
	}
	pw.ackedLocked(b.seq)
	pw.sending = pw.queue.pop()
	if pw.sending == nil && pw.cur != nil && (pw.cur.lingering || pw.w.partialsWanted()) {
		pw.closeCurrentLocked() // straight to sending
	}
	pw.mu.Unlock()

	if completion != nil {
		pw.completions.put(b)
	} else {
		pw.releaseBytes(b)
		pw.reportDropped(b, err)
		b.finish()
	}
}

type produceResult struct {
	err           error
	baseOffset    int64
	logAppendTime time.Time
	throttle      time.Duration
}

func (pw *partitionWriter) produceWithRetries(b *writeBatch) (*produceResult, error) {
	w := pw.w
	s := w.state().stats
	key := pw.key
	var res *produceResult
	var err error
	for attempt, max := 0, w.maxAttempts(); attempt < max; attempt++ {
		if attempt > 0 {
			s.retries.add(1)
			delay := writerBackoff(attempt, w.writeBackoffMin(), w.writeBackoffMax())
			w.logf("backing off %s writing %d messages to %s (partition: %d)", delay, len(b.msgs), key.topic, key.partition)
			time.Sleep(delay)
		}
		w.logf("writing %d messages to %s (partition: %d)", len(b.msgs), key.topic, key.partition)

		start := time.Now()
		res, err = pw.produce(b)
		s.writes.add(1)
		s.messages.add(int64(len(b.msgs)))
		s.bytes.add(b.bytes)
		s.writeTime.observeSince(start)
		if res != nil {
			err = res.err
			s.waitTime.observe(int64(res.throttle))
		}
		if pw.idem != nil {
			err = pw.idem.settle(res, err)
		}
		if err == nil {
			break
		}
		s.errors.add(1)
		w.errorf("error writing messages to %s (partition %d, attempt %d): %s", key.topic, key.partition, attempt, err)
		if !writerRetriable(err) {
			break
		}
		if leadershipChanged(err) {
			w.state().meta.invalidate(key.topic)
		}
	}
	var retry idemRetry
	if errors.As(err, &retry) {
		// MaxAttempts ran out just as the partition restarted its
		// sequence numbers: the batch was refused and never appended, so
		// the broker's refusal is the outcome, as for any other batch
		// that used up its attempts.
		err = retry.cause
	}
	pw.idem.finish(b, err)
	return res, err
}

// writerRetriable says whether sending the same batch again may succeed.
func writerRetriable(err error) bool {
	return isTemporary(err) || isTransientNetworkError(err) || errors.Is(err, protocol.ErrNoLeader)
}

func leadershipChanged(err error) bool {
	return errors.Is(err, NotLeaderForPartition) ||
		errors.Is(err, LeaderNotAvailable) ||
		errors.Is(err, UnknownTopicOrPartition) ||
		errors.Is(err, protocol.ErrNoLeader)
}

// produce sends b once. With RequireNone the broker does not answer, and
// the result is nil (the messages then get no offsets, as before).
func (pw *partitionWriter) produce(b *writeBatch) (*produceResult, error) {
	w := pw.w
	timeout := w.writeTimeout()
	records, err := pw.records(b)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	req := &produceAPI.Request{
		Acks: int16(w.RequiredAcks),
		// Half of our own deadline, so that the broker's answer to a
		// timed-out request still reaches us before we give up on it.
		Timeout: int32(timeout / 2 / time.Millisecond),
		Topics: []produceAPI.RequestTopic{{
			Topic: pw.key.topic,
			Partitions: []produceAPI.RequestPartition{{
				Partition: pw.key.partition,
				RecordSet: protocol.RecordSet{
					Attributes: protocol.Attributes(w.Compression) & 7,
					Records:    records,
				},
			}},
		}},
	}
	m, err := w.transportOrDefault().RoundTrip(ctx, w.Addr, req)
	if err != nil {
		return nil, err
	}
	if w.RequiredAcks == RequireNone {
		return nil, nil
	}
	r, ok := m.(*produceAPI.Response)
	if !ok {
		return nil, fmt.Errorf("kafka.(*Writer): unexpected response of type %T to a produce request", m)
	}
	for i := range r.Topics {
		t := &r.Topics[i]
		if t.Topic != pw.key.topic {
			continue
		}
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if p.Partition != pw.key.partition {
				continue
			}
			return &produceResult{
				err:           makeError(p.ErrorCode, p.ErrorMessage),
				baseOffset:    p.BaseOffset,
				logAppendTime: makeTime(p.LogAppendTime),
				throttle:      makeDuration(r.ThrottleTimeMs),
			}, nil
		}
	}
	return nil, protocol.NewErrNoPartition(pw.key.topic, pw.key.partition)
}

// batchRecords presents a batch's messages as records. The key and value
// readers are reused from record to record: the encoder consumes a record
// before asking for the next one.
type batchRecords struct {
	msgs       []Message
	next       int
	rec        protocol.Record
	key, value recordBytes
	// size is the batch's accounted bytes (writeBatch.bytes), about what
	// its records take encoded; 0 when unknown.
	size int64
}

// SizeHint lets the record batch encoder allocate its buffer once.
func (r *batchRecords) SizeHint() int { return int(r.size) }

func (r *batchRecords) ReadRecord() (*protocol.Record, error) {
	if r.next >= len(r.msgs) {
		return nil, io.EOF
	}
	m := &r.msgs[r.next]
	r.next++
	r.rec = protocol.Record{Time: m.Time, Headers: m.Headers}
	if m.Key != nil {
		r.key.Reset(m.Key)
		r.rec.Key = &r.key
	}
	if m.Value != nil {
		r.value.Reset(m.Value)
		r.rec.Value = &r.value
	}
	return &r.rec, nil
}

// recordBytes is a reusable protocol.Bytes over a byte slice.
type recordBytes struct{ bytes.Reader }

func (*recordBytes) Close() error { return nil }
