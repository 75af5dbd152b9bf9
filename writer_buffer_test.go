package kafka

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// producer writes one message per call, asynchronously, from its own
// goroutine, and counts the calls that returned.
type producer struct {
	accepted atomic.Int64
	done     chan error
}

func startProducer(w *Writer, key string, from, to int) *producer {
	p := &producer{done: make(chan error, 1)}
	go func() {
		for i := from; i < to; i++ {
			if err := w.WriteMessages(context.Background(), seqMessages(key, i, i+1)...); err != nil {
				p.done <- fmt.Errorf("message %d: %w", i, err)
				return
			}
			p.accepted.Add(1)
		}
		p.done <- nil
	}()
	return p
}

// With the broker stuck, a partition accepts exactly N+2 full batches (one
// being sent, N+1 waiting, which takes the place of the batch being filled),
// then the writer blocks; releasing the broker lets everything through, in
// order.
func TestWriterMaxBufferedBatchesExactBound(t *testing.T) {
	for _, c := range []struct{ n, batchSize int }{{1, 1}, {2, 1}, {5, 1}, {1, 3}, {4, 2}} {
		n, batchSize := c.n, c.batchSize
		t.Run(fmt.Sprintf("N=%d/BatchSize=%d", n, batchSize), func(t *testing.T) {
			stub := newStubBroker(map[string]int{"t": 1})
			tp := topicPartition{"t", 0}
			stub.block()
			w := &Writer{
				Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: batchSize, Async: true,
				BatchTimeout: time.Hour, MaxBufferedBatches: n, RequiredAcks: RequireOne,
			}
			defer shutdown(w, stub)
			p := startProducer(w, "p0", 0, 50)

			eventually(t, "producer blocked on a slot", func() bool { return slotWaiters(w, tp) == 1 })
			if got, want := p.accepted.Load(), int64((n+2)*batchSize); got != want {
				t.Fatalf("accepted %d messages before blocking, want %d", got, want)
			}
			pw := partitionWriterOf(w, tp)
			// Every batch is full, so none is being filled: one is sent,
			// the other N+1 wait.
			queued, alive := pw.bufferState()
			if queued != n+1 || alive != n+2 {
				t.Fatalf("queued %d (want %d), alive %d (want %d)", queued, n+1, alive, n+2)
			}
			// (A wait is counted when it ends: the producer's, after the
			// release, shows in the Stats call below.)
			if got := w.Stats().BufferedBatches; got != int64(n+2) {
				t.Fatalf("BufferedBatches gauge = %d, want %d", got, n+2)
			}
			// The sending loop took its batch; it reaches the broker soon.
			eventually(t, "one produce request held", func() bool { return stub.heldCount(tp) == 1 })

			stub.release()
			if err := <-p.done; err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			assertInOrder(t, stub.records(tp), 0, 50)
			s := w.Stats()
			if s.BufferWaits == 0 || s.BufferWaitTime.Count != s.BufferWaits {
				t.Errorf("buffer waits %d, wait time count %d", s.BufferWaits, s.BufferWaitTime.Count)
			}
			if s.BufferedBatches != 0 || s.BufferedBytes != 0 {
				t.Errorf("gauges after flush: %d batches, %d bytes", s.BufferedBatches, s.BufferedBytes)
			}
		})
	}
}

