// This file is long (over 800 lines) because it holds the Writer's type,
// its documented fields and every Writer method, so that the Writer's API
// reads in one place; the machinery (partitions, sinks, admission,
// completion, metadata) lives in writer_*.go files of one concern each.

package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go/internal/writerbuf"
)

// Writer is a Kafka producer: its Balancer picks a partition for each message
// (of one topic, or of each message's own Topic).
//
// A Writer groups the messages of each partition into batches and sends them
// in the background, one batch at a time per partition, so that messages of a
// partition reach the broker in the order WriteMessages accepted them.
//
// Synchronous mode (the default): WriteMessages returns once its messages were
// written or failed. When some failed, the error is a WriteErrors indexed like
// the messages:
//
//	w := &kafka.Writer{Addr: kafka.TCP("broker-1:9092", "broker-2:9092"), Topic: "orders"}
//	err := w.WriteMessages(ctx, msgs...)
//	var perMessage kafka.WriteErrors
//	if errors.As(err, &perMessage) {
//		for i, e := range perMessage {
//			if e != nil {
//				log.Printf("order %d not written: %v", i, e)
//			}
//		}
//	} else if err != nil {
//		// the call as a whole failed: invalid message, closed writer, ...
//	}
//
// Asynchronous mode (Async: true): WriteMessages returns as soon as the
// messages are buffered, and Completion reports the outcome of each batch.
//
// Memory: by default, as in earlier versions, the buffers grow without bound
// when the program produces faster than the brokers accept. Set
// MaxBufferedBatches and/or MaxBufferedBytes to make WriteMessages wait for
// space instead (see their documentation).
//
// Any number of goroutines may call a Writer's methods at once. Its fields are
// read when it is first used; change none of them after that.
type Writer struct {
	// Addr locates the cluster: one or more brokers, for instance
	// TCP("broker-1:9092", "broker-2:9092"). Required: WriteMessages fails
	// when it is nil.
	Addr net.Addr

	// Topic, when set, is where every message goes, and messages must then
	// leave their own Topic empty. When it is empty, each message names its
	// topic instead. Mixing the two, or setting neither, fails the write.
	Topic string

	// Balancer picks a partition for each message. Nil means round-robin.
	Balancer Balancer

	// MaxAttempts caps how many times a batch is sent before its error is
	// reported (10 when zero). With RequireNone, a batch held back while
	// a broker works through earlier requests is not sent, and that does
	// not count (docs/backpressure.md).
	MaxAttempts int

	// WriteBackoffMin is the pause before the first retry of a batch; later
	// retries wait longer, quadratically (100ms when zero).
	WriteBackoffMin time.Duration

	// WriteBackoffMax caps the pause between two attempts (1s when zero).
	WriteBackoffMax time.Duration

	// BatchSize is the number of messages at which a partition's batch is
	// sent without waiting any longer (100 when zero).
	BatchSize int

	// BatchBytes caps the size of a batch, as measured on its messages; a
	// single message above it is refused with MessageTooLargeError
	// (1048576, Kafka's own default, when zero).
	BatchBytes int64

	// BatchTimeout is how long an incomplete batch may wait for more
	// messages before it is sent anyway (1s when zero). With a buffer bound
	// (MaxBufferedBatches or MaxBufferedBytes), a batch whose timeout
	// passes while its partition is still sending the previous one keeps
	// filling until the partition is free: it could not leave sooner, and
	// closing it would only make the next messages need a new batch.
	BatchTimeout time.Duration

	// ReadTimeout bounds the metadata lookups of the writer (10s when zero).
	ReadTimeout time.Duration

	// WriteTimeout bounds each produce request (10s when zero). A request
	// not answered in time is given up, and its batches are sent again once
	// the broker answered it on its connection (for at most
	// max(10s, 2*WriteTimeout) more), so that a copy it still appends comes
	// before the retry's, not after later messages.
	WriteTimeout time.Duration

	// RequiredAcks is the acknowledgement the brokers must give before a
	// batch counts as written:
	//
	//	RequireNone (0)   none at all, the broker does not even answer
	//	RequireOne  (1)   the partition leader has it
	//	RequireAll  (-1)  every in-sync replica has it
	//
	// The zero value is RequireNone, except with Idempotent, where it
	// stands for RequireAll (see Idempotent).
	RequiredAcks RequiredAcks

	// Async makes WriteMessages return as soon as the messages are buffered,
	// without waiting for the brokers; outcomes then only reach Completion,
	// and errors are otherwise lost. Without a buffer limit such a call
	// never blocks. With MaxBufferedBatches or MaxBufferedBytes it does wait
	// while the buffer is full.
	Async bool

	// Completion, when set, is told the outcome of every batch: the
	// messages of one partition, with their topic, partition, offset and
	// time filled from the broker's answer (their keys and values are
	// copies of the caller's, the program's to keep; Headers is the
	// caller's own slice), and the error when the batch could not be
	// written.
	//
	// The writer calls it from goroutines of its own, beside the sending,
	// started as the calls to make require (not one per partition): one
	// call at a time per partition, in the order the partition's batches
	// were sent; calls for different partitions may run at the same time. Close waits for the calls, and so does a synchronous WriteMessages for the batches holding
	// its messages, which makes it safe to reuse the byte slices once
	// WriteMessages has returned; so does Flush, unless it is called from
	// Completion (see Flush).
	//
	// With a buffer limit, a batch keeps its place in the limits until its
	// Completion call returns: a slow Completion slows WriteMessages down
	// instead of letting memory grow. A Completion may itself call
	// WriteMessages on the same Writer (to retry, or to write to a
	// dead-letter topic) without deadlocking, even with MaxBufferedBatches 1:
	// a call made from Completion's own goroutine never waits for space; what
	// it cannot get within the limits it takes beyond them, and everyone else
	// waits until the Writer is back under them (see MaxBufferedBytes for
	// the exact bound). It may call Flush too. (A synchronous WriteMessages
	// to the same partition, from Completion, still cannot work: it would
	// wait for a Completion call queued behind the running one. Nor can a
	// Completion that waits for another goroutine's WriteMessages or Flush
	// on this Writer: only its own calls are recognized.)
	//
	// A panic in Completion is not recovered and ends the program.
	Completion func(messages []Message, err error)

	// Compression is the codec applied to each batch (none when zero).
	Compression Compression

	// Logger, when set, receives the writer's progress messages.
	Logger Logger

	// ErrorLogger, when set, receives the writer's error messages; Logger is
	// used for them when it is nil.
	ErrorLogger Logger

	// Transport sends the requests to the cluster. Nil means
	// DefaultTransport. A Transport of the program's own must be done with
	// a produce request when RoundTrip returns: the Writer reuses the
	// memory of its records for later batches.
	Transport RoundTripper

	// AllowAutoTopicCreation lets the brokers create a missing topic when
	// the writer first asks about it.
	AllowAutoTopicCreation bool

	// MaxBufferedBatches bounds, per partition, the batches the Writer
	// holds. Zero (the default) keeps the historical behavior: an unbounded
	// queue per partition, so WriteMessages never waits for space and memory
	// grows as long as the program produces faster than the brokers accept.
	// A negative value makes WriteMessages fail; any positive value, up to
	// math.MaxInt, costs nothing until batches exist.
	//
	// With N > 0, a partition holds at most N+2 batches at any time, from
	// the moment a batch is opened until it is acknowledged or failed and
	// its Completion call (if any) has returned: for instance one being
	// filled, N waiting and one being sent, when Completion keeps up. A
	// WriteMessages call that needs a new batch on a partition that has N+2
	// waits until that partition finishes a batch, its context is done, or
	// the Writer is closed; callers writing to other partitions are not
	// held up. The messages buffered by the Writer therefore take at most
	//
	//	partitions written to × (MaxBufferedBatches + 2) × BatchBytes
	//
	// bytes (as measured for BatchBytes). The only batches beyond N+2 are
	// those opened by WriteMessages calls made from Completion, which never
	// wait (see Completion); while they exist, the partition takes no other
	// new batch.
	//
	// Waiting callers are served in arrival order. A call that gives up
	// (context done, Writer closed) returns an error wrapping the reason;
	// the messages it could not buffer were not written and never will be,
	// the others are delivered as usual; see NotAcceptedError.
	//
	// Both bounds count a batch until the brokers acknowledge it. With
	// RequiredAcks at RequireNone (its zero value) the broker sends no
	// answer, so a batch is done, and its space free, as soon as its
	// request is written to the connection: the bounds still cap what the
	// Writer holds, but they do not slow the producer down to what the
	// brokers have stored, and a batch a broker loses is not reported. Set
	// RequireOne or RequireAll for the bounds to follow the brokers.
	MaxBufferedBatches int

	// MaxBufferedBytes bounds the bytes of the messages (as measured for
	// BatchBytes) that the whole Writer holds at once, across all
	// partitions, from the moment WriteMessages accepts them until their
	// batch is acknowledged or fails and its Completion call (if any) has
	// returned. Zero (the default) means no bound; a negative value makes
	// WriteMessages fail. A single message larger than the bound fails the
	// call with an error whose text names MaxBufferedBytes and which wraps a
	// MessageTooLargeError (find it with errors.As; a message over
	// BatchBytes gets the bare MessageTooLargeError, as before). Waiting,
	// context and Close behave as for MaxBufferedBatches; with both set,
	// both bounds hold.
	//
	// The bound is exact unless Completion writes: WriteMessages calls made
	// from Completion never wait, and may take bytes beyond it. A Completion
	// call that writes back at most the bytes of the batch it was given (a
	// retry, a dead letter of the same messages) keeps the Writer within
	//
	//	MaxBufferedBytes + the bytes of the batches whose Completion runs
	//
	// which is at most one batch (BatchBytes) per partition; one that writes
	// more leaves the excess beyond the bound until those messages are done,
	// and other callers wait meanwhile. docs/backpressure.md shows why.
	//
	// While a caller waits for these bytes and no batch on its way to the
	// broker or to Completion will give any back, the partial batches that
	// hold them are sent at once rather than at BatchTimeout.
	//
	// The bound counts message bytes, not the Writer's memory, but the two
	// are close: messages are held encoded as records (the program's keys,
	// values and headers are copied when accepted, so an asynchronous
	// caller may reuse its buffers once WriteMessages returns; a Completion
	// receives the program's own Headers slice back), plus some spare room
	// per batch, about 2 KiB per partition written to and a few MiB for the
	// Writer itself; docs/backpressure.md gives the whole formula.
	MaxBufferedBytes int64

	// Idempotent makes the brokers drop the copies that retries would
	// otherwise write. Off by default, so that nothing changes for existing
	// programs (and clusters that do not grant IDEMPOTENT_WRITE keep
	// working); the name follows the Java client's enable.idempotence and
	// the field style of Async.
	//
	// With it, the Writer gets a producer ID from the cluster
	// (InitProducerId, Kafka 0.11+, with the IDEMPOTENT_WRITE permission on
	// the cluster or WRITE on a topic) and numbers the messages of each
	// partition; a batch sent again after a lost answer, a closed
	// connection or a leader change keeps its numbers, and the broker
	// acknowledges it without appending it twice. Each partition's messages
	// are then in the log once each, in the order they were accepted, as
	// long as the Writer reports them written. A batch whose outcome stays
	// unknown (MaxAttempts used up, or an *IdempotenceError) may or may not
	// be in the log, as without this option, but is never in it twice.
	//
	// When the broker refuses a batch's numbers (OUT_OF_ORDER_SEQUENCE_NUMBER,
	// UNKNOWN_PRODUCER_ID), the Writer bumps the producer epoch and the
	// partition starts its numbers over, as the Java client does; the batch
	// is sent again unless an earlier attempt of it may have been appended,
	// in which case it fails with an *IdempotenceError.
	//
	// It needs every in-sync replica to acknowledge a batch: RequiredAcks
	// left at zero is taken as RequireAll (as the Java client's default
	// under idempotence), and RequireAll is accepted; RequireOne (or any
	// other value) makes WriteMessages fail at once, with an error saying
	// to set RequireAll. (RequireNone is the zero value, so it cannot be
	// asked for explicitly.) The option costs one InitProducerId request per Writer and no byte on the
	// wire (every batch header has room for the producer ID and sequence).
	Idempotent bool

	// mu guards closed and the creation of partition writers. It is never
	// held while waiting for buffer space or for the network.
	mu     sync.Mutex
	closed bool
	// writers maps each topicPartition written to its *partitionWriter.
	// Lookups take no lock (one per WriteMessages call and partition);
	// entries are only stored under mu with closed false, and removed by
	// Close.
	writers sync.Map

	// calls counts the WriteMessages calls in progress, plus callsClosed
	// once Close began; Close waits for the count to drop to zero before it
	// waits for inflight. It is an atomic, not mu, that a call takes on
	// entering, since every call takes it.
	calls atomic.Int64

	// inflight counts the sinks with work pending and the goroutines
	// running Completion; Close waits for it to drop to zero once no
	// WriteMessages call is left. Add is only called by someone already
	// counted here or in calls, or under the mutex of a partition with an
	// open batch, which Close closes before it waits (see
	// brokerSink.push), so it never races with the Wait in Close.
	inflight sync.WaitGroup

	once sync.Once
	st   *writerState

	// idem is the producer session when Idempotent is set.
	idem idemProducer

	// The balancer used when Balancer is nil.
	roundRobin RoundRobin

	// Set by NewWriter, which owns this transport and closes its idle
	// connections on Close.
	transport *Transport
	// Set by NewWriter to share the dial counters with its dial function.
	preStats *writerStats
}

