package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of the buffer bounds with a slow or re-entrant Completion, of the
// partial batches sent while callers wait for space, and of the smaller
// defects around the bounds (docs/backpressure.md, questions 5 and 8).

// gate blocks Completion calls until opened.
type gate struct {
	ch      chan struct{}
	entered atomic.Int64 // Completion calls that reached the gate
	once    sync.Once
}

func newGate() *gate { return &gate{ch: make(chan struct{})} }

func (g *gate) wait() {
	g.entered.Add(1)
	<-g.ch
}

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

// paddedMessages returns messages whose values are "i" padded with spaces
// to size bytes, so that their order can be checked.
func paddedMessages(key string, from, to, size int) []Message {
	msgs := make([]Message, 0, to-from)
	for i := from; i < to; i++ {
		v := []byte(strconv.Itoa(i))
		for len(v) < size {
			v = append(v, ' ')
		}
		msgs = append(msgs, Message{Key: []byte(key), Value: v})
	}
	return msgs
}

func assertPaddedInOrder(t *testing.T, recs []stubRecord, from, to int) {
	t.Helper()
	require.Len(t, recs, to-from)
	for i, r := range recs {
		require.Equal(t, strconv.Itoa(from+i), strings.TrimRight(r.value, " "), "record %d: order broken or duplicate", i)
	}
}

// With Completion stuck, the batches whose Completion has not returned
// keep their budget: the producer stops at the bound, and the gauges show
// exactly what is held. (Before, space came back at acknowledgement and
// the completion backlog grew without end while the gauges read near 0.)
func TestWriterCompletionBacklogCountsInBounds(t *testing.T) {
	msgSize := int64((&Message{Key: []byte("p0"), Value: []byte("0")}).totalSize())
	for _, c := range []struct {
		name    string
		batches int
		bytes   int64
		want    int // messages accepted before the producer must wait
	}{
		{"MaxBufferedBytes", 0, 8 * msgSize, 8},
		{"MaxBufferedBatches", 1, 0, 3},
		{"both", 4, 3 * msgSize, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			stub := newStubBroker(map[string]int{"t": 1})
			tp := topicPartition{"t", 0}
			g := newGate()
			var completed atomic.Int64
			w := &Writer{
				Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 1, Async: true,
				BatchTimeout: time.Hour, RequiredAcks: RequireOne,
				MaxBufferedBatches: c.batches, MaxBufferedBytes: c.bytes,
				Completion: func(msgs []Message, err error) {
					g.wait()
					completed.Add(int64(len(msgs)))
				},
			}
			defer func() { g.open(); shutdown(w, stub) }()
			const total = 100
			p := startProducer(w, "p0", 0, total)

			// The producer must stop: it may not finish while no
			// Completion has returned.
			eventually(t, "producer waiting for space (or done: the bound does not hold)", func() bool {
				select {
				case err := <-p.done:
					p.done <- err
					return true
				default:
				}
				return slotWaiters(w, tp) == 1 || byteWaiters(w) == 1
			})
			select {
			case <-p.done:
				t.Fatalf("all %d messages accepted while no Completion returned: the completion backlog is outside the bound", total)
			default:
			}
			// Everything accepted was acknowledged (the broker is healthy)
			// and sits with Completion.
			eventually(t, "acknowledged", func() bool { return stub.totalRecords() >= c.want })
			require.Equal(t, c.want, stub.totalRecords(), "messages accepted while no Completion returned")
			require.Equal(t, int64(c.want), p.accepted.Load())
			require.Equal(t, int64(0), completed.Load())
			s := w.Stats()
			assert.Equal(t, int64(c.want)*msgSize, s.BufferedBytes, "BufferedBytes counts the completion backlog")
			assert.Equal(t, int64(c.want), s.BufferedBatches, "BufferedBatches counts the completion backlog")
			_, alive := partitionWriterOf(w, tp).bufferState()
			assert.Equal(t, c.want, alive)

			g.open()
			require.NoError(t, <-p.done)
			require.NoError(t, w.Flush(context.Background()))
			eventually(t, "every Completion returned", func() bool { return completed.Load() == total })
			assertInOrder(t, stub.records(tp), 0, total)
			s = w.Stats()
			assert.Zero(t, s.BufferedBytes)
			assert.Zero(t, s.BufferedBatches)
		})
	}
}

