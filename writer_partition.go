package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/segmentio/kafka-go/internal/writerbuf"
	"github.com/segmentio/kafka-go/protocol"
	produceAPI "github.com/segmentio/kafka-go/protocol/produce"
)

// partitionWriter owns the batches of one topic-partition and the goroutine
// that sends them, one at a time, which is what keeps a partition's messages
// in order without an idempotent producer. A batch moves through these
// places, all guarded by mu:
//
//	cur      being filled (at most one)
//	ready    complete, but the queue was full (at most one, and only when
//	         cur is nil: it stands in the place of the batch being filled)
//	queue    complete, waiting (at most MaxBufferedBatches when set)
//	sending  being sent (or retried) by the sending loop
//
// Batches always enter at the back (sending when empty, else queue, else
// ready) and leave from the front, so order holds. The sending loop refills
// sending from the queue under mu in the same step that frees the previous
// batch, so a non-empty queue always has a batch being sent in front of it.
//
// With MaxBufferedBatches = N, a batch takes one of N+2 slots when opened and
// gives it back when done, which yields the bound cur+ready+queue+sending
// <= N+2 with queue <= N, and moving a batch forward never needs a slot.
//
// Lock order: Writer.mu is released before any partition writer's mu is
// taken; pw.mu may be held while calling the non-blocking methods of a
// Budget (whose lock is a leaf). pw.mu is never held while waiting for
// budget or for the network.
type partitionWriter struct {
	w   *Writer
	key topicPartition

	// slots is nil without MaxBufferedBatches.
	slots *writerbuf.Budget
	// wake holds a token when the sending loop may have work.
	wake chan struct{}
	// completions, when set, runs Completion beside the sending loop; see
	// newPartitionWriter.
	completions *completionQueue

	mu      sync.Mutex
	cur     *writeBatch
	ready   *writeBatch
	queue   batchFIFO
	sending *writeBatch
	last    *writeBatch // most recently closed batch, for Flush
	closed  bool
	// pending is the line of callers waiting to add a message, in arrival
	// order; see slotWaiter.
	pending []*slotWaiter

	// idem is the sequence state of an idempotent Writer (nil otherwise),
	// used by the sending loop only; see writer_idempotent.go.
	idem *idemPartition
}

// newPartitionWriter starts the goroutines of a new partition writer. Called
// with w.mu held and w not closed, so the inflight.Add calls are safe.
func newPartitionWriter(w *Writer, key topicPartition) *partitionWriter {
	pw := &partitionWriter{w: w, key: key, wake: make(chan struct{}, 1)}
	if w.Idempotent {
		pw.idem = &idemPartition{p: &w.idem}
	}
	st := w.state()
	if n := w.MaxBufferedBatches; n > 0 {
		pw.slots = writerbuf.New(int64(n) + 2)
		pw.queue = newBoundedBatchQueue(n)
	} else {
		pw.queue = new(batchQueue)
	}
	// With a buffer limit, a Completion that writes again must not run on
	// the sending loop: if it had to wait for space, the space it waits for
	// would come from that very loop. Without a limit nothing ever waits,
	// and Completion runs inline as in earlier versions.
	if w.Completion != nil && (pw.slots != nil || st.bytes != nil) {
		pw.completions = newCompletionQueue()
		w.inflight.Add(1)
		go pw.complete()
	}
	w.inflight.Add(1)
	go pw.run()
	return pw
}