// writerState is what a Writer computes on first use from its
// configuration.
type writerState struct {
	stats *writerStats
	// bytes is the writer-wide budget of MaxBufferedBytes, nil without one.
	bytes *writerbuf.Budget
	meta  writerMetadata
	// completers are the goroutines running Completion beside the sinks;
	// their WriteMessages calls never wait for space.
	completers completers
	// workers run the Completion calls (writer_completion.go).
	workers completionWorkers
	// linger keeps the BatchTimeout of the open batches (writer_linger.go).
	linger lingerQueue
	// sinks are the senders of the brokers, by leader ID (-1: unknown
	// leader), created on first use; sinksMu is a leaf lock.
	sinksMu sync.Mutex
	sinks   map[int32]*brokerSink
	// noAck are the connections of the requests with RequireNone, one
	// per broker (writer_acks_none_lanes.go).
	noAck noAckLanes
	// returning is the bytes of the batches closed and not yet given back
	// (queued, being sent, or waiting for their Completion): bytes that
	// come back without anyone's help. See partialsWanted.
	returning atomic.Int64
	// roomAhead is the bytes of room the open batches hold for records to
	// come, at most roomAheadLimit (writer_batchroom.go).
	roomAhead atomic.Int64
	// drained is closed once, when Close began and no WriteMessages call
	// is left (Writer.calls).
	drained     chan struct{}
	drainedOnce sync.Once
	// closeDone is closed when the first Close returns. A later Close
	// waits for it: finding the partitions already taken, it would
	// otherwise return before the first one handed their open batches to
	// the sinks, and its inflight.Wait would race that hand-over's Add.
	closeDone chan struct{}
}