// A slow Completion slows the producer down instead of growing memory.
// The test counts on its own: a message is held from before its
// WriteMessages call until its Completion returns (counted on the way out
// of Completion, so at most one message of the partition early).
func TestWriterSlowCompletionBoundsMemory(t *testing.T) {
	msgSize := int64((&Message{Key: []byte("p0"), Value: []byte("0")}).totalSize())
	const limit = 8 // messages of budget
	stub := newStubBroker(map[string]int{"t": 1})
	var started, returned, maxHeld atomic.Int64
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 1, Async: true,
		RequiredAcks: RequireOne, MaxBufferedBytes: limit * msgSize,
		Completion: func(msgs []Message, err error) {
			time.Sleep(2 * time.Millisecond)
			returned.Add(int64(len(msgs)))
		},
	}
	const total = 300
	for i := 0; i < total; i++ {
		started.Add(1)
		require.NoError(t, w.WriteMessages(context.Background(), seqMessages("p0", i, i+1)...))
		if held := started.Load() - returned.Load(); held > maxHeld.Load() {
			maxHeld.Store(held)
		}
		if b := w.Stats().BufferedBytes; b > limit*msgSize {
			t.Fatalf("BufferedBytes %d over the bound %d", b, limit*msgSize)
		}
	}
	require.NoError(t, w.Close())
	assertInOrder(t, stub.records(topicPartition{"t", 0}), 0, total)
	// limit held by the Writer, one counted early by this test.
	if maxHeld.Load() > limit+1 {
		t.Fatalf("up to %d messages held between WriteMessages and the return of their Completion, bound %d", maxHeld.Load(), limit)
	}
	t.Logf("at most %d messages held (bound %d)", maxHeld.Load(), limit)
}

// A Completion that writes again to the same Writer (retry, dead letter)
// never waits for space, even with the tightest bounds: one batch slot
// (MaxBufferedBatches 1) and a byte budget of one batch. Its writes are
// admitted beyond the bounds, by at most what it writes back, and the
// Writer is back under its bounds once they complete.
func TestWriterReentrantCompletionTightBounds(t *testing.T) {
	msgSize := int64((&Message{Key: []byte("orig"), Value: []byte("100")}).totalSize())
	for _, c := range []struct {
		name       string
		partitions int
		copies     int // follow-ups written per original message
	}{
		{"retry once, one partition", 1, 1},
		{"retry once, to the other partition (cycle between Completions)", 2, 1},
		{"writes back twice what it got", 1, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			stub := newStubBroker(map[string]int{"t": c.partitions})
			const originals = 200
			var w *Writer
			var followups, failures atomic.Int64
			var overBound atomic.Int64
			limit := msgSize // one batch: BatchSize 1
			w = &Writer{
				Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 1, Async: true,
				MaxBufferedBatches: 1, MaxBufferedBytes: limit, RequiredAcks: RequireOne,
				Completion: func(msgs []Message, err error) {
					for _, m := range msgs {
						if string(m.Key) != "orig" {
							continue
						}
						for k := 0; k < c.copies; k++ {
							if err := w.WriteMessages(context.Background(), Message{Key: []byte("foll"), Value: m.Value}); err != nil {
								failures.Add(1)
								return
							}
							followups.Add(1)
						}
						// Written back no more than it got: held bytes stay
						// within the bound plus one batch per partition
						// whose Completion runs.
						if c.copies == 1 {
							if b := w.Stats().BufferedBytes; b > limit+int64(c.partitions)*msgSize {
								overBound.Store(b)
							}
						}
					}
				},
			}
			p := startProducer(w, "orig", 100, 100+originals)
			done := make(chan struct{})
			go func() {
				defer close(done)
				if err := <-p.done; err != nil {
					t.Error(err)
				}
				for followups.Load()+failures.Load() < int64(c.copies*originals) {
					time.Sleep(time.Millisecond)
				}
			}()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				t.Fatalf("deadlock: %d of %d follow-ups written", followups.Load(), c.copies*originals)
			}
			require.NoError(t, w.Flush(context.Background()))
			require.NoError(t, w.Close())
			require.Zero(t, failures.Load())
			require.Zero(t, overBound.Load(), "BufferedBytes over the bound plus one batch per partition")
			require.Equal(t, (1+c.copies)*originals, stub.totalRecords())
			s := w.Stats()
			assert.Zero(t, s.BufferedBytes)
			assert.Zero(t, s.BufferedBatches)
			// The budgets are all given back.
			if st := w.state(); st.bytes.Used() != 0 {
				t.Fatalf("%d bytes still taken", st.bytes.Used())
			}
		})
	}
}