// Many concurrent producers, multi-message batches and a slow broker: the
// bound is sampled continuously and must never be exceeded.
func TestWriterMaxBufferedBatchesNeverExceeded(t *testing.T) {
	const n, partitions, writers, perWriter = 2, 3, 6, 300
	stub := newStubBroker(map[string]int{"t": partitions})
	stub.produceDelay = 200 * time.Microsecond
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 7, BatchTimeout: time.Millisecond,
		Async: true, MaxBufferedBatches: n, RequiredAcks: RequireOne,
	}
	stop := make(chan struct{})
	violations := make(chan string, 1)
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
					if queued, alive := pw.bufferState(); queued > n+1 || alive > n+2 {
						select {
						case violations <- fmt.Sprintf("partition %d: queued %d, alive %d", p, queued, alive):
						default:
						}
					}
				}
			}
			if b := w.Stats().BufferedBatches; b > partitions*(n+2) {
				select {
				case violations <- fmt.Sprintf("BufferedBatches %d", b):
				default:
				}
			}
			runtime.Gosched()
		}
	}()
	var wg sync.WaitGroup
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				if err := w.WriteMessages(context.Background(), Message{Value: []byte(strconv.Itoa(i))}); err != nil {
					t.Error(err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	w.Close()
	close(stop)
	sampler.Wait()
	select {
	case v := <-violations:
		t.Fatal("bound exceeded: " + v)
	default:
	}
	if got := stub.totalRecords(); got != writers*perWriter {
		t.Fatalf("%d records delivered, want %d", got, writers*perWriter)
	}
}

func TestWriterMaxBufferedBytesBound(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 4})
	stub.block()
	msgSize := int64((&Message{Key: []byte("x"), Value: []byte("0")}).totalSize())
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 1, Async: true,
		MaxBufferedBytes: 3 * msgSize, RequiredAcks: RequireOne,
	}
	defer shutdown(w, stub)
	p := startProducer(w, "x", 0, 40)
	eventually(t, "producer blocked on bytes", func() bool { return byteWaiters(w) == 1 })
	if got := p.accepted.Load(); got != 3 {
		t.Fatalf("accepted %d messages under a 3-message byte budget", got)
	}
	if got := w.Stats().BufferedBytes; got != 3*msgSize {
		t.Fatalf("BufferedBytes = %d, want %d", got, 3*msgSize)
	}

	// Sample the gauge while releasing: never above the cap.
	stop := make(chan struct{})
	var over atomic.Int64
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if b := w.Stats().BufferedBytes; b > 3*msgSize {
				over.Store(b)
			}
			runtime.Gosched()
		}
	}()
	stub.release()
	if err := <-p.done; err != nil {
		t.Fatal(err)
	}
	w.Flush(context.Background())
	close(stop)
	if b := over.Load(); b != 0 {
		t.Fatalf("BufferedBytes reached %d, cap %d", b, 3*msgSize)
	}
	if stub.totalRecords() != 40 {
		t.Fatalf("%d records", stub.totalRecords())
	}
}

// Both limits set: the tighter one wins.
func TestWriterBothLimits(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 1})
	tp := topicPartition{"t", 0}
	stub.block()
	msgSize := int64((&Message{Key: []byte("p0"), Value: []byte("0")}).totalSize())
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 1, Async: true,
		MaxBufferedBatches: 10, MaxBufferedBytes: 2 * msgSize, RequiredAcks: RequireOne,
	}
	defer shutdown(w, stub)
	p := startProducer(w, "p0", 0, 5)
	eventually(t, "blocked on bytes", func() bool { return byteWaiters(w) == 1 })
	if p.accepted.Load() != 2 {
		t.Fatalf("accepted %d", p.accepted.Load())
	}
	stub.release()
	if err := <-p.done; err != nil {
		t.Fatal(err)
	}
	w.Flush(context.Background())
	assertInOrder(t, stub.records(tp), 0, 5)
}

