package kafka

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go/internal/writerbuf"
	"github.com/segmentio/kafka-go/protocol"
)

// partitionWriter owns the batches of one topic-partition. It has no
// goroutine and no timer of its own: its ready batch travels in a Produce
// request of the sink of the partition's leader (writer_sink.go), together
// with the ready batches of the other partitions that broker leads, and its
// BatchTimeout is kept by the Writer's one linger timer (writer_linger.go).
// It sends one batch at a time, which is what keeps a partition's messages
// in order without an idempotent producer. A batch moves through these
// places:
//
//	cur          being filled (at most one)
//	queue        complete, waiting for the batch in sending to finish
//	sending      handed to the leader's sink: waiting for a request, in
//	             one, or waiting for its retry
//	completions  acknowledged or failed, waiting for (or in) its Completion
//	             call, which runs on a completion worker
//
// cur, queue and sending are guarded by mu. Batches always enter at the back
// and leave from the front, so order holds. The outcome of the batch in
// sending is recorded under mu in the same step that refills sending from
// the queue, so a non-empty queue always has a batch being sent in front of
// it. While sending is set the partition belongs to a sink, which alone
// reads sending and retryAt until it reports the outcome.
//
// Budget (see admission): a batch takes one of the partition's
// MaxBufferedBatches+2 slots when opened, and each message takes its bytes
// from the writer-wide MaxBufferedBytes budget when accepted. Both are given
// back only by the batch's finish: after its Completion call returned, or,
// without a Completion, once it is acknowledged or failed. So the bounds
// count every place above, the completion backlog included, and a slow
// Completion slows WriteMessages down instead of growing memory. Moving a
// batch forward never needs budget, so the sink never waits for space.
//
// A WriteMessages call made by a Completion goroutine of this Writer never
// waits for space either (see addOverdraftLocked): the space it would wait
// for may be held by the very batch whose Completion is calling, or by
// batches that can only complete after it.
//
// Lock order: Writer.mu is released before any partition writer's mu is
// taken; pw.mu may be held while calling the non-blocking methods of a
// Budget (whose lock is a leaf), and while handing the partition to a sink
// (pw.mu, then the sink's mu, then the leaf locks of the metadata cache and
// the sink table; see writer_sink.go), and while queuing a batch for its
// Completion (pw.mu, then the completion queue's mu, a leaf; see
// queueCompletionLocked). pw.mu is never held while waiting for
// budget, for the network, or for Completion.
type partitionWriter struct {
	w   *Writer
	key topicPartition

	// completions, set when there is a Completion, queues the batches for
	// it; see writer_completion.go.
	completions *completionQueue
	// completing counts the batches sent whose Completion has not returned
	// yet (they still hold their budget).
	completing atomic.Int64

	mu      sync.Mutex
	adm     admission
	cur     *writeBatch
	queue   batchQueue
	sending *writeBatch
	closed  bool
	// lastBytes is the encoded size of the last batch closed: the room the
	// next one opens with (writer_batchroom.go).
	lastBytes int32
	// closedSeq numbers the batches in the order they were closed (1, 2,
	// ...); ackedSeq is the number of the last one acknowledged or failed,
	// completedSeq that of the last one whose Completion call returned
	// (ackedSeq again without a Completion). flushes are the Flush calls
	// waiting for ackedSeq to reach theirs, completeFlushes those waiting
	// for completedSeq.
	closedSeq, ackedSeq, completedSeq uint64
	flushes, completeFlushes          []flushWaiter

	// idem is the sequence state of an idempotent Writer (nil otherwise),
	// used only by the sink holding the partition; see writer_idempotent.go.
	idem *idemPartition

	// retryAt is when the batch in sending may be sent again after a
	// failed attempt; written before the partition is handed to a sink.
	retryAt time.Time

	// settling closes once the broker can no longer append the last
	// request that carried the partition's batch and went unanswered
	// (settleSlot): the partition sends nothing before, or a later batch,
	// or a copy of the same one, could land before it. Used only by the
	// sink holding the partition.
	settling <-chan struct{}

	// noAckLane is the lane its last batch was written on with
	// RequireNone, noAckSeq that request's number on it; used only by the
	// sink holding the partition (writer_acks_none_lanes.go).
	noAckLane *noAckLane
	noAckSeq  uint64
}