func (st *writerState) callsDone() { st.drainedOnce.Do(func() { close(st.drained) }) }

func (st *writerState) callsDrained() <-chan struct{} { return st.drained }

type topicPartition struct {
	topic     string
	partition int32
}

// NotAcceptedError is returned by WriteMessages when the call gave up while
// waiting for buffer space (MaxBufferedBatches, MaxBufferedBytes) because
// its context was done or the Writer was closed.
//
// Errors is indexed like the messages passed to WriteMessages. The messages
// whose entry wraps ErrNotAccepted were not buffered: they were not written
// and never will be, so the program may write them again without creating
// duplicates. The other entries are those of messages that were accepted: in
// asynchronous mode they are nil (the messages are delivered as usual and
// Completion reports them); in synchronous mode they are nil when the
// message was written, the write error when it failed, or ctx.Err() when
// the outcome was still unknown when the call returned (the write may still
// land).
//
// errors.Is(err, context.Canceled), errors.Is(err, io.ErrClosedPipe), ...
// match Err, and errors.As(err, &writeErrors) extracts Errors.
type NotAcceptedError struct {
	Err    error
	Errors WriteErrors
}

// ErrNotAccepted marks, in NotAcceptedError.Errors, the messages that the
// Writer did not accept and therefore never writes.
var ErrNotAccepted = errors.New("kafka: message not accepted by the writer (not written)")