// Only the Completion's own goroutine is let past the bound: a producer on
// another goroutine still waits, even while a Completion writes.
func TestWriterOverdraftOnlyForCompletion(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 1})
	tp := topicPartition{"t", 0}
	g := newGate()
	var w *Writer
	var reentrantErr atomic.Value
	w = &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 1, Async: true,
		BatchTimeout: time.Hour, MaxBufferedBatches: 1, RequiredAcks: RequireOne,
		Completion: func(msgs []Message, err error) {
			if string(msgs[0].Key) == "orig" {
				if err := w.WriteMessages(context.Background(), Message{Key: []byte("foll"), Value: msgs[0].Value}); err != nil {
					reentrantErr.Store(err)
				}
			}
			g.wait()
		},
	}
	defer func() { g.open(); shutdown(w, stub) }()
	require.NoError(t, w.WriteMessages(context.Background(), seqMessages("orig", 0, 3)...))
	// Three batches fill the three slots; the first Completion writes a
	// fourth (past the bound) and blocks at the gate.
	eventually(t, "Completion at the gate", func() bool { return g.entered.Load() == 1 })
	_, alive := partitionWriterOf(w, tp).bufferState()
	require.Equal(t, 4, alive)
	// A producer is not let in.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := w.WriteMessages(ctx, seqMessages("prod", 0, 1)...)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, err, ErrNotAccepted)
	g.open()
	require.NoError(t, w.Flush(context.Background()))
	if v := reentrantErr.Load(); v != nil {
		t.Fatal(v)
	}
}

// While a caller waits for bytes, the partial batches holding them are sent
// at once instead of at BatchTimeout: 80 messages of 1 KiB through a
// 16 KiB budget over 8 partitions go through in rounds of one broker round
// trip. BatchTimeout is an hour: before, each round waited for it, and the
// deadline below fails the test.
func TestWriterWaitingCallerSendsPartialBatches(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 8})
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, Async: true,
		BatchTimeout: time.Hour, MaxBufferedBytes: 16 << 10, RequiredAcks: RequireOne,
	}
	defer shutdown(w, stub)
	msgs := paddedMessages("k", 0, 80, 1000)
	size := int64(msgs[0].totalSize())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range msgs {
		require.NoError(t, w.WriteMessages(ctx, msgs[i]), "message %d", i)
	}
	// All but what fits in the budget went out without Flush or timeout.
	sent := stub.totalRecords()
	require.GreaterOrEqual(t, int64(sent), int64(len(msgs))-(16<<10)/size)
	require.NoError(t, w.Flush(ctx))
	total := 0
	for p := 0; p < 8; p++ {
		recs := stub.records(topicPartition{"t", int32(p)})
		total += len(recs)
		for i := 1; i < len(recs); i++ {
			a, _ := strconv.Atoi(strings.TrimRight(recs[i-1].value, " "))
			b, _ := strconv.Atoi(strings.TrimRight(recs[i].value, " "))
			require.Less(t, a, b, "partition %d out of order", p)
		}
	}
	require.Equal(t, len(msgs), total)
	s := w.Stats()
	t.Logf("%d produce requests for %d messages, %d waits for space", s.Writes, len(msgs), s.BufferWaits)
}