// ctx ends while waiting: the call returns promptly, its error wraps
// ctx.Err(), and WriteErrors marks exactly the messages that were not
// accepted; the accepted ones (here, those of a healthy partition) are
// written, the others never are.
func TestWriterContextCancelWhileWaiting(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 2})
	full, healthy := topicPartition{"t", 0}, topicPartition{"t", 1}
	stub.block(full)
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, Balancer: keyBalancer, BatchSize: 1,
		Async: true, MaxBufferedBatches: 1, RequiredAcks: RequireOne,
	}
	defer shutdown(w, stub)
	if err := w.WriteMessages(context.Background(), seqMessages("p0", 0, 3)...); err != nil {
		t.Fatal(err) // 3 = N+2 fit
	}

	// Interleave partitions: p0 (full) and p1 (healthy).
	msgs := []Message{
		{Key: []byte("p0"), Value: []byte("3")},
		{Key: []byte("p1"), Value: []byte("0")},
		{Key: []byte("p0"), Value: []byte("4")},
		{Key: []byte("p1"), Value: []byte("1")},
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- w.WriteMessages(ctx, msgs...) }()
	eventually(t, "call waiting for p0", func() bool { return slotWaiters(w, full) == 1 })
	cancel()
	err := <-errc

	var nae *NotAcceptedError
	if !errors.As(err, &nae) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	var werr WriteErrors
	if !errors.As(err, &werr) || len(werr) != 4 {
		t.Fatalf("no WriteErrors in %v", err)
	}
	for i, want := range []bool{true, false, true, false} {
		got := werr[i] != nil && errors.Is(werr[i], ErrNotAccepted) && errors.Is(werr[i], context.Canceled)
		if got != want {
			t.Errorf("message %d: not-accepted=%v, want %v (%v)", i, got, want, werr[i])
		}
	}
	if slotWaiters(w, full) != 0 {
		t.Fatal("the cancelled caller is still queued")
	}

	stub.release()
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	assertInOrder(t, stub.records(full), 0, 3) // 3 and 4 were never written
	assertInOrder(t, stub.records(healthy), 0, 2)
}

// PR #1117: a 100 ms context returns while the broker is stuck, with an
// error that says why.
func TestWriterContextTimeoutWithStuckBroker(t *testing.T) {
	for _, async := range []bool{true, false} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			stub := newStubBroker(map[string]int{"t": 1})
			stub.block()
			w := &Writer{
				Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 1, Async: async,
				MaxBufferedBatches: 1, RequiredAcks: RequireOne, WriteTimeout: time.Hour,
			}
			defer func() {
				stub.release()
				w.Close()
			}()
			// Fill the partition with callers that wait for their own batch
			// in sync mode, so run them in the background.
			for i := 0; i < 3; i++ {
				go w.WriteMessages(context.Background(), seqMessages("p0", i, i+1)...)
			}
			eventually(t, "partition full", func() bool {
				pw := partitionWriterOf(w, topicPartition{"t", 0})
				if pw == nil {
					return false
				}
				_, alive := pw.bufferState()
				return alive == 3
			})

			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			errc := make(chan error, 1)
			go func() { errc <- w.WriteMessages(ctx, seqMessages("p0", 3, 4)...) }()
			select {
			case err := <-errc:
				var nae *NotAcceptedError
				if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &nae) {
					t.Fatalf("err = %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("WriteMessages did not return after its context expired")
			}
		})
	}
}

// Sync mode: once accepted, a done ctx returns the bare ctx.Err() (outcome
// unknown) and the write still lands.
func TestWriterSyncContextAfterAcceptance(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 1})
	stub.block()
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 1, MaxBufferedBatches: 1,
		RequiredAcks: RequireOne, WriteTimeout: time.Hour,
	}
	defer shutdown(w, stub)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := w.WriteMessages(ctx, seqMessages("p0", 0, 1)...)
	var nae *NotAcceptedError
	if err != context.DeadlineExceeded || errors.As(err, &nae) {
		t.Fatalf("err = %v, want the bare context error", err)
	}
	stub.release()
	w.Flush(context.Background())
	assertInOrder(t, stub.records(topicPartition{"t", 0}), 0, 1)
}