func (e *NotAcceptedError) Error() string {
	refused := 0
	for _, err := range e.Errors {
		if errors.Is(err, ErrNotAccepted) {
			refused++
		}
	}
	return fmt.Sprintf("kafka.(*Writer).WriteMessages: %d of %d messages not accepted: %v", refused, len(e.Errors), e.Err)
}

func (e *NotAcceptedError) Unwrap() []error { return []error{e.Err, e.Errors} }

// Is makes errors.Is(err, ErrNotAccepted) true for a NotAcceptedError: some
// of its messages were not accepted. (Errors is a WriteErrors, which
// errors.Is does not look into.) The reason, Err, is still matched through
// Unwrap: errors.Is(err, context.DeadlineExceeded) holds as well.
func (e *NotAcceptedError) Is(target error) bool { return target == ErrNotAccepted }

var errNilWriterAddr = errors.New("kafka.(*Writer).WriteMessages: cannot create a kafka writer with a nil address")

// errWouldBlock tells the first, non-blocking pass of WriteMessages that a
// message needs to wait for space.
var errWouldBlock = errors.New("kafka: writer buffer full")

func (w *Writer) state() *writerState {
	w.once.Do(func() {
		st := &writerState{stats: w.preStats}
		if st.stats == nil {
			st.stats = new(writerStats)
		}
		if w.MaxBufferedBytes > 0 {
			st.bytes = writerbuf.New(w.MaxBufferedBytes)
		}
		st.meta.init()
		st.drained = make(chan struct{})
		st.closeDone = make(chan struct{})
		st.workers.stallMin, st.workers.stallMax = completionStall, completionStallMax
		w.st = st
	})
	return w.st
}

// callsClosed is the bit of Writer.calls that Close sets.
const callsClosed = 1 << 62

// enter registers a WriteMessages call, unless the writer is closed.
func (w *Writer) enter() bool {
	if w.calls.Add(1)&callsClosed != 0 {
		w.leave()
		return false
	}
	return true
}

// leave ends a call registered by enter (or refused by it); the last call
// to leave a closing Writer lets Close go on.
func (w *Writer) leave() {
	if w.calls.Add(-1) == callsClosed {
		w.state().callsDone()
	}
}

