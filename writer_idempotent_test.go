package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keyPartition sends each message to the partition named by the first byte
// of its key ('0', '1', ...).
var keyPartition = BalancerFunc(func(m Message, partitions ...int) int { return int(m.Key[0] - '0') })

func newIdemWriter(b *idemBroker) *Writer {
	return &Writer{
		Addr:            TCP("stub:9092"),
		Topic:           "t",
		Transport:       b,
		Balancer:        keyPartition,
		RequiredAcks:    RequireAll,
		Idempotent:      true,
		BatchTimeout:    time.Millisecond,
		WriteBackoffMin: time.Millisecond,
		WriteBackoffMax: 2 * time.Millisecond,
	}
}

// msgsFor makes n messages for partition p, valued prefix-0, prefix-1, ...
func msgsFor(p int, prefix string, n int) []Message {
	msgs := make([]Message, n)
	for i := range msgs {
		msgs[i] = Message{Key: []byte{byte('0' + p)}, Value: []byte(fmt.Sprintf("%s-%d", prefix, i))}
	}
	return msgs
}

func values(prefix string, n int) []string {
	v := make([]string, n)
	for i := range v {
		v[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return v
}

// firstError is the error of the first message of a failed synchronous
// WriteMessages call (WriteErrors does not unwrap).
func firstError(err error) error {
	var werr WriteErrors
	if errors.As(err, &werr) && len(werr) > 0 {
		return werr[0]
	}
	return err
}

type seqOf struct {
	epoch int16
	seq   int32
	n     int
}

func stamps(batches []sentBatch) []seqOf {
	out := make([]seqOf, len(batches))
	for i, b := range batches {
		out[i] = seqOf{b.producerEpoch, b.baseSequence, len(b.values)}
	}
	return out
}

var tp0, tp1 = topicPartition{"t", 0}, topicPartition{"t", 1}

// Each partition numbers its records from 0, consecutively across batches,
// under the one producer ID the Writer got with a single InitProducerId.
func TestIdempotentWriterSequencesPerPartition(t *testing.T) {
	b := newIdemBroker(map[string]int{"t": 2})
	w := newIdemWriter(b)
	defer w.Close()
	ctx := context.Background()

	require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "a", 3)...))
	require.NoError(t, w.WriteMessages(ctx, msgsFor(1, "b", 2)...))
	require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "c", 5)...))
	require.NoError(t, w.WriteMessages(ctx, msgsFor(1, "d", 1)...))
	require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "e", 1)...))

	calls, issued := b.inits()
	require.Equal(t, 1, calls, "one InitProducerId per Writer")
	require.Len(t, issued, 1)
	for _, tp := range []topicPartition{tp0, tp1} {
		for _, sb := range b.sentTo(tp) {
			require.Equal(t, issued[0].id, sb.producerID)
		}
	}
	assert.Equal(t, []seqOf{{0, 0, 3}, {0, 3, 5}, {0, 8, 1}}, stamps(b.sentTo(tp0)))
	assert.Equal(t, []seqOf{{0, 0, 2}, {0, 2, 1}}, stamps(b.sentTo(tp1)))
	assert.Equal(t, append(append(values("a", 3), values("c", 5)...), values("e", 1)...), b.logOf(tp0))
}

// Without the option nothing changes on the wire: no InitProducerId, and
// batches say "no producer".
func TestIdempotentWriterOffSendsNoProducer(t *testing.T) {
	b := newIdemBroker(map[string]int{"t": 1})
	w := newIdemWriter(b)
	w.Idempotent = false
	defer w.Close()
	require.NoError(t, w.WriteMessages(context.Background(), msgsFor(0, "a", 2)...))
	calls, _ := b.inits()
	require.Zero(t, calls)
	require.Equal(t, []seqOf{{-1, -1, 2}}, stamps(b.sentTo(tp0)))
	require.Equal(t, int64(-1), b.sentTo(tp0)[0].producerID)
}

