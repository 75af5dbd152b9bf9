package kafka

import (
	"context"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Tests cited by docs/backpressure.md that compare the Writer's bound with
// the two alternatives discussed upstream in PR #1117: a goroutine per
// pending send (the PR's fallback) and an application semaphore released in
// Completion.

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

// modelGoroutinePerPendingSend models PR #1117's fallback: batches go to a
// bounded channel that one sender drains in order, and when the channel is
// full the producer does not wait but starts a goroutine that sends the
// batch once there is room. It returns the order in which the sender saw
// the batches.
func modelGoroutinePerPendingSend(total, capacity int) []int {
	ch := make(chan int, capacity)
	seen := make([]int, 0, total)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for v := range ch {
			seen = append(seen, v)
			runtime.Gosched() // the "network": the sender is slower than the producer
		}
	}()
	var pending sync.WaitGroup
	for i := 0; i < total; i++ {
		select {
		case ch <- i:
		default:
			pending.Add(1)
			go func(i int) {
				defer pending.Done()
				ch <- i
			}(i)
		}
	}
	pending.Wait()
	close(ch)
	<-drained
	return seen
}

// The same workload, one message per batch and per async call, through the
// goroutine-per-pending-send model and through the Writer with
// MaxBufferedBatches 1. The model's inversions depend on scheduling, so
// they are only reported; the Writer must have none, with retries in the
// mix.
func TestBackpressureOrderGoroutinePerSendVsWriter(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	const total = 5000

	model := modelGoroutinePerPendingSend(total, 1)
	if len(model) != total {
		t.Fatalf("model delivered %d of %d", len(model), total)
	}
	t.Logf("goroutine per pending send (PR #1117 fallback model), GOMAXPROCS=4: %d inversions in %d batches", inversions(model), total)

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

// semaphore is the application-side alternative: a permit per message,
// taken before WriteMessages and given back in Completion.
type semaphore chan struct{}

func (s semaphore) acquire(ctx context.Context, n int) error {
	for i := 0; i < n; i++ {
		select {
		case s <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (s semaphore) release(n int) {
	for i := 0; i < n; i++ {
		<-s
	}
}

// What the semaphore cannot see: its permits count messages handed to
// WriteMessages, not batches. With a healthy broker, a full semaphore can be
// made entirely of messages sitting in a batch that is not complete: nothing
// is in flight, so nothing will give a permit back before BatchTimeout (an
// hour here) and the producer is stuck. The Writer's own bound counts
// batches and bytes it holds, so the same messages do not hold anyone up.
func TestBackpressureSemaphoreCountsMessagesNotBatches(t *testing.T) {
	const permits = 8
	stub := newStubBroker(map[string]int{"t": 1})
	sem := make(semaphore, permits)
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 100, BatchTimeout: time.Hour,
		Async: true, RequiredAcks: RequireOne,
		Completion: func(msgs []Message, err error) { sem.release(len(msgs)) },
	}
	defer w.Close()
	for i := 0; i < permits; i++ {
		if err := sem.acquire(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteMessages(context.Background(), seqMessages("p0", i, i+1)...); err != nil {
			t.Fatal(err)
		}
	}
	// The semaphore is full, yet the broker has received nothing and holds
	// nothing: the only thing that can release a permit is BatchTimeout.
	if len(sem) != permits {
		t.Fatalf("semaphore holds %d permits, want %d", len(sem), permits)
	}
	stub.mu.Lock()
	calls := stub.produceCalls
	stub.mu.Unlock()
	if calls != 0 {
		t.Fatalf("%d produce requests, want none (batch still filling)", calls)
	}
	if s := w.Stats(); s.BufferedBatches != 1 {
		t.Fatalf("BufferedBatches = %d, want 1 partial batch", s.BufferedBatches)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	err := sem.acquire(ctx, 1)
	cancel()
	if err == nil {
		t.Fatal("the semaphore had a free permit")
	}
	// Only a Flush (or the hour-long BatchTimeout) frees it.
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Flush returns once the batch is acknowledged; the Completion that
	// gives the permits back runs right after.
	eventually(t, "permits given back after Flush", func() bool { return len(sem) == 0 })

	// The Writer's own bound, same workload: MaxBufferedBatches 1 counts
	// the partial batch as one batch, so all the messages go in without
	// waiting and without a produce request.
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

// The deadlock the semaphore invites: a Completion that writes again (retry
// or dead letter) must take a permit first, but the permits are held by the
// messages whose Completion calls are queued behind this one (they run one
// at a time per partition), so it waits forever. The Writer's own bound,
// with MaxBufferedBatches 1, gives a batch's space back before its
// Completion runs, and the same pattern completes.
func TestBackpressureSemaphoreDeadlocksInCompletion(t *testing.T) {
	const permits = 4
	const deadlockAfter = 5 * time.Second

	t.Run("semaphore", func(t *testing.T) {
		stub := newStubBroker(map[string]int{"t": 1})
		stub.block()
		sem := make(semaphore, permits)
		var w *Writer
		var blocked, deadlocked, returned atomic.Int64
		w = &Writer{
			Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 1, Async: true,
			RequiredAcks: RequireOne,
			Completion: func(msgs []Message, err error) {
				defer sem.release(len(msgs))
				defer returned.Add(int64(len(msgs)))
				for _, m := range msgs {
					if string(m.Key) != "orig" {
						continue
					}
					// The guard only exists so that the test can end: a
					// real program would wait here forever.
					ctx, cancel := context.WithTimeout(context.Background(), deadlockAfter)
					blocked.Add(1)
					err := sem.acquire(ctx, 1)
					cancel()
					if err != nil {
						deadlocked.Add(1)
						return
					}
					if err := w.WriteMessages(context.Background(), Message{Key: []byte("follow"), Value: m.Value}); err != nil {
						t.Error(err)
					}
				}
			},
		}
		defer shutdown(w, stub)
		for i := 0; i < permits; i++ {
			if err := sem.acquire(context.Background(), 1); err != nil {
				t.Fatal(err)
			}
			if err := w.WriteMessages(context.Background(), seqMessages("orig", i, i+1)...); err != nil {
				t.Fatal(err)
			}
		}
		stub.release()
		eventually(t, "a Completion waiting for a permit", func() bool { return blocked.Load() > 0 })
		done := make(chan struct{})
		go func() {
			defer close(done)
			for deadlocked.Load() == 0 && stub.totalRecords() < 2*permits {
				time.Sleep(time.Millisecond)
			}
		}()
		select {
		case <-done:
		case <-time.After(4 * deadlockAfter):
			t.Fatal("the guard did not fire")
		}
		if deadlocked.Load() == 0 {
			t.Fatalf("the semaphore design did not deadlock: %d records", stub.totalRecords())
		}
		t.Logf("semaphore of %d messages: Completion blocked for %v with every permit held by messages whose Completion waits behind it", permits, deadlockAfter)
		// Once the guard gave up a permit, the Completions queued behind
		// write their follow-ups; let them finish before Close, which would
		// otherwise refuse a follow-up still on its way.
		// Each original message and each follow-up written gets its
		// Completion call.
		eventually(t, "every Completion returned", func() bool { return returned.Load() == int64(2*permits)-deadlocked.Load() })
	})

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

// A caller waiting for space does not stop the partition's BatchTimeout:
// the byte budget is used up by a partial batch that only BatchTimeout will
// send; while the caller waits, that batch reaches the broker (held there,
// so the caller stays waiting until we release it), and then the caller
// gets in.
func TestBackpressureBatchTimeoutFlushesWhileCallerWaits(t *testing.T) {
	msgSize := int64((&Message{Key: []byte("p0"), Value: []byte("0")}).totalSize())
	stub := newStubBroker(map[string]int{"t": 1})
	tp := topicPartition{"t", 0}
	stub.block()
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 100, BatchTimeout: 20 * time.Millisecond,
		Async: true, RequiredAcks: RequireOne, MaxBufferedBytes: 3 * msgSize,
	}
	defer shutdown(w, stub)
	if err := w.WriteMessages(context.Background(), seqMessages("p0", 0, 3)...); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.WriteMessages(context.Background(), seqMessages("p0", 3, 4)...) }()
	eventually(t, "the caller waiting for bytes", func() bool { return byteWaiters(w) == 1 })
	eventually(t, "BatchTimeout sending the partial batch while the caller waits", func() bool { return stub.heldCount(tp) == 1 })
	if byteWaiters(w) != 1 {
		t.Fatal("the caller got in before the batch was acknowledged")
	}
	stub.release()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting caller was not let in after the batch was acknowledged")
	}
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	assertInOrder(t, stub.records(tp), 0, 4)
}