// partitionWriter returns the writer of key, creating it on first use, or
// nil once the Writer is closed. A writer found may be closed already (Close
// runs concurrently): its add says so.
func (w *Writer) partitionWriter(key topicPartition) *partitionWriter {
	if pw, ok := w.writers.Load(key); ok {
		return pw.(*partitionWriter)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	if pw, ok := w.writers.Load(key); ok {
		return pw.(*partitionWriter) // created while we waited for mu
	}
	pw := newPartitionWriter(w, key)
	w.writers.Store(key, pw)
	return pw
}

// partitionWriters returns the partition writers created so far.
func (w *Writer) partitionWriters() []*partitionWriter {
	var writers []*partitionWriter
	w.writers.Range(func(_, pw any) bool {
		writers = append(writers, pw.(*partitionWriter))
		return true
	})
	return writers
}

// queuedBatches is the number of complete batches of key waiting to be
// sent, which the Sticky balancer weighs its choices by.
func (w *Writer) queuedBatches(key topicPartition) int {
	v, _ := w.writers.Load(key)
	pw, _ := v.(*partitionWriter)
	if pw == nil {
		return 0
	}
	pw.mu.Lock()
	defer pw.mu.Unlock()
	return pw.queue.len()
}

// Close shuts the writer down. From the moment it is called, WriteMessages
// and Flush fail with io.ErrClosedPipe, and the calls waiting for buffer
// space wake up: their messages not yet accepted fail with io.ErrClosedPipe
// (see NotAcceptedError). The batches being filled are sent without waiting
// for BatchTimeout, and Close returns once everything accepted has been
// written or has failed (Completion calls included) and every goroutine of
// the writer has exited. Any later or concurrent Close returns when the
// first one does.
func (w *Writer) Close() error {
	st := w.state()

	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		<-st.closeDone
		return nil
	}
	w.closed = true
	writers := w.partitionWriters()
	w.writers.Clear()
	w.mu.Unlock()
	pending := w.calls.Or(callsClosed) &^ callsClosed

	// Budgets first, so that no waiter can slip in between the flush of a
	// partition and the close of its queue.
	if st.bytes != nil {
		st.bytes.Close()
	}
	for _, pw := range writers {
		pw.close()
	}
	if pending != 0 {
		<-st.callsDrained()
	}
	w.cutLingers()
	w.inflight.Wait()
	st.linger.stop()
	st.noAck.endDrains()

	if w.transport != nil {
		w.transport.CloseIdleConnections()
	}
	close(st.closeDone)
	return nil
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

// sendPartials makes the partial batch of every partition sendable now
// (see partitionWriter.sendPartialLocked), when partialsWanted says that
// only they can give bytes back to a waiting caller.
func (w *Writer) sendPartials() {
	for _, pw := range w.partitionWriters() {
		pw.mu.Lock()
		pw.sendPartialLocked()
		pw.mu.Unlock()
	}
}

// Flush sends the batches being filled now, without waiting for BatchSize,
// BatchBytes or BatchTimeout, and returns once every message accepted by
// WriteMessages before the call was acknowledged or failed and, with a
// Completion, once the Completion calls reporting them have returned, as
// the Java client's flush, franz-go's Flush and librdkafka's flush do. A
// program that counts outcomes in Completion can read its counts once Flush
// returns.
//
// Called from Completion, Flush returns once every message accepted before
// the call was acknowledged or failed, without waiting for any Completion
// call: its own is running, and the calls queued behind it, or another
// partition's that calls Flush in turn, would wait for it.
//
// It returns ctx.Err() if ctx is done first (the batches are still sent),
// and io.ErrClosedPipe on a closed Writer, whose Close has flushed
// everything already.
func (w *Writer) Flush(ctx context.Context) error {
	// The list is taken in the same hold of mu as the look at closed: a
	// Close slipping in between would leave it empty, and Flush would
	// return before the batches it must wait for are acknowledged.
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return io.ErrClosedPipe
	}
	writers := w.partitionWriters()
	w.mu.Unlock()

	// A partition sends its batches, and runs their Completion calls, in
	// order, so its last closed batch being done means all of its earlier
	// ones are.
	untilCompleted := w.Completion == nil || !w.state().completers.current()
	var pending []<-chan struct{}
	for _, pw := range writers {
		if done := pw.flush(untilCompleted); done != nil {
			pending = append(pending, done)
		}
	}
	for _, done := range pending {
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Stats returns the writer's statistics since the previous call (or since
// the writer was created), for periodic reporting. It never waits for
// buffer space or for the network.
func (w *Writer) Stats() WriterStats {
	s := w.state().stats
	var out WriterStats

	// Configuration.
	out.Topic = w.Topic
	out.Async = w.Async
	out.RequiredAcks = int64(w.requiredAcks())
	out.MaxAttempts = int64(w.maxAttempts())
	out.MaxBatchSize = int64(w.batchSize())
	out.WriteBackoffMin, out.WriteBackoffMax = w.writeBackoffMin(), w.writeBackoffMax()
	out.BatchTimeout = w.batchTimeout()
	out.ReadTimeout, out.WriteTimeout = w.readTimeout(), w.writeTimeout()
	out.MaxBufferedBatches = int64(orDefault(w.MaxBufferedBatches, 0))
	out.MaxBufferedBytes = orDefault(w.MaxBufferedBytes, 0)

	// Counters and summaries, reset by this call.
	out.Dials, out.DialTime = s.dials.snapshot(), s.dialTime.snapshotDuration()
	out.Writes, out.Messages, out.Bytes = s.writes.snapshot(), s.messages.snapshot(), s.bytes.snapshot()
	out.Errors, out.Retries = s.errors.snapshot(), s.retries.snapshot()
	out.BatchTime, out.BatchQueueTime = s.batchTime.snapshotDuration(), s.batchQueueTime.snapshotDuration()
	out.WriteTime, out.WaitTime = s.writeTime.snapshotDuration(), s.waitTime.snapshotDuration()
	out.BatchSize, out.BatchBytes = s.batchSize.snapshot(), s.batchBytes.snapshot()
	out.BufferWaits, out.BufferWaitTime = s.bufferWaits.snapshot(), s.bufferWaitTime.snapshotDuration()

	// Gauges.
	out.BufferedBatches = s.bufferedBatches.Load()
	out.BufferedBytes = s.bufferedBytes.Load()
	return out
}

// WriteMessages hands msgs to the writer, which groups them by partition
// into batches and sends each partition's batches in order.
//
// Synchronous writers (the default) return once every message was written
// or failed for good (after MaxAttempts); failures come back as a
// WriteErrors indexed like msgs. Because batches fill per partition, a
// synchronous call may wait up to BatchTimeout for company: share one Writer
// between many goroutines to get full batches.
//
// Asynchronous writers return as soon as the messages are buffered; only
// validation errors (and, with a buffer limit, refusals) are returned.
//
// With MaxBufferedBatches or MaxBufferedBytes set, either kind of call waits
// while the buffer is full. Messages for partitions that have room are
// accepted at once; those for full ones wait, in order. If ctx is done or the
// Writer closed first, the call returns a *NotAcceptedError telling which
// messages were not accepted: those are never written. The same error, with
// every message refused, reports a ctx that ends while the partitions of a
// topic are being looked up (without a bound, that call returns ctx.Err()
// itself, as earlier versions did, and nothing was accepted).
//
// A synchronous call whose ctx ends after its messages were accepted returns
// ctx.Err() itself: the messages may still be written afterwards, so their
// byte slices must be left alone, and writing them again may duplicate them.
// Whichever way ctx ends a call, errors.Is(err, ctx.Err()) holds.
func (w *Writer) WriteMessages(ctx context.Context, msgs ...Message) error {
	switch {
	case w.Addr == nil:
		return errNilWriterAddr
	case !w.enter():
		return io.ErrClosedPipe
	}
	// In a function of few returns, the deferred call costs nothing (it
	// is open-coded); writeMessages has too many for that.
	defer w.leave()
	return w.writeMessages(ctx, msgs)
}

// writeMessages is WriteMessages once the call is registered.
func (w *Writer) writeMessages(ctx context.Context, msgs []Message) error {
	if err := w.checkIdempotent(); err != nil {
		return err
	}
	if len(msgs) == 0 {
		return nil // after the closed check, as before: a closed writer says so
	}
	if err := w.checkBounds(); err != nil {
		return err
	}
	st := w.state()

	for i := range msgs {
		// As in earlier versions, the whole call fails: the program is
		// expected to drop the message and retry with Remaining.
		size := msgs[i].totalSize()
		if size > w.batchBytes() || size > maxMessageSize {
			return messageTooLarge(msgs, i) // as upstream, bare
		}
		if st.bytes != nil && size > st.bytes.Limit() {
			return &bufferLimitError{index: i, size: size, limit: st.bytes.Limit(), err: messageTooLarge(msgs, i)}
		}
	}

	var groupBuf [4]partitionGroup
	groups, err := w.assign(ctx, msgs, groupBuf[:0])
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
			// The metadata lookup gave up with ctx: nothing was accepted.
			// A bounded Writer says so with its refusal type; the default
			// Writer returns ctx.Err() itself, as v0.4.51 does.
			if w.MaxBufferedBatches == 0 && w.MaxBufferedBytes == 0 {
				return ctxErr
			}
			return refuseAll(len(msgs), ctxErr)
		}
		return err
	}

	var batches map[*writeBatch][]int32
	if !w.Async {
		batches = make(map[*writeBatch][]int32)
	}

	// First pass: take what fits now in every partition, so that a full
	// partition does not hold up the others. Second pass: wait, partition
	// after partition, for the rest.
	var refusal error
	for i := range groups {
		if err := w.acceptGroup(ctx, msgs, batches, &groups[i], addNoWait); err != nil && err != errWouldBlock {
			refusal = err
			break
		}
	}
	if refusal == nil {
		mode := addWait
		for i := range groups {
			if g := &groups[i]; g.next < len(g.indexes) {
				if mode == addWait && w.Completion != nil && st.completers.current() {
					// Called from Completion: waiting could deadlock.
					mode = addOverdraft
				}
				if err := w.acceptGroup(ctx, msgs, batches, g, mode); err != nil {
					refusal = err
					break
				}
			}
		}
	}

	if refusal == nil && w.Async {
		return nil
	}

	werr := make(WriteErrors, len(msgs))
	refused := false
	if refusal != nil {
		notAccepted := fmt.Errorf("%w: %w", ErrNotAccepted, refusal)
		for _, g := range groups {
			for _, i := range g.indexes[g.next:] {
				werr[i] = notAccepted
				refused = true
			}
		}
	}

	failed := false
	if !w.Async {
		if w.Completion != nil && pendingBatches(batches) && st.completers.current() {
			// A Completion call waiting for batches whose own Completion
			// must run first: the completion workers must not count on
			// this one (completionWorkers.park).
			st.workers.park(w)
			defer st.workers.unpark()
		}
		var ctxErr error
		for b, indexes := range batches {
			var err error
			select {
			case <-b.done:
				err = b.err
			case <-ctx.Done():
				// Keep collecting the batches that are already done.
				select {
				case <-b.done:
					err = b.err
				default:
					err = ctx.Err()
					ctxErr = err
				}
			}
			if err != nil {
				failed = true
				for _, i := range indexes {
					werr[i] = err
				}
			}
		}
		if ctxErr != nil && !refused {
			// Everything was accepted: as in earlier versions, the bare
			// context error says the outcome is unknown.
			return ctxErr
		}
	}

	switch {
	case refused:
		return &NotAcceptedError{Err: refusal, Errors: werr}
	case failed:
		return werr
	default:
		return nil
	}
}

