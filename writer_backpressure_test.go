package kafka

import (
	"context"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// The Writer's bound in the situations docs/backpressure.md compares with
// the alternatives discussed upstream in PR #1117 (a goroutine per pending
// send, an application semaphore released in Completion). The models of
// those alternatives are not the library's to test: the goroutine-per-send
// model is docs/backpressure/ordermodel, and the semaphore's two failures
// are described in docs/backpressure.md.

// inversions counts the places where a value is smaller than the one
// before it.
func inversions(vals []int) int {
	n := 0
	for i := 1; i < len(vals); i++ {
		if vals[i] < vals[i-1] {
			n++
		}
	}
	return n
}

// One message per batch and per async call through the Writer with
// MaxBufferedBatches 1, a broker slower than the producer and retries in
// the mix, at GOMAXPROCS 4: no inversion (the workload that
// docs/backpressure/ordermodel runs through a goroutine per pending send).
func TestWriterOrderUnderOneBatchBound(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	const total = 5000

	stub := newStubBroker(map[string]int{"t": 1})
	stub.failEvery, stub.failCode = 101, int16(NotLeaderForPartition)
	stub.produceDelay = 10 * time.Microsecond // a broker slower than the producer, so the Writer waits
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 1, Async: true,
		MaxBufferedBatches: 1, RequiredAcks: RequireOne,
		WriteBackoffMin: time.Nanosecond, WriteBackoffMax: time.Microsecond,
	}
	for i := 0; i < total; i++ {
		if err := w.WriteMessages(context.Background(), seqMessages("p0", i, i+1)...); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs := stub.records(topicPartition{"t", 0})
	got := make([]int, len(recs))
	for i, r := range recs {
		got[i], _ = strconv.Atoi(r.value)
	}
	stats := w.Stats() // one snapshot: counters reset on every call
	t.Logf("Writer, MaxBufferedBatches=1, GOMAXPROCS=4: %d inversions in %d batches (%d retried sends, %d waits for space)", inversions(got), len(got), stats.Retries, stats.BufferWaits)
	assertInOrder(t, recs, 0, total)
	if stats.BufferWaits == 0 {
		// Not an error, but the comparison is only meaningful when the
		// Writer had to wait at least sometimes, as the model did.
		t.Log("note: the Writer never waited for space in this run")
	}
}

// A partial batch counts as one batch against MaxBufferedBatches, however
// many messages it holds: with MaxBufferedBatches 1, BatchSize 100 and a
// long BatchTimeout, 24 messages go in without waiting and without a
// produce request. (An application semaphore with a permit per message,
// released in Completion, stops the producer here: docs/backpressure.md.)
func TestWriterPartialBatchCountsAsOneBatch(t *testing.T) {
	const permits = 8
	stub2 := newStubBroker(map[string]int{"t": 1})
	w2 := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub2, BatchSize: 100, BatchTimeout: time.Hour,
		Async: true, RequiredAcks: RequireOne, MaxBufferedBatches: 1,
	}
	defer w2.Close()
	for i := 0; i < 3*permits; i++ {
		if err := w2.WriteMessages(context.Background(), seqMessages("p0", i, i+1)...); err != nil {
			t.Fatal(err)
		}
	}
	if s := w2.Stats(); s.BufferWaits != 0 || s.BufferedBatches != 1 {
		t.Fatalf("BufferWaits = %d, BufferedBatches = %d; want 0 and 1", s.BufferWaits, s.BufferedBatches)
	}
}

// A Completion that writes again (retry or dead letter) to its saturated
// partition completes: with MaxBufferedBatches 1, a WriteMessages call
// made from Completion never waits for space. (An application semaphore
// released in Completion deadlocks here: docs/backpressure.md.)
func TestWriterCompletionWritesAgainUnderOneBatchBound(t *testing.T) {
	const deadlockAfter = 5 * time.Second

	t.Run("MaxBufferedBatches=1", func(t *testing.T) {
		stub := newStubBroker(map[string]int{"t": 1})
		stub.block()
		var w *Writer
		var followups atomic.Int64
		w = &Writer{
			Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 1, Async: true,
			RequiredAcks: RequireOne, MaxBufferedBatches: 1,
			Completion: func(msgs []Message, err error) {
				for _, m := range msgs {
					if string(m.Key) != "orig" {
						continue
					}
					if err := w.WriteMessages(context.Background(), Message{Key: []byte("follow"), Value: m.Value}); err != nil {
						t.Error(err)
						return
					}
					followups.Add(1)
				}
			},
		}
		defer shutdown(w, stub)
		// Fill the partition to its bound (N+2 = 3 one-message batches).
		for i := 0; i < 3; i++ {
			if err := w.WriteMessages(context.Background(), seqMessages("orig", i, i+1)...); err != nil {
				t.Fatal(err)
			}
		}
		stub.release()
		done := make(chan struct{})
		go func() {
			defer close(done)
			for followups.Load() < 3 {
				time.Sleep(time.Millisecond)
			}
		}()
		select {
		case <-done:
		case <-time.After(deadlockAfter):
			t.Fatalf("deadlock: %d of 3 follow-ups written after %v", followups.Load(), deadlockAfter)
		}
		if err := w.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := stub.totalRecords(); got != 6 {
			t.Fatalf("%d records, want 6", got)
		}
	})
}