// The same with the default BatchTimeout (1 s). Before, the 80 calls took
// about 4 s, one BatchTimeout per round; the time is logged, not asserted
// (the machine may be loaded), and the round count is bounded by a budget
// that must run out for the test to mean anything.
func TestWriterWaitingCallerDefaultBatchTimeout(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 8})
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, Async: true,
		MaxBufferedBytes: 16 << 10, RequiredAcks: RequireOne,
	}
	defer shutdown(w, stub)
	start := time.Now()
	for _, m := range paddedMessages("k", 0, 80, 1000) {
		require.NoError(t, w.WriteMessages(context.Background(), m))
	}
	elapsed := time.Since(start)
	s := w.Stats()
	require.Positive(t, s.BufferWaits, "the budget never ran out: the test tests nothing")
	require.NoError(t, w.Flush(context.Background()))
	require.Equal(t, 80, stub.totalRecords())
	t.Logf("80 calls in %v, longest batch wait %v, %d produce requests", elapsed, s.BatchTime.Max, s.Writes)
}

// Flush called from Completion returns: it waits for acknowledgement, not
// for Completion calls (one of which is its caller).
func TestWriterFlushFromCompletion(t *testing.T) {
	for _, bounded := range []bool{false, true} {
		t.Run(fmt.Sprintf("bounded=%v", bounded), func(t *testing.T) {
			stub := newStubBroker(map[string]int{"t": 1})
			var w *Writer
			flushed := make(chan error, 1)
			w = &Writer{
				Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 100, Async: true,
				BatchTimeout: time.Hour, RequiredAcks: RequireOne,
				Completion: func(msgs []Message, err error) {
					if string(msgs[0].Key) != "first" {
						return
					}
					// A follow-up in a new batch, then Flush: it must send
					// that batch and return once it is acknowledged.
					if err := w.WriteMessages(context.Background(), seqMessages("second", 1, 2)...); err != nil {
						flushed <- err
						return
					}
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					err = w.Flush(ctx)
					if err == nil && len(stub.records(topicPartition{"t", 0})) != 2 {
						err = errors.New("Flush returned before the follow-up was acknowledged")
					}
					flushed <- err
				},
			}
			if bounded {
				w.MaxBufferedBatches, w.MaxBufferedBytes = 1, 1<<20
			}
			defer shutdown(w, stub)
			require.NoError(t, w.WriteMessages(context.Background(), seqMessages("first", 0, 1)...))
			require.NoError(t, w.Flush(context.Background()))
			require.NoError(t, <-flushed)
		})
	}
}

// MaxBufferedBatches may be as large as an int goes: no overflow, no
// panic, and nothing allocated for it until batches exist. A negative value
// is an error, not a panic.
func TestWriterMaxBufferedBatchesLargeValues(t *testing.T) {
	for _, n := range []int{math.MaxInt, math.MaxInt - 1, 1 << 24} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			stub := newStubBroker(map[string]int{"t": 1})
			w := &Writer{
				Addr: TCP("stub"), Topic: "t", Transport: stub, Async: true,
				MaxBufferedBatches: n, RequiredAcks: RequireOne,
			}
			defer shutdown(w, stub)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			require.NoError(t, w.WriteMessages(context.Background(), seqMessages("p0", 0, 10)...))
			runtime.ReadMemStats(&after)
			// 1<<24 slots as a channel were 128 MiB.
			require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated by the first write")
			require.NoError(t, w.Flush(context.Background()))
			assertInOrder(t, stub.records(topicPartition{"t", 0}), 0, 10)
			assert.Equal(t, int64(n), w.Stats().MaxBufferedBatches)
		})
	}
	for _, w := range []*Writer{{MaxBufferedBatches: -1}, {MaxBufferedBytes: -5}, {MaxBufferedBatches: math.MinInt}} {
		stub := newStubBroker(map[string]int{"t": 1})
		w.Addr, w.Topic, w.Transport = TCP("stub"), "t", stub
		err := w.WriteMessages(context.Background(), seqMessages("p0", 0, 1)...)
		require.Error(t, err)
		require.Contains(t, err.Error(), "must be 0 (no bound) or positive")
		require.Zero(t, stub.totalRecords())
		w.Close()
	}
}