// An answer lost after the append makes the Writer send the batch again with
// the same producer, epoch and sequence; the broker recognizes it, and the
// log holds each message once. The same fault without the option writes
// the batch twice, which is what the option is for.
func TestIdempotentWriterRetryKeepsSequence(t *testing.T) {
	for _, idempotent := range []bool{true, false} {
		t.Run(fmt.Sprint("idempotent=", idempotent), func(t *testing.T) {
			b := newIdemBroker(map[string]int{"t": 1})
			b.fault = func(call int, tp topicPartition, sb sentBatch) idemFault {
				// The first two attempts of the second batch lose their
				// answer after the append.
				return idemFault{loseReply: call == 2 || call == 3}
			}
			w := newIdemWriter(b)
			w.Idempotent = idempotent
			defer w.Close()
			ctx := context.Background()
			require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "a", 2)...))
			require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "b", 3)...))
			require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "c", 1)...))

			if !idempotent {
				require.Equal(t, append(append(append(values("a", 2), values("b", 3)...), append(values("b", 3), values("b", 3)...)...), values("c", 1)...), b.logOf(tp0))
				return
			}
			assert.Equal(t, []seqOf{{0, 0, 2}, {0, 2, 3}, {0, 2, 3}, {0, 2, 3}, {0, 5, 1}}, stamps(b.sentTo(tp0)))
			assert.Equal(t, append(append(values("a", 2), values("b", 3)...), values("c", 1)...), b.logOf(tp0))
		})
	}
}

// A broker that answers DUPLICATE_SEQUENCE_NUMBER (as brokers before 1.0
// did) has the batch already: the write succeeds, and Completion sees no
// error; the offsets are unknown (-1).
func TestIdempotentWriterDuplicateCountsAsSuccess(t *testing.T) {
	b := newIdemBroker(map[string]int{"t": 1})
	b.dupCode = true
	b.fault = func(call int, tp topicPartition, sb sentBatch) idemFault {
		return idemFault{loseReply: call == 1}
	}
	var got []Message
	var gotErr error
	w := newIdemWriter(b)
	w.Completion = func(msgs []Message, err error) { got, gotErr = append(got, msgs...), err }
	require.NoError(t, w.WriteMessages(context.Background(), msgsFor(0, "a", 2)...))
	require.NoError(t, w.Close())
	require.NoError(t, gotErr)
	require.Len(t, got, 2)
	for _, m := range got {
		assert.Equal(t, int64(-1), m.Offset)
	}
	sent := b.sentTo(tp0)
	require.Len(t, sent, 2)
	assert.Equal(t, int16(DuplicateSequenceNumber), sent[1].code)
	assert.Equal(t, values("a", 2), b.logOf(tp0))
}

// A batch that failed with an unknown outcome and was in fact not appended
// leaves a gap: the next batch is refused as out of order. That batch was
// never possibly appended, so the Writer bumps the epoch and sends it again
// from sequence 0, and it lands once. The other partition moves to the new
// epoch with its next batch.
func TestIdempotentWriterEpochBumpOnOutOfOrder(t *testing.T) {
	b := newIdemBroker(map[string]int{"t": 2})
	b.fault = func(call int, tp topicPartition, sb sentBatch) idemFault {
		// The only attempt of batch "b" never reaches the broker.
		return idemFault{lose: len(sb.values) > 0 && strings.HasPrefix(sb.values[0], "b-")}
	}
	w := newIdemWriter(b)
	w.MaxAttempts = 1
	defer w.Close()
	ctx := context.Background()
	require.NoError(t, w.WriteMessages(ctx, msgsFor(1, "x", 2)...))
	require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "a", 2)...))
	require.ErrorIs(t, firstError(w.WriteMessages(ctx, msgsFor(0, "b", 3)...)), io.ErrUnexpectedEOF)
	w.MaxAttempts = 2 // one attempt for the refusal, one for the resend
	require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "c", 4)...))
	require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "d", 1)...))
	require.NoError(t, w.WriteMessages(ctx, msgsFor(1, "y", 1)...))

	assert.Equal(t, []seqOf{{0, 0, 2}, {0, 2, 3}, {0, 5, 4}, {1, 0, 4}, {1, 4, 1}}, stamps(b.sentTo(tp0)))
	assert.Equal(t, int16(OutOfOrderSequenceNumber), b.sentTo(tp0)[2].code)
	assert.Equal(t, append(append(values("a", 2), values("c", 4)...), values("d", 1)...), b.logOf(tp0))
	assert.Equal(t, []seqOf{{0, 0, 2}, {1, 0, 1}}, stamps(b.sentTo(tp1)))
	calls, _ := b.inits()
	assert.Equal(t, 1, calls, "a local epoch bump needs no InitProducerId")
}