// pendingBatches reports whether one of batches is not done yet.
func pendingBatches(batches map[*writeBatch][]int32) bool {
	for b := range batches {
		select {
		case <-b.done:
		default:
			return true
		}
	}
	return false
}

func refuseAll(n int, cause error) error {
	werr := make(WriteErrors, n)
	notAccepted := fmt.Errorf("%w: %w", ErrNotAccepted, cause)
	for i := range werr {
		werr[i] = notAccepted
	}
	return &NotAcceptedError{Err: cause, Errors: werr}
}

// partitionGroup is the messages of one WriteMessages call that go to one
// partition, in call order; next is the first one not yet accepted.
type partitionGroup struct {
	key     topicPartition
	indexes []int32
	next    int
	// shared says indexes is a prefix of identityIndexes, which must then
	// be copied before anything is appended.
	shared bool
}

// identityIndexes serves the common case of a call whose first messages all
// go to one partition (a single message, say) without allocating: their
// indexes are 0, 1, 2, ... It is never written to.
var identityIndexes = func() []int32 {
	ids := make([]int32, 256)
	for i := range ids {
		ids[i] = int32(i)
	}
	return ids
}()

func (g *partitionGroup) add(i int32) {
	if g.shared {
		if int(i) == len(g.indexes) && int(i) < len(identityIndexes) {
			g.indexes = identityIndexes[: i+1 : i+1]
			return
		}
		g.indexes = append(make([]int32, 0, 2*len(g.indexes)+4), g.indexes...)
		g.shared = false
	}
	g.indexes = append(g.indexes, i)
}