// Sync callers obey the same bound: with the broker stuck, only N+2 of them
// get their message accepted.
func TestWriterSyncObeysBound(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 1})
	tp := topicPartition{"t", 0}
	stub.block()
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 1, MaxBufferedBatches: 2,
		RequiredAcks: RequireOne, WriteTimeout: time.Hour,
	}
	const callers = 8
	errs := make(chan error, callers)
	for i := 0; i < callers; i++ {
		go func(i int) { errs <- w.WriteMessages(context.Background(), seqMessages("p0", i, i+1)...) }(i)
	}
	eventually(t, "callers beyond the bound waiting", func() bool { return slotWaiters(w, tp) == callers-4 })
	if _, alive := partitionWriterOf(w, tp).bufferState(); alive != 4 {
		t.Fatalf("alive batches %d, want 4", alive)
	}
	stub.release()
	for i := 0; i < callers; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	if stub.totalRecords() != callers {
		t.Fatalf("%d records", stub.totalRecords())
	}
}

// PR #1117: one message per async call, BatchSize 1: no inversion over
// thousands of messages, whatever GOMAXPROCS.
func TestWriterOrderOneMessagePerAsyncCall(t *testing.T) {
	for _, procs := range []int{1, 4, 16} {
		for _, n := range []int{0, 1, 4} {
			t.Run(fmt.Sprintf("GOMAXPROCS=%d/N=%d", procs, n), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				stub := newStubBroker(map[string]int{"t": 1})
				stub.failEvery, stub.failCode = 97, int16(LeaderNotAvailable)
				w := &Writer{
					Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 1, Async: true,
					MaxBufferedBatches: n, RequiredAcks: RequireOne,
					WriteBackoffMin: time.Nanosecond, WriteBackoffMax: time.Microsecond,
				}
				const total = 3000
				for i := 0; i < total; i++ {
					if err := w.WriteMessages(context.Background(), seqMessages("p0", i, i+1)...); err != nil {
						t.Fatal(err)
					}
				}
				w.Close()
				assertInOrder(t, stub.records(topicPartition{"t", 0}), 0, total)
			})
		}
	}
}

// PR #1117: a caller writing to a healthy partition is not held up by one
// waiting on a full partition.
func TestWriterHealthyPartitionNotHeldUp(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 2})
	full, healthy := topicPartition{"t", 0}, topicPartition{"t", 1}
	stub.block(full)
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, Balancer: keyBalancer, BatchSize: 1,
		BatchTimeout: time.Millisecond, MaxBufferedBatches: 1, RequiredAcks: RequireOne,
		WriteTimeout: time.Hour,
	}
	defer func() {
		stub.release()
		w.Close()
	}()
	// Fill p0 and park a synchronous caller behind it.
	for i := 0; i < 4; i++ {
		go w.WriteMessages(context.Background(), seqMessages("p0", i, i+1)...)
	}
	eventually(t, "a caller waiting on p0", func() bool { return slotWaiters(w, full) == 1 })

	// Synchronous writes to p1 complete while p0 stays stuck.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < 20; i++ {
		if err := w.WriteMessages(ctx, seqMessages("p1", i, i+1)...); err != nil {
			t.Fatalf("write to the healthy partition: %v", err)
		}
	}
	assertInOrder(t, stub.records(healthy), 0, 20)
	if slotWaiters(w, full) != 1 || len(stub.records(full)) != 0 {
		t.Fatal("p0 should still be stuck")
	}
	// Stats and Flush-free reads are not blocked either.
	_ = w.Stats()
}

// Completion writes again (the retry / dead-letter pattern) to the same,
// saturated partition with MaxBufferedBatches 1: no deadlock, every
// follow-up is delivered.
func TestWriterCompletionWritesWithOneBatch(t *testing.T) {
	const originals = 300
	stub := newStubBroker(map[string]int{"t": 1})
	var w *Writer
	var followups atomic.Int64
	var failures atomic.Int64
	w = &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 1, Async: true,
		MaxBufferedBatches: 1, RequiredAcks: RequireOne,
		Completion: func(msgs []Message, err error) {
			for _, m := range msgs {
				if string(m.Key) != "orig" {
					continue
				}
				if err := w.WriteMessages(context.Background(), Message{Key: []byte("follow"), Value: m.Value}); err != nil {
					failures.Add(1)
					return
				}
				followups.Add(1)
			}
		},
	}
	p := startProducer(w, "orig", 0, originals)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := <-p.done; err != nil {
			t.Error(err)
		}
		for followups.Load()+failures.Load() < originals {
			time.Sleep(time.Millisecond)
		}
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("deadlock: %d of %d follow-ups written", followups.Load(), originals)
	}
	w.Close()
	if failures.Load() != 0 {
		t.Fatalf("%d follow-up writes failed", failures.Load())
	}
	if got := stub.totalRecords(); got != 2*originals {
		t.Fatalf("%d records, want %d", got, 2*originals)
	}
}