// UNKNOWN_PRODUCER_ID (a broker before 2.5 that lost the producer's state)
// is handled the same way: new epoch, sequence 0, batch sent again.
func TestIdempotentWriterEpochBumpOnUnknownProducer(t *testing.T) {
	b := newIdemBroker(map[string]int{"t": 1})
	b.fault = onCall(2, idemFault{code: int16(UnknownProducerId)})
	w := newIdemWriter(b)
	defer w.Close()
	ctx := context.Background()
	require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "a", 2)...))
	require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "b", 3)...))
	require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "c", 1)...))
	assert.Equal(t, []seqOf{{0, 0, 2}, {0, 2, 3}, {1, 0, 3}, {1, 3, 1}}, stamps(b.sentTo(tp0)))
	assert.Equal(t, append(append(values("a", 2), values("b", 3)...), values("c", 1)...), b.logOf(tp0))
}

// When an earlier attempt of the refused batch may have been appended,
// new numbers could write it twice: the batch fails with an
// *IdempotenceError, and the partition goes on under a new epoch.
func TestIdempotentWriterRefusedAfterUnknownOutcomeFails(t *testing.T) {
	b := newIdemBroker(map[string]int{"t": 1})
	b.fault = func(call int, tp topicPartition, sb sentBatch) idemFault {
		switch call {
		case 2:
			return idemFault{lose: true}
		case 3:
			return idemFault{code: int16(OutOfOrderSequenceNumber)}
		}
		return idemFault{}
	}
	w := newIdemWriter(b)
	defer w.Close()
	ctx := context.Background()
	require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "a", 2)...))
	err := w.WriteMessages(ctx, msgsFor(0, "b", 3)...)
	var werr WriteErrors
	require.ErrorAs(t, err, &werr)
	var ierr *IdempotenceError
	require.ErrorAs(t, werr[0], &ierr)
	require.ErrorIs(t, werr[0], OutOfOrderSequenceNumber)
	require.Contains(t, werr[0].Error(), "may or may not have been written")

	require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "c", 1)...))
	assert.Equal(t, []seqOf{{0, 0, 2}, {0, 2, 3}, {0, 2, 3}, {1, 0, 1}}, stamps(b.sentTo(tp0)))
	assert.Equal(t, append(values("a", 2), values("c", 1)...), b.logOf(tp0))
}

// A refused dial proves the request never left: an attempt that ended so
// does not count as possibly appended, and the refused batch is sent again
// under a new epoch rather than failed.
func TestIdempotentWriterRefusedDialIsNotAnUnknownOutcome(t *testing.T) {
	b := newIdemBroker(map[string]int{"t": 1})
	b.fault = func(call int, tp topicPartition, sb sentBatch) idemFault {
		switch call {
		case 2:
			return idemFault{lose: true} // batch b: unknown outcome, not appended
		case 3:
			return idemFault{refuse: true} // batch c, attempt 1
		}
		return idemFault{} // batch c, attempt 2: out of order (b left a gap)
	}
	w := newIdemWriter(b)
	w.MaxAttempts = 1
	defer w.Close()
	ctx := context.Background()
	require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "a", 2)...))
	require.Error(t, w.WriteMessages(ctx, msgsFor(0, "b", 3)...))
	w.MaxAttempts = 3
	require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "c", 1)...))
	assert.Equal(t, []seqOf{{0, 0, 2}, {0, 2, 3}, {0, 5, 1}, {1, 0, 1}}, stamps(b.sentTo(tp0)))
	assert.Equal(t, append(values("a", 2), values("c", 1)...), b.logOf(tp0))
}