// assign picks the partition of every message, grouping them by partition
// in order of first appearance; groups are appended to buf.
func (w *Writer) assign(ctx context.Context, msgs []Message, buf []partitionGroup) ([]partitionGroup, error) {
	balancer := w.balancer()
	groups := buf[:0]
	var byKey map[topicPartition]int // only for calls spanning many partitions
	lastTopic, lastCount := "", 0

	// Sticky's queue weighting is read through one closure per call, not
	// one per message; it reads lastTopic, the topic of the message at hand.
	sticky, _ := balancer.(*Sticky)
	var queued func(int) int
	var limits stickyLimits
	if sticky != nil {
		limits = stickyLimits{messages: w.batchSize(), bytes: w.batchBytes()}
		queued = func(p int) int {
			return w.queuedBatches(topicPartition{topic: lastTopic, partition: int32(p)})
		}
	}

	for i := range msgs {
		topic, err := w.chooseTopic(msgs[i])
		if err != nil {
			return nil, err
		}
		if topic != lastTopic || lastCount == 0 {
			var others func() []string
			if i+1 < len(msgs) {
				rest := msgs[i+1:]
				others = func() []string { return w.topicsOf(rest, topic) }
			}
			if lastCount, err = w.partitions(ctx, topic, others); err != nil {
				return nil, err
			}
			lastTopic = topic
		}
		var p int
		if sticky != nil {
			p = sticky.balance(topic, &msgs[i], partitionList(lastCount), limits, queued)
		} else {
			p = balancer.Balance(msgs[i], partitionList(lastCount)...)
		}
		key := topicPartition{topic: topic, partition: int32(p)}

		gi := -1
		if byKey != nil {
			if j, ok := byKey[key]; ok {
				gi = j
			}
		} else {
			for j := range groups {
				if groups[j].key == key {
					gi = j
					break
				}
			}
		}
		if gi < 0 {
			gi = len(groups)
			groups = append(groups, partitionGroup{key: key, shared: true, indexes: identityIndexes[:0:0]})
			if byKey == nil && len(groups) > 8 {
				byKey = make(map[topicPartition]int, 2*len(groups))
				for j := range groups {
					byKey[groups[j].key] = j
				}
			} else if byKey != nil {
				byKey[key] = gi
			}
		}
		groups[gi].add(int32(i))
	}
	return groups, nil
}

// maxLookupTogether bounds the topics looked up in one Metadata request by
// a call writing to many new topics.
const maxLookupTogether = 256

// topicsOf returns the distinct topics of msgs other than skip, up to
// maxLookupTogether, for a lookup of several new topics at once.
func (w *Writer) topicsOf(msgs []Message, skip string) []string {
	var names []string
	for i := range msgs {
		t, err := w.chooseTopic(msgs[i])
		if err != nil || t == skip || slices.Contains(names, t) {
			continue
		}
		if names = append(names, t); len(names) == maxLookupTogether {
			break
		}
	}
	return names
}