// Completion writing from a sync writer with MaxBufferedBatches 1 to another
// topic (dead letter) while the sync callers wait for that Completion.
func TestWriterCompletionDeadLetterSync(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 1, "dlq": 1})
	stub.produceErrors[topicPartition{"t", 0}] = []int16{int16(TopicAuthorizationFailed)}
	dlq := &Writer{Addr: TCP("stub"), Topic: "dlq", Transport: stub, BatchSize: 1, MaxBufferedBatches: 1, RequiredAcks: RequireOne}
	defer dlq.Close()
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 1, MaxBufferedBatches: 1, RequiredAcks: RequireOne,
		Completion: func(msgs []Message, err error) {
			if err != nil {
				dead := make([]Message, len(msgs))
				for i, m := range msgs {
					dead[i] = Message{Key: m.Key, Value: m.Value}
				}
				if err := dlq.WriteMessages(context.Background(), dead...); err != nil {
					t.Error(err)
				}
			}
		},
	}
	defer shutdown(w, stub)
	err := w.WriteMessages(context.Background(), seqMessages("p0", 0, 1)...)
	var werr WriteErrors
	if !errors.As(err, &werr) || !errors.Is(werr[0], TopicAuthorizationFailed) {
		t.Fatalf("err = %v", err)
	}
	// The sync call returned after Completion, so the dead letter is there.
	if len(stub.records(topicPartition{"dlq", 0})) != 1 {
		t.Fatal("dead letter not written before WriteMessages returned")
	}
}

// With the default (0), an asynchronous writer never blocks, even with the
// broker stuck: the buffer grows, as it always did.
func TestWriterLegacyAsyncNeverBlocks(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 1})
	stub.block()
	w := &Writer{Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 1, Async: true, RequiredAcks: RequireOne}
	const total = 1000
	for i := 0; i < total; i++ {
		if err := w.WriteMessages(context.Background(), seqMessages("p0", i, i+1)...); err != nil {
			t.Fatal(err)
		}
	}
	// One Stats call: it resets the counters, so a second one would see
	// none of the waits of the calls above.
	if s := w.Stats(); s.BufferedBatches != total || s.BufferWaits != 0 {
		t.Fatalf("BufferedBatches = %d, want %d (unbounded growth); BufferWaits = %d, want 0", s.BufferedBatches, total, s.BufferWaits)
	}
	if pw := partitionWriterOf(w, topicPartition{"t", 0}); pw.adm.slots != nil {
		t.Fatal("legacy mode must not have a slot budget")
	}
	stub.release()
	w.Close()
	assertInOrder(t, stub.records(topicPartition{"t", 0}), 0, total)
}