// flushWaiter is a Flush call waiting for batch number seq to be
// acknowledged or failed, or for its Completion call to return.
type flushWaiter struct {
	seq  uint64
	done chan struct{}
}

// newPartitionWriter returns the writer of a partition not written to yet.
// It starts nothing: an idle partition costs its memory only.
func newPartitionWriter(w *Writer, key topicPartition) *partitionWriter {
	pw := &partitionWriter{w: w, key: key}
	pw.adm = newAdmission(w.state().bytes, w.MaxBufferedBatches)
	if w.Idempotent {
		pw.idem = &idemPartition{p: &w.idem}
	}
	if w.Completion != nil {
		pw.completions = new(completionQueue)
	}
	return pw
}

// writeBatch is a batch of messages for one partition. Its messages are
// encoded into recs as they are accepted: the batch keeps no Message and no
// reference to the caller's keys and values. For a Completion, the fields
// a record does not carry as the program set them (Time, WriterData,
// Headers, and Partition, Offset, HighWaterMark left set) are kept in
// extras, only once a message of the batch has one (writer_messages.go).
type writeBatch struct {
	opened time.Time
	recs   protocol.EncodedRecords
	extras []messageExtras
	bytes  int64 // sum of the messages' sizes, as accounted in the budgets
	slot   bool  // holds one of the partition's slots
	// reserved is the bytes of room of recs taken from the Writer's
	// room-ahead allowance while the batch is open (writer_batchroom.go).
	reserved int64
	// ack is the broker's answer, kept for the Completion call.
	ack produceAck
	seq uint64
	// attempts counts the produce attempts made so far (sink only);
	// started is set at the first, held back (heldBackError) or not.
	attempts int
	started  bool
	held     bool // was held back at least once (logged then)
	// lingers says the batch is in the Writer's linger queue.
	lingers bool
	// lingering is set when the batch should leave as soon as the
	// partition's previous batch is done, but it is not: BatchTimeout
	// passed (with a buffer bound only), or a caller waits for space. The
	// batch stays open meanwhile; see expire and sendPartialLocked.
	lingering bool
	// finished is set by the batch's one finishLocked (under pw.mu).
	finished bool
	// mayBeWritten is set by the sending loop when an attempt failed
	// without a refusal from the broker (its outcome is unknown).
	mayBeWritten bool

	// err is set before done is closed, and read after.
	err  error
	done chan struct{}
}

func (b *writeBatch) fits(size, maxBytes int64) bool {
	return b.recs.Len() == 0 || b.bytes+size <= maxBytes
}

// count is the number of messages in b.
func (b *writeBatch) count() int { return b.recs.Len() }

// add accepts m into the partition: it takes the message's bytes from the
// writer-wide budget, and puts the message into the batch being filled or
// into a new batch, which needs a slot. It returns the batch that received
// m.
func (pw *partitionWriter) add(ctx context.Context, m *Message, size int64, mode addMode) (*writeBatch, error) {
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
	// sink needs the lock to make room. The writer-wide bytes are
	// reserved now, in that same order; a slot is only asked for by the
	// head of the line, and only when no open batch can take its message,
	// so that one freed slot lets a whole batch of waiters in, not one.
	wt := pw.adm.join(size)
	pw.mu.Unlock()
	if wt.bytes != nil && pw.w.state().returning.Load() == 0 {
		// No batch will give bytes back by itself: what is taken sits in
		// partial batches, which only their sending gives back.
		pw.w.sendPartials()
	}

	s := pw.w.state().stats
	start := time.Now()
	b, err := pw.addInLine(ctx, wt, m, size)
	s.bufferWaits.add(1)
	s.bufferWaitTime.observeSince(start)
	return b, err
}

// tryAddLocked is add without waiting: it accepts m if that needs no
// wait (or overdrafts, in addOverdraft mode) and returns its batch, or
// returns nil, having taken nothing, when m would have to wait.
func (pw *partitionWriter) tryAddLocked(m *Message, size int64, mode addMode) *writeBatch {
	if !pw.adm.bounded() {
		return pw.appendLocked(m, size, false)
	}
	if mode == addOverdraft {
		return pw.addOverdraftLocked(m, size)
	}
	if pw.cur != nil && !pw.cur.fits(size, pw.w.batchBytes()) {
		// Full for this message: send it on now rather than at its timeout,
		// whether or not the message then has to wait.
		pw.closeCurrentLocked()
	}
	slot, ok := pw.adm.tryAdmit(size, pw.cur == nil)
	if !ok {
		return nil
	}
	return pw.appendLocked(m, size, slot)
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
	if pw.cur != nil && !pw.cur.fits(size, pw.w.batchBytes()) {
		pw.closeCurrentLocked()
	}
	withSlot := pw.adm.slots != nil && pw.cur == nil
	pw.adm.force(size, withSlot)
	return pw.appendLocked(m, size, withSlot)
}

