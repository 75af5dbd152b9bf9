package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/segmentio/kafka-go/internal/writerbuf"
)

// The Writer type provides the implementation of a producer of kafka messages
// that automatically distributes messages across partitions of a single topic
// using a configurable balancing policy.
//
// A Writer groups the messages of each partition into batches and sends them
// in the background, one batch at a time per partition, so that messages of a
// partition reach the broker in the order WriteMessages accepted them.
//
// Synchronous mode (the default): WriteMessages returns once its messages were
// written or failed. When some failed, the error is a WriteErrors indexed like
// the messages:
//
//	w := &kafka.Writer{
//		Addr:         kafka.TCP("localhost:9092"),
//		Topic:        "topic-A",
//		RequiredAcks: kafka.RequireAll,
//	}
//	switch err := w.WriteMessages(ctx, msgs...).(type) {
//	case nil:
//	case kafka.WriteErrors:
//		for i := range msgs {
//			if err[i] != nil {
//				// msgs[i] was not written
//			}
//		}
//	default:
//		// validation error, closed writer, ...
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
// Methods of Writer are safe to use concurrently from multiple goroutines,
// however the writer configuration should not be modified after first use.
type Writer struct {
	// Address of the kafka cluster that this writer is configured to send
	// messages to.
	//
	// This field is required, attempting to write messages to a writer with a
	// nil address will error.
	Addr net.Addr

	// Topic is the name of the topic that the writer will produce messages to.
	//
	// Setting this field or not is a mutually exclusive option. If you set Topic
	// here, you must not set Topic for any produced Message. Otherwise, if you do
	// not set Topic, every Message must have Topic specified.
	Topic string

	// The balancer used to distribute messages across partitions.
	//
	// The default is to use a round-robin distribution.
	Balancer Balancer

	// Limit on how many attempts will be made to deliver a message.
	//
	// The default is to try at most 10 times.
	MaxAttempts int

	// WriteBackoffMin optionally sets the smallest amount of time the writer waits before
	// it attempts to write a batch of messages
	//
	// Default: 100ms
	WriteBackoffMin time.Duration

	// WriteBackoffMax optionally sets the maximum amount of time the writer waits before
	// it attempts to write a batch of messages
	//
	// Default: 1s
	WriteBackoffMax time.Duration

	// Limit on how many messages will be buffered before being sent to a
	// partition.
	//
	// The default is to use a target batch size of 100 messages.
	BatchSize int

	// Limit the maximum size of a request in bytes before being sent to
	// a partition.
	//
	// The default is to use a kafka default value of 1048576.
	BatchBytes int64

	// Time limit on how often incomplete message batches will be flushed to
	// kafka.
	//
	// The default is to flush at least every second.
	BatchTimeout time.Duration

	// Timeout for read operations performed by the Writer.
	//
	// Defaults to 10 seconds.
	ReadTimeout time.Duration

	// Timeout for write operation performed by the Writer.
	//
	// Defaults to 10 seconds.
	WriteTimeout time.Duration

	// Number of acknowledges from partition replicas required before receiving
	// a response to a produce request, the following values are supported:
	//
	//  RequireNone (0)  fire-and-forget, do not wait for acknowledgements from the
	//  RequireOne  (1)  wait for the leader to acknowledge the writes
	//  RequireAll  (-1) wait for the full ISR to acknowledge the writes
	//
	// Defaults to RequireNone.
	RequiredAcks RequiredAcks

	// Setting this flag to true causes the WriteMessages method to never block.
	// It also means that errors are ignored since the caller will not receive
	// the returned value. Use this only if you don't care about guarantees of
	// whether the messages were written to kafka.
	//
	// With MaxBufferedBatches or MaxBufferedBytes set, an asynchronous
	// WriteMessages does block while the buffer is full.
	//
	// Defaults to false.
	Async bool

	// An optional function called when the writer succeeds or fails the
	// delivery of messages to a kafka partition. When writing the messages
	// fails, the `err` parameter will be non-nil.
	//
	// The messages that the Completion function is called with have their
	// topic, partition, offset, and time set based on the Produce responses
	// received from kafka. All messages passed to a call to the function have
	// been written to the same partition. The keys and values of messages are
	// referencing the original byte slices carried by messages in the calls to
	// WriteMessages.
	//
	// The function is called from goroutines started by the writer, one call
	// at a time per partition and in the order the batches were sent. Calls
	// to Close block on the Completion function calls. When the Writer is not
	// writing asynchronously, the WriteMessages call also blocks on the
	// Completion function, which is a useful guarantee if the byte slices for
	// the message keys and values are intended to be reused after the
	// WriteMessages call returned.
	//
	// With a buffer limit set, the space of a batch is given back before its
	// Completion call, and the call runs beside the partition's sending loop
	// rather than inside it, so that a Completion may itself call
	// WriteMessages (to retry, or to write to a dead-letter topic) without
	// deadlocking, even with MaxBufferedBatches set to 1.
	//
	// If a completion function panics, the program terminates because the
	// panic is not recovered by the writer and bubbles up to the top of the
	// goroutine's call stack.
	Completion func(messages []Message, err error)

	// Compression set the compression codec to be used to compress messages.
	Compression Compression

	// If not nil, specifies a logger used to report internal changes within the
	// writer.
	Logger Logger

	// ErrorLogger is the logger used to report errors. If nil, the writer falls
	// back to using Logger instead.
	ErrorLogger Logger

	// A transport used to send messages to kafka clusters.
	//
	// If nil, DefaultTransport is used.
	Transport RoundTripper

	// AllowAutoTopicCreation notifies writer to create topic if missing.
	AllowAutoTopicCreation bool

	// MaxBufferedBatches bounds, per partition, the complete batches waiting
	// to be sent. Zero (the default) keeps the historical behavior: an
	// unbounded queue per partition, so WriteMessages never waits for space
	// and memory grows as long as the program produces faster than the
	// brokers accept.
	//
	// With N > 0, a partition holds at most N+2 batches at any time: the one
	// being filled, N complete ones waiting, and the one being sent (while
	// the sending loop is between two batches, N+1 may be waiting). A
	// WriteMessages call that needs to open a batch on a partition that
	// already has N+2 waits until that partition completes a batch, its
	// context is done, or the Writer is closed; callers writing to other
	// partitions are not held up. The messages buffered by the Writer
	// therefore take at most
	//
	//	partitions written to × (MaxBufferedBatches + 2) × BatchBytes
	//
	// bytes (as measured for BatchBytes), plus, with a Completion function,
	// the batches whose Completion call has not returned yet.
	//
	// Waiting callers are served in arrival order. A call that gives up
	// (context done, Writer closed) returns an error wrapping the reason;
	// the messages it could not buffer were not written and never will be,
	// the others are delivered as usual; see NotAcceptedError.
	MaxBufferedBatches int

	// MaxBufferedBytes bounds the bytes of the messages (as measured for
	// BatchBytes) that the whole Writer holds at once, from the moment
	// WriteMessages accepts them until their batch is acknowledged or fails,
	// across all partitions. Zero (the default) means no bound. A single
	// message larger than the bound is rejected with MessageTooLargeError.
	// Waiting, context and Close behave as for MaxBufferedBatches; with both
	// set, both bounds hold.
	MaxBufferedBytes int64

	// mu guards closed and writers. It is never held while waiting for
	// buffer space or for the network.
	mu      sync.Mutex
	closed  bool
	writers map[topicPartition]*partitionWriter

	// inflight counts the WriteMessages calls in progress and the
	// goroutines of the partition writers; Close waits for it to drop to
	// zero. Add is only called with mu held and closed false, so it never
	// races with the Wait in Close.
	inflight sync.WaitGroup

	once sync.Once
	st   *writerState

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
}

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
// message was written, the write error when it failed, or Err when the
// outcome was still unknown when the call returned (the write may still
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
		w.st = st
	})
	return w.st
}