// FIFO between concurrent callers: callers that queue for the same full
// partition get in, and get written, in the order they started waiting,
// whether they wait for a slot or for bytes.
func TestWriterWaitersServedInArrivalOrder(t *testing.T) {
	msgSize := int64((&Message{Key: []byte("p0"), Value: []byte("0")}).totalSize())
	for _, limits := range []struct {
		name    string
		batches int
		bytes   int64
	}{{"slots", 1, 0}, {"bytes", 0, 3 * msgSize}, {"both", 1, 3 * msgSize}} {
		t.Run(limits.name, func(t *testing.T) {
			stub := newStubBroker(map[string]int{"t": 1})
			tp := topicPartition{"t", 0}
			stub.block()
			w := &Writer{
				Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 1, Async: true,
				MaxBufferedBatches: limits.batches, MaxBufferedBytes: limits.bytes, RequiredAcks: RequireOne,
			}
			defer shutdown(w, stub)
			if err := w.WriteMessages(context.Background(), seqMessages("p0", 0, 3)...); err != nil {
				t.Fatal(err)
			}
			const waiters = 10
			var wg sync.WaitGroup
			for i := 0; i < waiters; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					if err := w.WriteMessages(context.Background(), seqMessages("p0", 3+i, 4+i)...); err != nil {
						t.Error(err)
					}
				}(i)
				eventually(t, "waiter queued", func() bool { return slotWaiters(w, tp) == i+1 })
			}
			stub.release()
			wg.Wait()
			w.Flush(context.Background())
			assertInOrder(t, stub.records(tp), 0, 3+waiters)
		})
	}
}

// Randomized: producers write with short random deadlines while the broker
// stalls and recovers. Whatever happens, a message reported as not accepted
// is never written, every accepted one is written exactly once, and each
// producer's messages stay in order within a partition.
func TestWriterRefusedNeverWrittenAcceptedExactlyOnce(t *testing.T) {
	for _, limits := range []struct{ batches, bytes int }{{1, 0}, {3, 0}, {0, 400}, {2, 300}} {
		t.Run(fmt.Sprintf("batches=%d/bytes=%d", limits.batches, limits.bytes), func(t *testing.T) {
			const producers, perProducer, parts = 4, 300, 3
			stub := newStubBroker(map[string]int{"t": parts})
			w := &Writer{
				Addr: TCP("stub"), Topic: "t", Transport: stub, Balancer: keyBalancer,
				BatchSize: 3, BatchTimeout: time.Millisecond, Async: true, RequiredAcks: RequireOne,
				MaxBufferedBatches: limits.batches, MaxBufferedBytes: int64(limits.bytes),
			}
			stop := make(chan struct{})
			var toggler sync.WaitGroup
			toggler.Add(1)
			go func() {
				defer toggler.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					case <-time.After(2 * time.Millisecond):
					}
					if i%2 == 0 {
						stub.block()
					} else {
						stub.release()
					}
				}
			}()

			accepted := make([]map[string]bool, producers)
			refused := make([]map[string]bool, producers)
			var wg sync.WaitGroup
			for g := 0; g < producers; g++ {
				accepted[g], refused[g] = map[string]bool{}, map[string]bool{}
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					for i := 0; i < perProducer; i += 2 {
						msgs := []Message{
							{Key: []byte("p" + strconv.Itoa(i%parts)), Value: []byte(fmt.Sprintf("%d:%d", g, i))},
							{Key: []byte("p" + strconv.Itoa((i+g)%parts)), Value: []byte(fmt.Sprintf("%d:%d", g, i+1))},
						}
						ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%5)*time.Millisecond)
						err := w.WriteMessages(ctx, msgs...)
						cancel()
						var nae *NotAcceptedError
						switch {
						case err == nil:
							for _, m := range msgs {
								accepted[g][string(m.Value)] = true
							}
						case errors.As(err, &nae):
							for j, m := range msgs {
								if errors.Is(nae.Errors[j], ErrNotAccepted) {
									refused[g][string(m.Value)] = true
								} else {
									accepted[g][string(m.Value)] = true
								}
							}
						default:
							t.Errorf("unexpected error: %v", err)
							return
						}
					}
				}(g)
			}
			wg.Wait()
			close(stop)
			toggler.Wait()
			stub.release()
			w.Close()

			seen := map[string]bool{}
			for p := 0; p < parts; p++ {
				last := make([]int, producers)
				for i := range last {
					last[i] = -1
				}
				for _, r := range stub.records(topicPartition{"t", int32(p)}) {
					var g, i int
					fmt.Sscanf(r.value, "%d:%d", &g, &i)
					if seen[r.value] {
						t.Fatalf("%s written twice", r.value)
					}
					seen[r.value] = true
					if refused[g][r.value] {
						t.Fatalf("%s was refused but written", r.value)
					}
					if i <= last[g] {
						t.Fatalf("partition %d: producer %d's message %d after %d", p, g, i, last[g])
					}
					last[g] = i
				}
			}
			nRefused := 0
			for g := 0; g < producers; g++ {
				nRefused += len(refused[g])
				for v := range accepted[g] {
					if !seen[v] {
						t.Fatalf("accepted message %s never written", v)
					}
				}
			}
			t.Logf("%d written, %d refused", len(seen), nRefused)
		})
	}
}