// A fenced or unknown producer session is replaced by a new producer ID
// (InitProducerId again), and the batch goes again from sequence 0.
func TestIdempotentWriterNewProducerIDWhenFenced(t *testing.T) {
	for _, code := range []Error{InvalidProducerEpoch, ProducerFenced, InvalidProducerIDMapping} {
		t.Run(code.Title(), func(t *testing.T) {
			b := newIdemBroker(map[string]int{"t": 1})
			b.fault = onCall(2, idemFault{code: int16(code)})
			w := newIdemWriter(b)
			defer w.Close()
			ctx := context.Background()
			require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "a", 2)...))
			require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "b", 3)...))
			calls, issued := b.inits()
			require.Equal(t, 2, calls)
			require.Len(t, issued, 2)
			sent := b.sentTo(tp0)
			require.Len(t, sent, 3)
			assert.Equal(t, issued[1].id, sent[2].producerID)
			assert.Equal(t, int32(0), sent[2].baseSequence)
			assert.Equal(t, append(values("a", 2), values("b", 3)...), b.logOf(tp0))
		})
	}
}

// InitProducerId is retried while it fails with retriable errors, and
// concurrent first batches of several partitions share the calls.
func TestIdempotentWriterInitProducerIDRetried(t *testing.T) {
	b := newIdemBroker(map[string]int{"t": 2})
	b.initErrs = []error{io.ErrUnexpectedEOF}
	b.initCodes = []int16{int16(GroupLoadInProgress), int16(GroupCoordinatorNotAvailable)}
	w := newIdemWriter(b)
	defer w.Close()
	msgs := append(msgsFor(0, "a", 2), msgsFor(1, "b", 2)...)
	require.NoError(t, w.WriteMessages(context.Background(), msgs...))
	require.NoError(t, w.WriteMessages(context.Background(), msgs...))
	calls, issued := b.inits()
	require.Equal(t, 4, calls)
	require.Len(t, issued, 1)
	for _, tp := range []topicPartition{tp0, tp1} {
		for _, sb := range b.sentTo(tp) {
			require.Equal(t, issued[0].id, sb.producerID)
		}
	}
}

// A producer ID refused for good (no IDEMPOTENT_WRITE permission) fails the
// batch with that error, and nothing is sent without a producer ID.
func TestIdempotentWriterInitProducerIDRefused(t *testing.T) {
	b := newIdemBroker(map[string]int{"t": 1})
	b.initCodes = []int16{int16(ClusterAuthorizationFailed)}
	w := newIdemWriter(b)
	defer w.Close()
	err := w.WriteMessages(context.Background(), msgsFor(0, "a", 1)...)
	require.ErrorIs(t, firstError(err), ClusterAuthorizationFailed)
	require.Contains(t, err.Error(), "InitProducerId")
	require.Empty(t, b.sentTo(tp0))
	// The next batch asks again.
	require.NoError(t, w.WriteMessages(context.Background(), msgsFor(0, "b", 1)...))
	require.Equal(t, []seqOf{{0, 0, 1}}, stamps(b.sentTo(tp0)))
}

// A batch the broker rejected before appending gives its sequence numbers
// to the next batch: no gap, no epoch bump.
func TestIdempotentWriterRejectedBatchGivesBackItsSequence(t *testing.T) {
	b := newIdemBroker(map[string]int{"t": 1})
	b.fault = onCall(2, idemFault{code: int16(MessageSizeTooLarge)})
	w := newIdemWriter(b)
	defer w.Close()
	ctx := context.Background()
	require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "a", 2)...))
	require.ErrorIs(t, firstError(w.WriteMessages(ctx, msgsFor(0, "b", 3)...)), MessageSizeTooLarge)
	require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "c", 1)...))
	assert.Equal(t, []seqOf{{0, 0, 2}, {0, 2, 3}, {0, 2, 1}}, stamps(b.sentTo(tp0)))
	assert.Equal(t, append(values("a", 2), values("c", 1)...), b.logOf(tp0))
}