// enter registers a WriteMessages call, unless the writer is closed.
func (w *Writer) enter() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false
	}
	w.inflight.Add(1)
	return true
}

func (w *Writer) leave() { w.inflight.Done() }

// partitionWriter returns the writer of key, creating it on first use, or
// nil once the Writer is closed.
func (w *Writer) partitionWriter(key topicPartition) *partitionWriter {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	pw := w.writers[key]
	if pw == nil {
		if w.writers == nil {
			w.writers = make(map[topicPartition]*partitionWriter)
		}
		pw = newPartitionWriter(w, key)
		w.writers[key] = pw
	}
	return pw
}

// Close flushes pending writes, and waits for all writes to complete before
// returning. Calling Close also prevents new writes from being submitted to
// the writer, further calls to WriteMessages and the like will fail with
// io.ErrClosedPipe.
//
// Calls waiting for buffer space are woken up: the messages they had not got
// accepted fail with io.ErrClosedPipe (see NotAcceptedError). Everything
// already accepted is sent (or fails after its retries) before Close
// returns, and no goroutine of the Writer is left running.
func (w *Writer) Close() error {
	st := w.state()

	w.mu.Lock()
	w.closed = true
	writers := w.writers
	w.writers = nil
	w.mu.Unlock()

	// Budgets first, so that no waiter can slip in between the flush of a
	// partition and the close of its queue.
	if st.bytes != nil {
		st.bytes.Close()
	}
	for _, pw := range writers {
		pw.close()
	}
	w.inflight.Wait()

	if w.transport != nil {
		w.transport.CloseIdleConnections()
	}
	return nil
}