// With a bound, a context that ends during the metadata lookup refuses the
// whole call, with the same error type as a refusal for lack of space, so
// that a bare ctx.Err() always means "accepted, outcome unknown". (The
// default Writer returns ctx.Err() itself there, as v0.4.51:
// TestWriterContextErrorsAsCallerSees.)
func TestWriterContextEndsDuringMetadata(t *testing.T) {
	stub := newStubBroker(map[string]int{})
	stub.metaErrors["t"] = []int16{int16(LeaderNotAvailable), int16(LeaderNotAvailable), int16(LeaderNotAvailable)}
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, WriteBackoffMin: time.Hour, WriteBackoffMax: time.Hour,
		MaxBufferedBatches: 4,
	}
	defer shutdown(w, stub)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := w.WriteMessages(ctx, seqMessages("p0", 0, 2)...)
	var nae *NotAcceptedError
	if !errors.As(err, &nae) || !errors.Is(err, context.DeadlineExceeded) || len(nae.Errors) != 2 ||
		!errors.Is(nae.Errors[1], ErrNotAccepted) {
		t.Fatalf("err = %v", err)
	}
}

// Callers in line for a full partition do not each need a batch of their
// own: when one slot frees, the head opens a batch and everyone behind it
// who fits joins that batch. (Were every waiter to wait for a slot, each
// slot freed by a slow broker would admit a single message.)
func TestWriterOneFreedSlotAdmitsWaitersTogether(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 1})
	tp := topicPartition{"t", 0}
	stub.block()
	const batchSize, waiters = 10, 10
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: batchSize, Async: true,
		BatchTimeout: time.Hour, MaxBufferedBatches: 1, RequiredAcks: RequireOne,
	}
	defer shutdown(w, stub)
	// Three full batches: one being sent, one queued, one ready.
	if err := w.WriteMessages(context.Background(), seqMessages("p0", 0, 3*batchSize)...); err != nil {
		t.Fatal(err)
	}
	eventually(t, "first batch held", func() bool { return stub.heldCount(tp) == 1 })

	var wg sync.WaitGroup
	for i := 0; i < waiters; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			m := seqMessages("p0", 3*batchSize+i, 3*batchSize+i+1)
			if err := w.WriteMessages(context.Background(), m...); err != nil {
				t.Error(err)
			}
		}(i)
		eventually(t, "waiter in line", func() bool { return slotWaiters(w, tp) == i+1 })
	}

	stub.releaseOne(tp)
	eventually(t, "every waiter accepted after one slot freed", func() bool { return slotWaiters(w, tp) == 0 })
	wg.Wait()
	if _, alive := partitionWriterOf(w, tp).bufferState(); alive > 3 {
		t.Fatalf("%d batches alive, bound is 3", alive)
	}

	stub.release()
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	assertInOrder(t, stub.records(tp), 0, 3*batchSize+waiters)
	want := []int{batchSize, batchSize, batchSize, waiters}
	if got := stub.batchSizes(tp); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("batch sizes on the wire %v, want %v", got, want)
	}
}