// An explicit RequireOne is refused by WriteMessages (zero means RequireAll), with a
// clear error, before anything is accepted or sent.
func TestIdempotentWriterRequiresAcksAll(t *testing.T) {
	for _, acks := range []RequiredAcks{RequireOne} {
		b := newIdemBroker(map[string]int{"t": 1})
		w := newIdemWriter(b)
		w.RequiredAcks = acks
		w.Async = true
		err := w.WriteMessages(context.Background(), msgsFor(0, "a", 1)...)
		require.Error(t, err)
		require.Contains(t, err.Error(), "set RequiredAcks to RequireAll")
		require.Error(t, w.WriteMessages(context.Background(), msgsFor(0, "a", 1)...), "every call")
		require.NoError(t, w.Close())
		calls, _ := b.inits()
		require.Zero(t, calls)
		require.Empty(t, b.sentTo(tp0))
	}
	// NewWriter reads RequiredAcks 0 as "all": the option works there.
	w := NewWriter(WriterConfig{Brokers: []string{"stub:9092"}, Topic: "t", Idempotent: true})
	require.True(t, w.Idempotent)
	require.NoError(t, w.checkIdempotent())
	w.Close()
}

// An epoch that cannot grow any more is not bumped: the Writer gets a new
// producer ID instead.
func TestIdempotentWriterEpochExhaustedGetsNewProducerID(t *testing.T) {
	b := newIdemBroker(map[string]int{"t": 1})
	b.initEpoch = math.MaxInt16
	b.fault = onCall(2, idemFault{code: int16(OutOfOrderSequenceNumber)})
	w := newIdemWriter(b)
	defer w.Close()
	ctx := context.Background()
	require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "a", 2)...))
	require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "b", 3)...))
	calls, issued := b.inits()
	require.Equal(t, 2, calls)
	sent := b.sentTo(tp0)
	require.Len(t, sent, 3)
	assert.Equal(t, issued[1].id, sent[2].producerID)
	assert.Equal(t, []seqOf{{math.MaxInt16, 0, 2}, {math.MaxInt16, 2, 3}, {math.MaxInt16, 0, 3}}, stamps(sent))
	assert.Equal(t, append(values("a", 2), values("b", 3)...), b.logOf(tp0))
}

func TestNextSequenceWraps(t *testing.T) {
	require.Equal(t, int32(5), nextSequence(2, 3))
	require.Equal(t, int32(0), nextSequence(math.MaxInt32, 1))
	require.Equal(t, int32(2), nextSequence(math.MaxInt32-1, 4))
}