// addInLine waits for wt's bytes and turn, then adds m as the head of the
// line, waiting for a slot when it must open a batch.
func (pw *partitionWriter) addInLine(ctx context.Context, wt *admissionWaiter, m *Message, size int64) (*writeBatch, error) {
	maxBytes := pw.w.batchBytes()
	err := wt.wait(ctx)
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
		if pw.adm.slots == nil || pw.cur != nil {
			// An open batch takes m (only the head adds, so one opened
			// while we waited for a slot is ours to join).
			pw.adm.admitted(wt, false)
			return pw.appendLocked(m, size, false), nil
		}
		t := pw.adm.slotTicket(wt)
		if t.Granted() {
			pw.adm.admitted(wt, true) // the new batch holds the slot
			return pw.appendLocked(m, size, true), nil
		}
		pw.mu.Unlock()
		err = t.Wait(ctx)
		pw.mu.Lock()
		if errors.Is(err, writerbuf.ErrClosed) {
			err = io.ErrClosedPipe
		}
	}
	pw.adm.abandon(wt)
	return nil, err
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
	b.add(m, pw.completions != nil)
	b.bytes += size
	pw.w.state().stats.bufferedBytes.Add(size)
	if b.count() >= pw.w.batchSize() || b.bytes >= pw.w.batchBytes() {
		pw.closeCurrentLocked()
	} else if pw.w.partialsWanted() {
		pw.sendPartialLocked()
	}
	if pw.cur == b && !b.lingers {
		// Queued only for a batch that stays open after its first message:
		// one that is full at once (BatchSize 1, a synchronous caller
		// writing one message) never needs it. Opening and this first
		// append happen under one hold of pw.mu, so the timeout still
		// counts from the moment the batch opened.
		b.lingers = true
		pw.w.state().linger.add(pw, b, b.opened.Add(pw.w.batchTimeout()))
	}
	return b
}

// sendPartialLocked makes the batch being filled sendable now (see
// partialsWanted): it holds budget that only its sending gives back, and
// waiting for BatchTimeout would leave the broker idle while callers wait.
// When the partition is still sending its previous batch, this one stays
// open (lingering) and leaves as soon as that one is done, which is
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
	recBytes, reserved := pw.roomForNewBatch()
	b := &writeBatch{
		opened:   time.Now(),
		slot:     slot,
		reserved: reserved,
		done:     make(chan struct{}),
	}
	if recBytes > 0 {
		b.recs.Grow(recBytes)
	}
	// Its BatchTimeout is queued by appendLocked, if the batch stays
	// open. The flush at BatchTimeout only moves the batch to the queue,
	// which never blocks and needs no budget, so it can always happen.
	pw.w.state().stats.bufferedBatches.Add(1)
	pw.cur = b
}

// closeCurrentLocked moves the batch being filled to the back of the line.
func (pw *partitionWriter) closeCurrentLocked() {
	b := pw.cur
	pw.cur = nil
	pw.fitRoomLocked(b)
	pw.w.state().stats.batchQueueTime.observeSince(b.opened)
	pw.closedSeq++
	b.seq = pw.closedSeq
	pw.w.state().returning.Add(b.bytes)
	if pw.sending == nil {
		pw.startSendingLocked(b)
	} else {
		pw.queue.push(b)
	}
}

// startSendingLocked makes b the batch being sent and hands the partition
// to the sink of its leader.
func (pw *partitionWriter) startSendingLocked(b *writeBatch) {
	pw.sending = b
	pw.retryAt = time.Time{}
	pw.w.sinkFor(pw.key).push(pw)
}