// With a buffer bound, a batch whose BatchTimeout passes while the
// partition is busy sending could not leave any sooner, so it stays open
// and keeps taking messages (without making their callers wait) until the
// sending loop is free for it. Without a bound, BatchTimeout closes it as
// upstream does, one batch per timeout.
func TestWriterBatchLingersWhileSending(t *testing.T) {
	for _, c := range []struct {
		name           string
		batches, bytes int
		want           []int
	}{
		{"unbounded", 0, 0, []int{1, 1, 1, 1, 1, 1}},
		{"slots", 1, 0, []int{1, 5}},
		{"bytes", 0, 1 << 20, []int{1, 5}},
		{"both", 4, 1 << 20, []int{1, 5}},
	} {
		t.Run(c.name, func(t *testing.T) {
			stub := newStubBroker(map[string]int{"t": 1})
			tp := topicPartition{"t", 0}
			stub.block()
			w := &Writer{
				Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 100, Async: true,
				BatchTimeout: time.Millisecond, RequiredAcks: RequireOne,
				MaxBufferedBatches: c.batches, MaxBufferedBytes: int64(c.bytes),
			}
			defer shutdown(w, stub)
			// Nothing here should wait for space; the deadline turns a
			// regression into a failure instead of a hang.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := w.WriteMessages(ctx, seqMessages("p0", 0, 1)...); err != nil {
				t.Fatal(err)
			}
			eventually(t, "first batch held", func() bool { return stub.heldCount(tp) == 1 })
			pw := partitionWriterOf(w, tp)
			timedOut := func() bool {
				pw.mu.Lock()
				defer pw.mu.Unlock()
				return pw.cur == nil || pw.cur.lingering
			}
			for i := 1; i < 6; i++ {
				if err := w.WriteMessages(ctx, seqMessages("p0", i, i+1)...); err != nil {
					t.Fatalf("message %d: %v", i, err)
				}
				eventually(t, "BatchTimeout passed", timedOut)
			}
			if n := w.Stats().BufferWaits; n != 0 {
				t.Fatalf("%d callers waited for buffer space", n)
			}

			stub.release()
			if err := w.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			assertInOrder(t, stub.records(tp), 0, 6)
			if got, want := fmt.Sprint(stub.batchSizes(tp)), fmt.Sprint(c.want); got != want {
				t.Fatalf("batch sizes on the wire %s, want %s", got, want)
			}
		})
	}
}

// A lingering batch leaves as soon as the sending loop is free, not at
// some later timeout.
func TestWriterLingeringBatchSentWhenPartitionFree(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 1})
	tp := topicPartition{"t", 0}
	stub.block()
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 100, Async: true,
		BatchTimeout: time.Millisecond, MaxBufferedBatches: 1, RequiredAcks: RequireOne,
	}
	defer shutdown(w, stub)
	if err := w.WriteMessages(context.Background(), seqMessages("p0", 0, 1)...); err != nil {
		t.Fatal(err)
	}
	eventually(t, "first batch held", func() bool { return stub.heldCount(tp) == 1 })
	pw := partitionWriterOf(w, tp)
	if err := w.WriteMessages(context.Background(), seqMessages("p0", 1, 3)...); err != nil {
		t.Fatal(err)
	}
	eventually(t, "second batch lingering", func() bool {
		pw.mu.Lock()
		defer pw.mu.Unlock()
		return pw.cur != nil && pw.cur.lingering
	})
	// Let only the first request through: the lingering batch must be
	// the next request, held in its turn, with nothing left open.
	stub.releaseOne(tp)
	eventually(t, "lingering batch sent", func() bool {
		_, alive := pw.bufferState()
		return len(stub.batchSizes(tp)) == 1 && stub.heldCount(tp) == 1 && alive == 1
	})
	stub.release()
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(stub.batchSizes(tp)), "[1 2]"; got != want {
		t.Fatalf("batch sizes on the wire %s, want %s", got, want)
	}
}