// hugeMessage returns a message whose size, as the Writer accounts it, is
// exactly want bytes (want > 2 GiB), made of headers that share one 1 MiB
// slice: it costs 1 MiB whatever its size. The size is computed here, by
// the formula of messageFixedSize, not by the code under test.
func hugeMessage(t *testing.T, want int64) Message {
	shared := make([]byte, 1<<20)
	varint := func(n int64) int64 { return int64(zigzagVarintSize(n)) }
	header := func(n int64) int64 { return varint(0) + varint(n) + n } // empty key
	perHeader := header(1 << 20)
	k := (want - 64) / perHeader
	m := Message{Headers: make([]Header, k+1)}
	for i := int64(0); i < k; i++ {
		m.Headers[i].Value = shared
	}
	base := int64(messageFixedSize) + varint(k+1) + k*perHeader
	for r := (want - base) - 4; r <= want-base; r++ {
		if r >= 0 && r <= 1<<20 && base+header(r) == want {
			m.Headers[k].Value = shared[:r]
			return m
		}
	}
	t.Fatalf("cannot build a message of %d bytes", want)
	return m
}

// A message larger than 2 GiB (headers sharing one slice) keeps its real
// size: it is too large for the default limits, and with limits above it
// the gauges count all of it. Before, the int32 size wrapped to 100 bytes.
func TestWriterMessageOver2GiB(t *testing.T) {
	const size = 1<<32 + 100 // wraps to 100 as an int32
	m := hugeMessage(t, size)
	require.Equal(t, int64(size), int64(m.totalSize()))

	stub := newStubBroker(map[string]int{"t": 1})
	w := &Writer{Addr: TCP("stub"), Topic: "t", Transport: stub, RequiredAcks: RequireOne, MaxBufferedBytes: 1 << 20}
	defer shutdown(w, stub)
	err := w.WriteMessages(context.Background(), Message{Value: []byte("ok")}, m)
	var tooLarge MessageTooLargeError
	require.ErrorAs(t, err, &tooLarge)
	require.Zero(t, stub.totalRecords())

	stub2 := newStubBroker(map[string]int{"t": 1})
	stub2.block()
	w2 := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub2, Async: true, RequiredAcks: RequireOne,
		BatchBytes: 8 << 30, MaxBufferedBytes: 8 << 30, BatchTimeout: time.Hour,
	}
	defer shutdown(w2, stub2)
	require.NoError(t, w2.WriteMessages(context.Background(), m))
	require.Equal(t, int64(size), w2.Stats().BufferedBytes)
	require.Equal(t, int64(size), w2.state().bytes.Used())
}

// A queue that never empties reuses its ring instead of growing for ever.
func TestBatchQueueRingDoesNotGrow(t *testing.T) {
	var q batchQueue
	b := &writeBatch{}
	q.push(b)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < 200_000; i++ {
		q.push(b)
		if q.pop() != b {
			t.Fatal("pop returned another batch")
		}
	}
	runtime.ReadMemStats(&after)
	require.Equal(t, 1, q.len())
	// The historical queue appended 1.6 MB of pointers here.
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<10))
}

// The ring keeps FIFO order across wrap-arounds and growth.
func TestBatchQueueRingOrder(t *testing.T) {
	var q batchQueue
	batches := make([]*writeBatch, 100)
	for i := range batches {
		batches[i] = &writeBatch{bytes: int64(i)}
	}
	next, want := 0, 0
	for round := 1; round < 12; round++ {
		for i := 0; i < round*3 && next < len(batches); i++ {
			q.push(batches[next])
			next++
		}
		for i := 0; i < round*2 && q.len() > 0; i++ {
			require.Equal(t, int64(want), q.pop().bytes)
			want++
		}
	}
	for q.len() > 0 {
		require.Equal(t, int64(want), q.pop().bytes)
		want++
	}
	require.Nil(t, q.pop())
	require.Equal(t, next, want)
}

