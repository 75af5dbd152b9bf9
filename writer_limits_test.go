package kafka

import (
	"context"
	"io"
	"math"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Edge values of the bounds and of message sizes, the ring queue, and
// refusals matched with errors.Is.

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
// size: it is too large for the default limits, and for limits above it
// too, as no record batch can carry it. Before, the int32 size wrapped to
// 100 bytes and the message went in.
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
	w2 := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub2, Async: true, RequiredAcks: RequireOne,
		BatchBytes: 8 << 30, MaxBufferedBytes: 8 << 30, BatchTimeout: time.Hour,
	}
	defer shutdown(w2, stub2)
	require.ErrorAs(t, w2.WriteMessages(context.Background(), m), &tooLarge)
	require.Zero(t, w2.Stats().BufferedBytes)
	require.Zero(t, w2.state().bytes.Used())
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