// The option composes with the bounds, Async, Completion, Flush and Close:
// many goroutines write async to several partitions through a Writer with
// a one-batch queue and a small byte budget, while the broker loses
// answers after appending and refuses some requests with retriable
// errors. Every message is in the log once, in order per partition,
// Completion reports every one as written, and the Writer never has two
// requests in flight for one partition.
//
// The Writer sends the batches of several partitions in one request, and
// a lost request fails them all: the faults are therefore bounded per
// batch (faultFreeAfter), not only per partition call, so that no
// grouping of partitions into requests can use up a batch's MaxAttempts.
func TestIdempotentWriterComposesWithBoundsAndFaults(t *testing.T) {
	const parts, writers, perWriter = 3, 4, 150
	b := newIdemBroker(map[string]int{"t": parts})
	b.faultFreeAfter = 2
	b.fault = func(call int, tp topicPartition, sb sentBatch) idemFault {
		switch call % 7 {
		case 1:
			return idemFault{loseReply: true}
		case 3:
			return idemFault{code: int16(NotLeaderForPartition)}
		case 5:
			return idemFault{lose: true}
		}
		return idemFault{}
	}
	var mu sync.Mutex
	completed := map[string]int{}
	var failures []error
	w := newIdemWriter(b)
	w.Async = true
	w.BatchSize = 7
	w.MaxBufferedBatches = 1
	w.MaxBufferedBytes = 2048
	w.MaxAttempts = 20
	w.Completion = func(msgs []Message, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			failures = append(failures, err)
		}
		for _, m := range msgs {
			completed[string(m.Value)]++
		}
	}

	var wg sync.WaitGroup
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				// Each writer keeps to one partition per value of g%parts,
				// so that order per partition is order per writer.
				m := Message{Key: []byte{byte('0' + g%parts)}, Value: []byte(fmt.Sprintf("w%d-%04d", g, i))}
				if err := w.WriteMessages(context.Background(), m); err != nil {
					t.Errorf("write: %v", err)
					return
				}
				if i%50 == 49 {
					if err := w.Flush(context.Background()); err != nil {
						t.Errorf("flush: %v", err)
					}
				}
			}
		}(g)
	}
	wg.Wait()
	require.NoError(t, w.Close())

	require.Empty(t, failures)
	require.Len(t, completed, writers*perWriter)
	for v, n := range completed {
		require.Equal(t, 1, n, "completion count of %s", v)
	}
	seen := map[string]bool{}
	for p := 0; p < parts; p++ {
		last := map[string]string{}
		for _, v := range b.logOf(topicPartition{"t", int32(p)}) {
			require.False(t, seen[v], "duplicate %s in the log", v)
			seen[v] = true
			writer := v[:strings.IndexByte(v, '-')]
			require.Less(t, last[writer], v, "order of %s", writer)
			last[writer] = v
		}
	}
	require.Len(t, seen, writers*perWriter, "every message in the log")
	b.mu.Lock()
	require.Zero(t, b.overlaps, "one request in flight per partition")
	b.mu.Unlock()
	// A batch is sent again only until the broker has it: never more
	// than once after the faults stop.
	resent := 0
	for p := 0; p < parts; p++ {
		sends := map[seqOf]int{}
		for _, sb := range b.sentTo(topicPartition{"t", int32(p)}) {
			k := seqOf{sb.producerEpoch, sb.baseSequence, len(sb.values)}
			sends[k]++
			if sends[k] == 2 {
				resent++
			}
			require.LessOrEqual(t, sends[k], b.faultFreeAfter+1, "sends of partition %d batch %v", p, k)
		}
	}
	require.NotZero(t, resent, "the faults made the Writer retry")
}

// A Writer that gives up a batch (MaxAttempts) with an unknown outcome goes
// on with the next one: if the broker did append the failed batch, the
// next one simply follows it; it is never in the log twice.
func TestIdempotentWriterGivesUpThenContinues(t *testing.T) {
	b := newIdemBroker(map[string]int{"t": 1})
	b.fault = func(call int, tp topicPartition, sb sentBatch) idemFault {
		return idemFault{loseReply: call == 2 || call == 3}
	}
	w := newIdemWriter(b)
	w.MaxAttempts = 2
	defer w.Close()
	ctx := context.Background()
	require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "a", 1)...))
	err := w.WriteMessages(ctx, msgsFor(0, "b", 2)...)
	require.ErrorIs(t, firstError(err), io.ErrUnexpectedEOF)
	require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "c", 1)...))
	assert.Equal(t, []seqOf{{0, 0, 1}, {0, 1, 2}, {0, 1, 2}, {0, 3, 1}}, stamps(b.sentTo(tp0)))
	assert.Equal(t, append(append(values("a", 1), values("b", 2)...), values("c", 1)...), b.logOf(tp0))
}