// errors.Is(err, ErrNotAccepted) holds for a refusal, as the example and
// users write it, and errors.Is(err, <reason>) too.
func TestNotAcceptedErrorIs(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 1})
	stub.block()
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 1, Async: true,
		MaxBufferedBatches: 1, RequiredAcks: RequireOne,
	}
	require.NoError(t, w.WriteMessages(context.Background(), seqMessages("p0", 0, 3)...))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := w.WriteMessages(ctx, seqMessages("p0", 3, 5)...)
	require.ErrorIs(t, err, ErrNotAccepted)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NotErrorIs(t, err, context.Canceled)
	var werr WriteErrors
	require.ErrorAs(t, err, &werr)
	require.Len(t, werr, 2)
	require.ErrorIs(t, werr[0], ErrNotAccepted)

	shutdown(w, stub)
	err = w.WriteMessages(context.Background(), seqMessages("p0", 0, 1)...)
	require.ErrorIs(t, err, io.ErrClosedPipe)
	require.NotErrorIs(t, err, ErrNotAccepted, "a closed writer's plain error is not a NotAcceptedError")
	require.NotErrorIs(t, &NotAcceptedError{Err: context.Canceled}, io.EOF)
}

// The liveness argument behind sending partial batches: with many callers
// queued for a budget of a few messages, spread over many partitions, and a
// BatchTimeout that never fires, every message still gets through (a
// partial batch is sent whenever nothing else would give bytes back).
func TestWriterWaitingCallersNeverWaitForBatchTimeout(t *testing.T) {
	for _, c := range []struct {
		name       string
		completion bool
	}{{"no Completion", false}, {"slow Completion", true}} {
		t.Run(c.name, func(t *testing.T) {
			stub := newStubBroker(map[string]int{"t": 8})
			stub.produceDelay = 100 * time.Microsecond
			w := &Writer{
				Addr: TCP("stub"), Topic: "t", Transport: stub, Async: true,
				BatchTimeout: time.Hour, MaxBufferedBytes: 4 << 10, RequiredAcks: RequireOne,
			}
			if c.completion {
				w.Completion = func([]Message, error) { time.Sleep(200 * time.Microsecond) }
			}
			defer shutdown(w, stub)
			const producers, each = 16, 40
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			for p := 0; p < producers; p++ {
				wg.Add(1)
				go func(p int) {
					defer wg.Done()
					for _, m := range paddedMessages("k"+strconv.Itoa(p), 0, each, 1000) {
						if err := w.WriteMessages(ctx, m); err != nil {
							t.Errorf("producer %d: %v", p, err)
							return
						}
					}
				}(p)
			}
			wg.Wait()
			require.NoError(t, w.Flush(ctx))
			require.Equal(t, producers*each, stub.totalRecords())
		})
	}
}

// MaxBufferedBatches sampled continuously with a slow Completion, many
// producers and multi-message batches: a partition never holds more than
// N+2 batches, those waiting for or in Completion included.
func TestWriterMaxBufferedBatchesNeverExceededSlowCompletion(t *testing.T) {
	const n, partitions, writers, perWriter = 2, 3, 6, 200
	stub := newStubBroker(map[string]int{"t": partitions})
	stub.produceDelay = 100 * time.Microsecond
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 5, BatchTimeout: time.Millisecond,
		Async: true, MaxBufferedBatches: n, RequiredAcks: RequireOne,
		Completion: func([]Message, error) { time.Sleep(300 * time.Microsecond) },
	}
	stop := make(chan struct{})
	var worst atomic.Int64
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() {
		defer sampler.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			for p := 0; p < partitions; p++ {
				if pw := partitionWriterOf(w, topicPartition{"t", int32(p)}); pw != nil {
					if _, alive := pw.bufferState(); int64(alive) > worst.Load() {
						worst.Store(int64(alive))
					}
				}
			}
			if b := w.Stats().BufferedBatches; b > partitions*(n+2) {
				t.Errorf("BufferedBatches %d over %d", b, partitions*(n+2))
			}
			runtime.Gosched()
		}
	}()
	var wg sync.WaitGroup
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				if err := w.WriteMessages(context.Background(), Message{Value: []byte(strconv.Itoa(i))}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	require.NoError(t, w.Close())
	close(stop)
	sampler.Wait()
	require.LessOrEqual(t, worst.Load(), int64(n+2), "batches alive in one partition")
	require.Equal(t, writers*perWriter, stub.totalRecords())
	t.Logf("at most %d batches alive in a partition (bound %d)", worst.Load(), n+2)
}