// writeBatch is a batch of messages for one partition.
type writeBatch struct {
	opened time.Time
	msgs   []Message
	bytes  int64 // sum of the messages' sizes, as accounted in the budgets
	slot   bool  // holds one of the partition's slots
	timer  *time.Timer
	// lingering is set when BatchTimeout passed while the partition was
	// busy sending (with a buffer bound only): the batch stays open, since
	// it could not leave any sooner; see expire.
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

// add accepts m into the partition: it takes the message's bytes from the
// writer-wide budget, and puts the message into the batch being filled or
// into a new batch, which needs a slot. Without block it returns
// errWouldBlock rather than wait. It returns the batch that received m.
func (pw *partitionWriter) add(ctx context.Context, m *Message, size int64, block bool) (*writeBatch, error) {
	bytes := pw.w.state().bytes
	maxBytes := pw.w.batchBytes()

	pw.mu.Lock()
	if pw.closed {
		pw.mu.Unlock()
		return nil, io.ErrClosedPipe
	}
	if pw.slots == nil && bytes == nil {
		b := pw.appendLocked(m, size, false)
		pw.mu.Unlock()
		return b, nil
	}
	if pw.cur != nil && !pw.cur.fits(size, maxBytes) {
		// Full for this message: send it on now rather than at its timeout,
		// whether or not the message then has to wait.
		pw.closeCurrentLocked()
	}
	// Nobody in line: go straight in if the space is there.
	if len(pw.pending) == 0 && (bytes == nil || bytes.TryAcquire(size)) {
		switch {
		case pw.slots == nil || (pw.cur != nil && pw.cur.fits(size, maxBytes)):
			b := pw.appendLocked(m, size, false)
			pw.mu.Unlock()
			return b, nil
		case pw.slots.TryAcquire(1):
			b := pw.appendLocked(m, size, true)
			pw.mu.Unlock()
			return b, nil
		}
		if bytes != nil {
			bytes.Release(size)
		}
	}
	if !block {
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

	s := pw.w.state().stats
	start := time.Now()
	b, err := pw.addInLine(ctx, sw, m, size)
	s.bufferWaits.add(1)
	s.bufferWaitTime.observeSince(start)
	return b, err
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
	}
	return b
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
	pw.last = b
	switch {
	case pw.sending == nil:
		pw.sending = b
		pw.signal()
	case pw.queue.push(b):
	case pw.ready == nil:
		pw.ready = b
	default:
		// cur, ready, a full queue and sending would be N+3 batches.
		panic("kafka: writer partition over its batch bound (slot accounting bug)")
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

// flush closes the batch being filled and returns the last closed batch.
func (pw *partitionWriter) flush() *writeBatch {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if pw.cur != nil {
		pw.closeCurrentLocked()
	}
	return pw.last
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

// complete runs the Completion calls, in batch order, when they must not
// run on the sending loop.
func (pw *partitionWriter) complete() {
	defer pw.w.inflight.Done()
	for {
		b := pw.completions.get()
		if b == nil {
			return
		}
		pw.w.Completion(b.msgs, b.err)
		b.finish()
	}
}

// completionQueue hands sent batches to the goroutine that runs Completion.
// It is unbounded, but only grows while a Completion call is slower than the
// sending loop.
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
	b.msgs = nil // the batch may stay referenced (Flush); its messages need not
	close(b.done)
}

func (pw *partitionWriter) send(b *writeBatch) {
	w := pw.w
	st := w.state()
	s := st.stats
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

	// Give the space back before anyone hears about the outcome, so that
	// whoever reacts to it by writing again finds room. Refilling the
	// sending place in the same step keeps "queue not empty implies a batch
	// is being sent" true at all times. The gauges drop first, so that they
	// never show more than the limits allow.
	s.bufferedBytes.Add(-b.bytes)
	s.bufferedBatches.Add(-1)
	pw.mu.Lock()
	if b.slot {
		pw.slots.Release(1)
	}
	pw.sending = pw.queue.pop()
	if r := pw.ready; r != nil {
		if pw.sending == nil {
			pw.sending, pw.ready = r, nil
		} else if pw.queue.push(r) {
			pw.ready = nil
		}
	}
	if pw.sending == nil && pw.cur != nil && pw.cur.lingering {
		pw.closeCurrentLocked() // straight to sending
	}
	pw.mu.Unlock()
	if st.bytes != nil {
		st.bytes.Release(b.bytes)
	}

	switch {
	case pw.completions != nil:
		pw.completions.put(b)
	case w.Completion != nil:
		w.Completion(b.msgs, err)
		b.finish()
	default:
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
}

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