// A seeded random mix of faults, with few attempts so that batches also
// fail with an unknown outcome and the broker then refuses the next
// sequences: whatever happens, no message is in the log twice, every
// message reported written is in it, each partition's log keeps the order
// of acceptance, and every accepted message is reported once.
func TestIdempotentWriterRandomFaultsNeverDuplicate(t *testing.T) {
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			const parts, perPart = 3, 300
			rng := rand.New(rand.NewSource(seed))
			b := newIdemBroker(map[string]int{"t": parts})
			b.fault = func(call int, tp topicPartition, sb sentBatch) idemFault {
				switch x := rng.Intn(20); {
				case x < 2:
					return idemFault{lose: true}
				case x < 4:
					return idemFault{loseReply: true}
				case x < 5:
					return idemFault{lateCode: int16(RequestTimedOut)}
				case x < 6:
					return idemFault{code: int16(NotLeaderForPartition)}
				case x < 7 && seed%2 == 0:
					return idemFault{code: int16(OutOfOrderSequenceNumber)}
				}
				return idemFault{}
			}
			var mu sync.Mutex
			reports := map[string]error{}
			w := newIdemWriter(b)
			w.Async = true
			w.BatchSize = 1 + rng.Intn(10)
			w.MaxAttempts = 3
			if seed%3 == 0 {
				w.MaxBufferedBatches, w.MaxBufferedBytes = 1, 512
			}
			w.Completion = func(msgs []Message, err error) {
				mu.Lock()
				defer mu.Unlock()
				for _, m := range msgs {
					if _, dup := reports[string(m.Value)]; dup {
						t.Errorf("%s reported twice", m.Value)
					}
					reports[string(m.Value)] = err
				}
			}
			var wg sync.WaitGroup
			for p := 0; p < parts; p++ {
				wg.Add(1)
				go func(p int) {
					defer wg.Done()
					for i := 0; i < perPart; i++ {
						m := Message{Key: []byte{byte('0' + p)}, Value: []byte(fmt.Sprintf("p%d-%04d", p, i))}
						if err := w.WriteMessages(context.Background(), m); err != nil {
							t.Errorf("write: %v", err)
							return
						}
					}
				}(p)
			}
			wg.Wait()
			require.NoError(t, w.Close())

			require.Len(t, reports, parts*perPart, "every accepted message reported")
			inLog := map[string]bool{}
			written, failed := 0, 0
			for p := 0; p < parts; p++ {
				prev := ""
				for _, v := range b.logOf(topicPartition{"t", int32(p)}) {
					require.False(t, inLog[v], "%s is in the log twice", v)
					inLog[v] = true
					require.Less(t, prev, v, "partition %d out of order", p)
					prev = v
				}
			}
			for v, err := range reports {
				if err == nil {
					written++
					require.True(t, inLog[v], "%s reported written but not in the log", v)
				} else {
					failed++
				}
			}
			t.Logf("written %d, failed %d (of which in the log: %d)", written, failed, len(inLog)-written)
		})
	}
}

// Compressed batches carry the producer fields too (they are in the batch
// header, outside the compressed records), and a retried compressed batch
// is recognized as a duplicate.
func TestIdempotentWriterCompressed(t *testing.T) {
	for _, codec := range []Compression{Gzip, Snappy, Lz4, Zstd} {
		t.Run(codec.String(), func(t *testing.T) {
			b := newIdemBroker(map[string]int{"t": 1})
			b.fault = func(call int, tp topicPartition, sb sentBatch) idemFault {
				return idemFault{loseReply: call == 2}
			}
			w := newIdemWriter(b)
			w.Compression = codec
			defer w.Close()
			ctx := context.Background()
			require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "a", 4)...))
			require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "b", 5)...))
			assert.Equal(t, []seqOf{{0, 0, 4}, {0, 4, 5}, {0, 4, 5}}, stamps(b.sentTo(tp0)))
			assert.Equal(t, append(values("a", 4), values("b", 5)...), b.logOf(tp0))
		})
	}
}

// When the attempts run out on a refusal that restarts the sequence
// numbers, the batch fails with the broker's refusal itself: it was never
// appended, and the error does not claim it will be sent again.
func TestIdempotentWriterLastAttemptRefused(t *testing.T) {
	for _, code := range []Error{OutOfOrderSequenceNumber, UnknownProducerId, InvalidProducerEpoch} {
		t.Run(code.Title(), func(t *testing.T) {
			b := newIdemBroker(map[string]int{"t": 1})
			b.fault = onCall(2, idemFault{code: int16(code)})
			w := newIdemWriter(b)
			w.MaxAttempts = 1
			defer w.Close()
			ctx := context.Background()
			require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "a", 2)...))
			err := w.WriteMessages(ctx, msgsFor(0, "b", 3)...)
			var werr WriteErrors
			require.ErrorAs(t, err, &werr)
			for i, e := range werr {
				require.Equal(t, code, e, "message %d: %v", i, e)
			}
			require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "c", 1)...))
			assert.Equal(t, append(values("a", 2), values("c", 1)...), b.logOf(tp0))
		})
	}
}