// acceptGroup accepts the messages of g from g.next on, in order, and,
// in sync mode, records in batches which batch took each one. With
// addNoWait, it stops with errWouldBlock at the first message that would
// have to wait. With addWait, it waits, and stops only with the reason the
// call must give up (ctx done, writer closed); with addOverdraft it never
// waits (see partitionWriter.addOverdraftLocked). msgs is a parameter of its own, not a
// field of some struct shared with the Writer, so that the array of a
// WriteMessages call does not escape to the heap.
func (w *Writer) acceptGroup(ctx context.Context, msgs []Message, batches map[*writeBatch][]int32, g *partitionGroup, mode addMode) error {
	pw := w.partitionWriter(g.key)
	if pw == nil {
		return io.ErrClosedPipe
	}
	if err := pw.addRun(msgs, g, batches, mode); err != nil {
		return err
	}
	for g.next < len(g.indexes) {
		i := g.indexes[g.next]
		m := &msgs[i]
		b, err := pw.add(ctx, m, m.totalSize(), mode)
		if err != nil {
			return err
		}
		if batches != nil {
			batches[b] = append(batches[b], i)
		}
		g.next++
	}
	return nil
}

// checkBounds rejects the buffer bounds that mean nothing (negative ones);
// zero means no bound, and any positive value, up to math.MaxInt, works
// and costs nothing until batches exist.
func (w *Writer) checkBounds() error {
	switch {
	case w.MaxBufferedBatches < 0:
		return fmt.Errorf("kafka.(*Writer): MaxBufferedBatches must be 0 (no bound) or positive, not %d", w.MaxBufferedBatches)
	case w.MaxBufferedBytes < 0:
		return fmt.Errorf("kafka.(*Writer): MaxBufferedBytes must be 0 (no bound) or positive, not %d", w.MaxBufferedBytes)
	}
	return nil
}

// checkIdempotent validates the configuration of an idempotent Writer.
func (w *Writer) checkIdempotent() error {
	if w.Idempotent && w.requiredAcks() != RequireAll {
		return errIdempotentAcks(w.RequiredAcks)
	}
	return nil
}

// requiredAcks is the acknowledgement the produce requests ask for: the
// field as set, except that an idempotent Writer reads its zero value as
// RequireAll, the only level idempotence works with.
func (w *Writer) requiredAcks() RequiredAcks {
	if w.Idempotent && w.RequiredAcks == RequireNone {
		return RequireAll
	}
	return w.RequiredAcks
}

func (w *Writer) chooseTopic(msg Message) (string, error) {
	// The writer's Topic and the messages' are exclusive of each other.
	switch {
	case w.Topic != "" && msg.Topic != "":
		return "", errors.New("kafka.(*Writer): Topic must not be specified for both Writer and Message")
	case w.Topic == "" && msg.Topic == "":
		return "", errors.New("kafka.(*Writer): Topic must be specified for Writer or Message")
	case msg.Topic != "":
		return msg.Topic, nil
	default:
		return w.Topic, nil
	}
}

func (w *Writer) transportOrDefault() RoundTripper {
	if t := w.Transport; t != nil {
		return t
	}
	return DefaultTransport
}

func (w *Writer) balancer() Balancer {
	if b := w.Balancer; b != nil {
		return b
	}
	return &w.roundRobin
}

// Defaults of the configuration fields, applied when a field is zero (or
// negative).
const (
	defaultWriterMaxAttempts  = 10
	defaultWriterBackoffMin   = 100 * time.Millisecond
	defaultWriterBackoffMax   = time.Second
	defaultWriterBatchSize    = 100
	defaultWriterBatchBytes   = 1 << 20
	defaultWriterBatchTimeout = time.Second
	defaultWriterReadTimeout  = 10 * time.Second
	defaultWriterWriteTimeout = 10 * time.Second
)

func (w *Writer) maxAttempts() int { return orDefault(w.MaxAttempts, defaultWriterMaxAttempts) }

func (w *Writer) writeBackoffMin() time.Duration {
	return orDefault(w.WriteBackoffMin, defaultWriterBackoffMin)
}

func (w *Writer) writeBackoffMax() time.Duration {
	return orDefault(w.WriteBackoffMax, defaultWriterBackoffMax)
}

func (w *Writer) batchSize() int { return orDefault(w.BatchSize, defaultWriterBatchSize) }

// maxMessageSize is the largest message any BatchBytes lets in: a record
// batch gives its length as an int32, which must also cover the batch
// header (61 B) and the record's own fields (at most 31 B). A larger
// message could never be sent; it is refused when written, before it is
// copied into a batch.
const maxMessageSize = 1<<31 - 1 - 61 - 31

func (w *Writer) batchBytes() int64 { return orDefault(w.BatchBytes, defaultWriterBatchBytes) }

func (w *Writer) batchTimeout() time.Duration {
	return orDefault(w.BatchTimeout, defaultWriterBatchTimeout)
}

func (w *Writer) readTimeout() time.Duration {
	return orDefault(w.ReadTimeout, defaultWriterReadTimeout)
}

func (w *Writer) writeTimeout() time.Duration {
	return orDefault(w.WriteTimeout, defaultWriterWriteTimeout)
}

func (w *Writer) logf(format string, args ...interface{}) {
	if w.Logger != nil {
		w.Logger.Printf(format, args...)
	}
}

func (w *Writer) errorf(format string, args ...interface{}) {
	switch {
	case w.ErrorLogger != nil:
		w.ErrorLogger.Printf(format, args...)
	case w.Logger != nil:
		w.Logger.Printf(format, args...)
	}
}