// expire is the BatchTimeout of b. With a buffer bound, a batch that could
// not be sent right away stays open (lingering) instead: closed, it would
// only wait in the queue, and the partition's next messages would need a
// new batch, with a slot and bytes of its own. A caller that is slower than
// BatchTimeout (one waiting for space, or blocked on other partitions)
// would then fill each freed place with a batch of one message, and a slow
// broker would be served smaller and smaller batches. The lingering batch
// goes as soon as the partition's previous batch is done; it is sent no later
// than it would have been, only fuller. Without a bound, batches close at
// BatchTimeout as they always did.
func (pw *partitionWriter) expire(b *writeBatch) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if pw.cur != b {
		return
	}
	if pw.sending != nil && pw.adm.bounded() {
		b.lingering = true
		return
	}
	pw.closeCurrentLocked()
}

// flush closes the batch being filled and returns a channel closed once
// every batch closed so far is acknowledged or failed and, when
// untilCompleted, its Completion call has returned; or nil when that is so
// already. (A Flush called from Completion asks for acknowledgements only:
// it would otherwise wait for itself, or for another partition's
// Completion that waits for it.)
func (pw *partitionWriter) flush(untilCompleted bool) <-chan struct{} {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if pw.cur != nil {
		pw.closeCurrentLocked()
	}
	waiters, reached := &pw.flushes, pw.ackedSeq
	if untilCompleted {
		waiters, reached = &pw.completeFlushes, pw.completedSeq
	}
	if reached >= pw.closedSeq {
		return nil
	}
	done := make(chan struct{})
	*waiters = append(*waiters, flushWaiter{seq: pw.closedSeq, done: done})
	return done
}

// ackedLocked records that batch number seq is acknowledged or failed
// (batches are sent in order, so every earlier one is too), and releases
// the Flush calls that waited for it. Without a Completion, the batch is
// then complete too.
func (pw *partitionWriter) ackedLocked(seq uint64) {
	pw.ackedSeq = seq
	pw.flushes = releaseFlushes(pw.flushes, seq)
	if pw.completions == nil {
		pw.completedLocked(seq)
	}
}

// completedLocked records that the Completion call of batch number seq
// (and so of every earlier one) has returned, and releases the Flush calls
// that waited for it.
func (pw *partitionWriter) completedLocked(seq uint64) {
	pw.completedSeq = seq
	pw.completeFlushes = releaseFlushes(pw.completeFlushes, seq)
}

// releaseFlushes closes the waiters (in seq order) of the batches up to
// seq and returns the rest.
func releaseFlushes(flushes []flushWaiter, seq uint64) []flushWaiter {
	n := 0
	for _, f := range flushes {
		if f.seq > seq {
			break
		}
		close(f.done)
		n++
	}
	if n > 0 {
		k := copy(flushes, flushes[n:])
		clear(flushes[k:])
		flushes = flushes[:k]
	}
	return flushes
}

// close stops accepting messages, wakes the callers waiting for a slot,
// and sends what is being filled.
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
	pw.mu.Unlock()
	pw.adm.close()
}

// finishLocked ends the life of b, once its outcome is known and its
// Completion call (if any) has returned: it gives back b's slot and bytes,
// and wakes the synchronous callers waiting for b. Whoever finishes a batch
// (the sink without a Completion, a completion worker with one) calls
// this, in the same hold of pw.mu that takes the batch out of its place,
// so that a freed slot never lets a new batch in while the old one still
// shows in a place. A batch is finished exactly once: a second
// call would give its budget back twice, and panics.
//
// It reports whether partial batches should be sent now (partialsWanted);
// the caller then calls Writer.sendPartials once pw.mu is released, since
// that takes every partition's lock.
func (pw *partitionWriter) finishLocked(b *writeBatch) (sendPartials bool) {
	if b.finished {
		panic("kafka: writer batch finished twice")
	}
	b.finished = true
	w := pw.w
	st := w.state()
	// The gauges drop first, so that they never show less than is held.
	st.stats.bufferedBytes.Add(-b.bytes)
	st.stats.bufferedBatches.Add(-1)
	st.returning.Add(-b.bytes)
	pw.adm.giveBack(b.bytes, b.slot)
	// The batch may stay referenced; its messages need not. Without a
	// Completion nothing refers to its records any more (a produce request
	// is encoded before its RoundTrip returns), so their array is reused
	// by a later batch: allocating each batch's afresh cost zeroing it and
	// the scavenger returning the pages of the previous ones.
	if w.Completion == nil {
		b.recs.Release()
	} else {
		b.recs.Reset() // its messages' keys and values may still be kept
	}
	b.extras = nil
	close(b.done)
	return w.partialsWanted()
}