// Flush sends the batches being filled now, without waiting for BatchSize,
// BatchBytes or BatchTimeout, and returns once every message accepted by
// WriteMessages before the call was acknowledged or failed (outcomes are
// reported as usual, by WriteMessages in synchronous mode and by Completion).
// It returns ctx.Err() if ctx is done first (the batches are still sent),
// and io.ErrClosedPipe on a closed Writer, whose Close has flushed
// everything already.
func (w *Writer) Flush(ctx context.Context) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return io.ErrClosedPipe
	}
	writers := make([]*partitionWriter, 0, len(w.writers))
	for _, pw := range w.writers {
		writers = append(writers, pw)
	}
	w.mu.Unlock()

	// A partition completes its batches in order, so its last closed batch
	// being done means all of its earlier ones are.
	var last []*writeBatch
	for _, pw := range writers {
		if b := pw.flush(); b != nil {
			last = append(last, b)
		}
	}
	for _, b := range last {
		select {
		case <-b.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// WriteMessages writes a batch of messages to the kafka topic configured on this
// writer.
//
// Unless the writer was configured to write messages asynchronously, the method
// blocks until all messages have been written, or until the maximum number of
// attempts was reached.
//
// When sending synchronously and the writer's batch size is configured to be
// greater than 1, this method blocks until either a full batch can be assembled
// or the batch timeout is reached. The batch size and timeouts are evaluated
// per partition, so the choice of Balancer can also influence the flushing
// behavior. The best way to achieve good batching behavior is to share one
// Writer amongst multiple goroutines.
//
// When the method returns an error, it may be of type kafka.WriteErrors to allow
// the caller to determine the status of each message.
//
// With MaxBufferedBatches or MaxBufferedBytes set, the call (synchronous or
// not) waits while the buffer is full. It then accepts the messages of each
// partition in order as space frees up; messages for partitions that have
// space are accepted without waiting for the full ones. If ctx is done or the
// Writer is closed first, the call returns a *NotAcceptedError that says which
// messages were not accepted (and will never be written).
//
// Once accepted, in synchronous mode, a done ctx makes the call return
// ctx.Err() while the messages may still be written afterwards: do not modify
// the byte slices of the messages in that case, and expect duplicates if they
// are written again.
func (w *Writer) WriteMessages(ctx context.Context, msgs ...Message) error {
	if w.Addr == nil {
		return errors.New("kafka.(*Writer).WriteMessages: cannot create a kafka writer with a nil address")
	}
	if !w.enter() {
		return io.ErrClosedPipe
	}
	defer w.leave()

	if len(msgs) == 0 {
		return nil
	}
	st := w.state()

	limit := w.batchBytes()
	if st.bytes != nil && st.bytes.Limit() < limit {
		limit = st.bytes.Limit()
	}
	sizes := make([]int64, len(msgs))
	for i := range msgs {
		sizes[i] = int64(msgs[i].totalSize())
		if sizes[i] > limit {
			// As in earlier versions, the whole call fails: the program is
			// expected to drop the message and retry with Remaining.
			return messageTooLarge(msgs, i)
		}
	}

	groups, err := w.assign(ctx, msgs)
	if err != nil {
		return err
	}

	var batches map[*writeBatch][]int32
	if !w.Async {
		batches = make(map[*writeBatch][]int32)
	}
	acc := acceptor{w: w, st: st, msgs: msgs, sizes: sizes, batches: batches}

	// First pass: take what fits now in every partition, so that a full
	// partition does not hold up the others. Second pass: wait, partition
	// after partition, for the rest.
	var refusal error
	for _, g := range groups {
		if err := acc.acceptGroup(ctx, g, false); err != nil && err != errWouldBlock {
			refusal = err
			break
		}
	}
	if refusal == nil {
		for _, g := range groups {
			if g.next < len(g.indexes) {
				if err := acc.acceptGroup(ctx, g, true); err != nil {
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

// partitionGroup is the messages of one WriteMessages call that go to one
// partition, in call order; next is the first one not yet accepted.
type partitionGroup struct {
	key     topicPartition
	indexes []int32
	next    int
}

// assign picks the partition of every message, grouping them by partition
// in order of first appearance.
func (w *Writer) assign(ctx context.Context, msgs []Message) ([]*partitionGroup, error) {
	balancer := w.balancer()
	var groups []*partitionGroup
	byKey := make(map[topicPartition]*partitionGroup)
	counts := make(map[string]int)

	for i := range msgs {
		topic, err := w.chooseTopic(msgs[i])
		if err != nil {
			return nil, err
		}
		n, ok := counts[topic]
		if !ok {
			if n, err = w.partitions(ctx, topic); err != nil {
				return nil, err
			}
			counts[topic] = n
		}
		p := balancer.Balance(msgs[i], partitionList(n)...)
		key := topicPartition{topic: topic, partition: int32(p)}
		g := byKey[key]
		if g == nil {
			g = &partitionGroup{key: key}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.indexes = append(g.indexes, int32(i))
	}
	return groups, nil
}

// acceptor moves the messages of one WriteMessages call into batches.
type acceptor struct {
	w       *Writer
	st      *writerState
	msgs    []Message
	sizes   []int64
	batches map[*writeBatch][]int32 // nil in async mode
}

// acceptGroup accepts the messages of g from g.next on, in order. Without
// block, it stops with errWouldBlock at the first message that would have to
// wait. With block, it waits, and stops only with the reason the call must
// give up (ctx done, writer closed).
func (a *acceptor) acceptGroup(ctx context.Context, g *partitionGroup, block bool) error {
	pw := a.w.partitionWriter(g.key)
	if pw == nil {
		return io.ErrClosedPipe
	}
	for g.next < len(g.indexes) {
		i := g.indexes[g.next]
		b, err := a.acceptOne(ctx, pw, i, block)
		if err != nil {
			return err
		}
		if a.batches != nil {
			a.batches[b] = append(a.batches[b], i)
		}
		g.next++
	}
	return nil
}

// acceptOne hands msgs[i] to its partition writer.
func (a *acceptor) acceptOne(ctx context.Context, pw *partitionWriter, i int32, block bool) (*writeBatch, error) {
	return pw.add(ctx, &a.msgs[i], a.sizes[i], block)
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
	if w.Transport != nil {
		return w.Transport
	}
	return DefaultTransport
}

func (w *Writer) balancer() Balancer {
	if w.Balancer != nil {
		return w.Balancer
	}
	return &w.roundRobin
}

func (w *Writer) maxAttempts() int {
	if w.MaxAttempts > 0 {
		return w.MaxAttempts
	}
	return 10
}

func (w *Writer) writeBackoffMin() time.Duration {
	if w.WriteBackoffMin > 0 {
		return w.WriteBackoffMin
	}
	return 100 * time.Millisecond
}

func (w *Writer) writeBackoffMax() time.Duration {
	if w.WriteBackoffMax > 0 {
		return w.WriteBackoffMax
	}
	return time.Second
}

func (w *Writer) batchSize() int {
	if w.BatchSize > 0 {
		return w.BatchSize
	}
	return 100
}

func (w *Writer) batchBytes() int64 {
	if w.BatchBytes > 0 {
		return w.BatchBytes
	}
	return 1048576
}

func (w *Writer) batchTimeout() time.Duration {
	if w.BatchTimeout > 0 {
		return w.BatchTimeout
	}
	return time.Second
}

func (w *Writer) readTimeout() time.Duration {
	if w.ReadTimeout > 0 {
		return w.ReadTimeout
	}
	return 10 * time.Second
}

func (w *Writer) writeTimeout() time.Duration {
	if w.WriteTimeout > 0 {
		return w.WriteTimeout
	}
	return 10 * time.Second
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

// writerBackoff is the pause before retry number attempt (1 for the first
// retry): quadratic growth from min, capped at max.
func writerBackoff(attempt int, min, max time.Duration) time.Duration {
	d := time.Duration(attempt*attempt) * min
	if d > max || d <= 0 {
		d = max
	}
	return d
}
