package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Writer.Close: what it does to callers waiting for space, to calls racing
// it, to an idempotent Writer under load, and to the Writer's goroutines.

// Close wakes every waiting caller with io.ErrClosedPipe, delivers what was
// accepted, and leaves no goroutine behind.
func TestWriterCloseWhileCallersWait(t *testing.T) {
	baseline := runtime.NumGoroutine()
	stub := newStubBroker(map[string]int{"t": 1})
	tp := topicPartition{"t", 0}
	stub.block()
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 1, Async: true,
		MaxBufferedBatches: 1, MaxBufferedBytes: 1 << 20, RequiredAcks: RequireOne,
	}
	if err := w.WriteMessages(context.Background(), seqMessages("p0", 0, 3)...); err != nil {
		t.Fatal(err)
	}
	const waiters = 4
	errs := make(chan error, waiters)
	for i := 0; i < waiters; i++ {
		go func(i int) { errs <- w.WriteMessages(context.Background(), seqMessages("p0", 100+i, 101+i)...) }(i)
	}
	eventually(t, "callers waiting", func() bool { return slotWaiters(w, tp) == waiters })

	closed := make(chan error, 1)
	go func() { closed <- w.Close() }()
	// The waiters are refused while the broker is still stuck.
	for i := 0; i < waiters; i++ {
		err := <-errs
		var werr WriteErrors
		if !errors.Is(err, io.ErrClosedPipe) || !errors.As(err, &werr) || !errors.Is(werr[0], ErrNotAccepted) {
			t.Fatalf("waiter: %v", err)
		}
	}
	select {
	case <-closed:
		t.Fatal("Close returned while accepted batches were still in flight")
	case <-time.After(20 * time.Millisecond):
	}
	stub.release()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	assertInOrder(t, stub.records(tp), 0, 3)
	checkNoGoroutineLeak(t, baseline)
}

func TestWriterGoroutinesReleasedAfterClose(t *testing.T) {
	for _, n := range []int{0, 2} {
		t.Run(fmt.Sprintf("MaxBufferedBatches=%d", n), func(t *testing.T) {
			baseline := runtime.NumGoroutine()
			stub := newStubBroker(map[string]int{"t": 8})
			w := &Writer{
				Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 5, BatchTimeout: time.Hour,
				Async: true, MaxBufferedBatches: n, MaxBufferedBytes: 1 << 20,
				Completion: func([]Message, error) {},
			}
			for i := 0; i < 200; i++ {
				if err := w.WriteMessages(context.Background(), seqMessages("x", i, i+1)...); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if got := stub.totalRecords(); got != 200 {
				t.Errorf("Close flushed %d records, want 200", got)
			}
			checkNoGoroutineLeak(t, baseline)
		})
	}
}

// Close racing with callers whose calls span partitions: every call ends
// (no caller is left waiting for a slot or bytes), a call that returned nil
// was written, and nothing is written twice.
func TestWriterCloseRacesCalls(t *testing.T) {
	for round := 0; round < 5; round++ {
		stub := newStubBroker(map[string]int{"t": 2})
		w := &Writer{
			Addr: TCP("stub"), Topic: "t", Transport: stub, Balancer: keyedPartition,
			BatchSize: 2, BatchTimeout: time.Nanosecond, RequiredAcks: RequireOne,
			MaxBufferedBatches: 1, MaxBufferedBytes: 256,
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var ok [][]Message
		for g := 0; g < 6; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for n := 0; ; n++ {
					msgs := make([]Message, 5)
					for i := range msgs {
						v := fmt.Sprintf("c%d/%03d", g, n*5+i)
						msgs[i] = Message{Key: []byte(fmt.Sprintf("p%d/%s", i%2, v)), Value: []byte(v)}
					}
					err := w.WriteMessages(context.Background(), msgs...)
					if err != nil {
						return
					}
					mu.Lock()
					ok = append(ok, msgs)
					mu.Unlock()
				}
			}(g)
		}
		eventually(t, "some calls written", func() bool { return stub.totalRecords() > 50 })
		require.NoError(t, w.Close())
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("callers still blocked after Close")
		}
		seen := map[string]int{}
		for p := 0; p < 2; p++ {
			for _, r := range stub.records(topicPartition{"t", int32(p)}) {
				seen[r.value]++
				require.Equal(t, 1, seen[r.value], "written twice: %s", r.value)
			}
		}
		for _, msgs := range ok {
			for _, m := range msgs {
				require.Equal(t, 1, seen[string(m.Value)], "%s acknowledged but missing", m.Value)
			}
		}
	}
}

// Close racing with asynchronous callers: a call that returned nil had its
// messages accepted, so each of them reaches Completion exactly once
// before Close returns (written, as the broker never fails), and no
// Completion call comes after Close returned.
func TestWriterCloseRacesAsyncCalls(t *testing.T) {
	for round := 0; round < 5; round++ {
		stub := newStubBroker(map[string]int{"t": 3})
		var mu sync.Mutex
		completed := map[string]int{}
		closed := false
		w := &Writer{
			Addr: TCP("stub"), Topic: "t", Transport: stub, Async: true,
			BatchSize: 3, BatchTimeout: time.Millisecond, RequiredAcks: RequireOne,
			MaxBufferedBatches: 2,
			Completion: func(msgs []Message, err error) {
				mu.Lock()
				defer mu.Unlock()
				if closed {
					t.Error("Completion called after Close returned")
				}
				for _, m := range msgs {
					if err != nil {
						t.Errorf("%s failed: %v", m.Value, err)
					}
					completed[string(m.Value)]++
				}
			},
		}
		var wg sync.WaitGroup
		accepted := make([][]string, 4)
		for g := range accepted {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for n := 0; ; n++ {
					v := fmt.Sprintf("c%d/%05d", g, n)
					if err := w.WriteMessages(context.Background(), Message{Value: []byte(v)}); err != nil {
						if !errors.Is(err, io.ErrClosedPipe) {
							t.Errorf("caller %d: %v", g, err)
						}
						return
					}
					accepted[g] = append(accepted[g], v)
				}
			}(g)
		}
		eventually(t, "some calls written", func() bool { return stub.totalRecords() > 100 })
		require.NoError(t, w.Close())
		mu.Lock()
		closed = true
		mu.Unlock()
		wg.Wait()
		mu.Lock()
		for _, vs := range accepted {
			for _, v := range vs {
				require.Equal(t, 1, completed[v], "%s accepted, reported %d times", v, completed[v])
			}
		}
		mu.Unlock()
	}
}

// Close while many callers are still writing (some with deadlines) to an
// idempotent Writer whose broker loses answers: Close returns, every
// caller returns, what was reported written is in the log once and in
// order, and no goroutine is left.
func TestIdempotentWriterCloseUnderLoad(t *testing.T) {
	for _, bounded := range []bool{false, true} {
		t.Run(fmt.Sprint("bounded=", bounded), func(t *testing.T) {
			before := runtime.NumGoroutine()
			const parts, callers = 2, 6
			var rngMu sync.Mutex
			rng := rand.New(rand.NewSource(5))
			intn := func(n int) int { rngMu.Lock(); defer rngMu.Unlock(); return rng.Intn(n) }
			b := newIdemBroker(map[string]int{"t": parts})
			b.fault = func(call int, tp topicPartition, sb sentBatch) idemFault {
				switch intn(6) {
				case 0:
					return idemFault{loseReply: true}
				case 1:
					return idemFault{lose: true}
				}
				return idemFault{}
			}
			w := newIdemWriter(b)
			w.BatchSize = 3
			if bounded {
				w.MaxBufferedBatches, w.MaxBufferedBytes = 1, 128
			}
			var mu sync.Mutex
			ok := map[string]bool{}
			var wg sync.WaitGroup
			var started sync.WaitGroup
			for c := 0; c < callers; c++ {
				wg.Add(1)
				started.Add(1)
				go func(c int) {
					defer wg.Done()
					for i := 0; ; i++ {
						if i == 5 {
							started.Done()
						}
						ctx, cancel := context.WithTimeout(context.Background(), time.Duration(intn(5000))*time.Microsecond)
						v := fmt.Sprintf("c%d-%05d", c, i)
						err := w.WriteMessages(ctx, Message{Key: []byte{byte('0' + c%parts)}, Value: []byte(v)})
						cancel()
						if err == nil {
							mu.Lock()
							ok[v] = true
							mu.Unlock()
						}
						if errors.Is(err, io.ErrClosedPipe) {
							if i < 5 {
								started.Done()
							}
							return
						}
					}
				}(c)
			}
			started.Wait()
			closed := make(chan error, 1)
			go func() { closed <- w.Close() }()
			select {
			case err := <-closed:
				require.NoError(t, err)
			case <-time.After(60 * time.Second):
				t.Fatal("Close hangs")
			}
			waitOrFail(t, &wg, 60*time.Second)

			inLog := map[string]bool{}
			for p := 0; p < parts; p++ {
				last := map[string]string{}
				for _, v := range b.logOf(topicPartition{"t", int32(p)}) {
					require.False(t, inLog[v], "%s is in the log twice", v)
					inLog[v] = true
					caller := v[:2]
					require.Less(t, last[caller], v, "order of %s", caller)
					last[caller] = v
				}
			}
			for v := range ok {
				require.True(t, inLog[v], "%s reported written, not in the log", v)
			}
			deadline := time.Now().Add(10 * time.Second)
			for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			require.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines left after Close")
		})
	}
}

// Two Close calls at once: each returns only once everything accepted is
// written, not merely the first one. The second call finds the partitions
// already taken by the first, which may still be handing their open
// batches to the sinks. Many partitions make that hand-over long.
func TestWriterConcurrentCloseWaitsForDelivery(t *testing.T) {
	const parts = 64
	for round := 0; round < 20; round++ {
		stub := newStubBroker(map[string]int{"t": parts})
		w := &Writer{
			Addr: TCP("stub"), Topic: "t", Transport: stub, Balancer: keyedPartition,
			Async: true, BatchTimeout: time.Hour, RequiredAcks: RequireOne,
		}
		var msgs []Message
		for p := 0; p < parts; p++ {
			msgs = append(msgs, Message{Key: []byte(fmt.Sprintf("p%d/", p)), Value: []byte(fmt.Sprint(p))})
		}
		require.NoError(t, w.WriteMessages(context.Background(), msgs...))
		var wg sync.WaitGroup
		short := make(chan int, 2)
		for c := 0; c < 2; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				require.NoError(t, w.Close())
				if n := stub.totalRecords(); n != parts {
					short <- n
				}
			}()
		}
		wg.Wait()
		close(short)
		for n := range short {
			t.Fatalf("round %d: a Close returned with %d of %d accepted messages written", round, n, parts)
		}
	}
}

// A Close that comes while another Close is stuck handing a partition's
// open batch over (here: the partition's lock is held) must not return
// before that batch is written.
func TestWriterSecondCloseWaitsForFirst(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 1})
	tp := topicPartition{"t", 0}
	w := &Writer{Addr: TCP("stub"), Topic: "t", Transport: stub, Async: true, BatchTimeout: time.Hour}
	require.NoError(t, w.WriteMessages(context.Background(), seqMessages("k", 0, 3)...))
	pw := partitionWriterOf(w, tp)
	require.NotNil(t, pw)

	pw.mu.Lock() // the first Close stops at this partition
	first := make(chan struct{})
	go func() { defer close(first); w.Close() }()
	eventually(t, "first Close started", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.closed
	})
	second := make(chan int, 1)
	go func() { w.Close(); second <- stub.totalRecords() }()
	select {
	case n := <-second:
		pw.mu.Unlock()
		t.Fatalf("second Close returned with %d of 3 accepted messages written", n)
	case <-time.After(50 * time.Millisecond):
		// Not returned yet (the check's power depends on this wait, its
		// outcome does not): let the first Close go on.
	}
	pw.mu.Unlock()
	<-first
	require.Equal(t, 3, <-second, "records written when the second Close returned")
	assertInOrder(t, stub.records(tp), 0, 3)
}

// Close racing everything that can hand a batch to a sink at the same
// time: callers, Flush in a loop, BatchTimeout expiring, retries after a
// leader change, and Completion writing follow-up messages. Close returns,
// nothing panics (an inflight.Add racing Close's Wait would, or the race
// detector says so), every call that returned nil has each of its messages
// reported once, without error, before Close returns, and no Completion
// call comes after.
func TestWriterCloseRacesFlushRetriesAndCompletionWrites(t *testing.T) {
	for _, bounded := range []bool{false, true} {
		t.Run(fmt.Sprint("bounded=", bounded), func(t *testing.T) {
			for round := 0; round < 4; round++ {
				closeRacesEverything(t, bounded, round)
			}
		})
	}
}

func closeRacesEverything(t *testing.T, bounded bool, round int) {
	stub := newStubBroker(map[string]int{"t": 4})
	stub.failEvery, stub.failCode = 3, int16(NotLeaderForPartition)
	var mu sync.Mutex
	completed := map[string]int{}
	var accepted []string
	closed := false
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, Async: true,
		BatchSize: 4, BatchTimeout: time.Millisecond, RequiredAcks: RequireOne,
		MaxAttempts: 1000, WriteBackoffMin: time.Microsecond, WriteBackoffMax: time.Millisecond,
	}
	if bounded {
		w.MaxBufferedBatches, w.MaxBufferedBytes = 2, 2048
	}
	w.Completion = func(msgs []Message, err error) {
		var follow []Message
		mu.Lock()
		if closed {
			t.Error("Completion called after Close returned")
		}
		for _, m := range msgs {
			v := string(m.Value)
			if err != nil {
				t.Errorf("%s failed: %v", v, err)
			}
			completed[v]++
			if v[0] == 'c' && len(v)%3 == 0 {
				follow = append(follow, Message{Value: []byte("f/" + v)})
			}
		}
		mu.Unlock()
		if len(follow) == 0 {
			return
		}
		// Refused in part once Close began: WriteErrors says which were
		// accepted, and those must still be reported.
		took := acceptedValues(t, follow, w.WriteMessages(context.Background(), follow...))
		mu.Lock()
		accepted = append(accepted, took...)
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for n := 0; ; n++ {
				v := fmt.Sprintf("c%d/%d", g, n)
				msgs := []Message{{Value: []byte(v)}, {Value: []byte(v + "b")}}
				err := w.WriteMessages(context.Background(), msgs...)
				took := acceptedValues(t, msgs, err)
				mu.Lock()
				accepted = append(accepted, took...)
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}(g)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if err := w.Flush(context.Background()); err != nil {
				if !errors.Is(err, io.ErrClosedPipe) {
					t.Errorf("Flush: %v", err)
				}
				return
			}
		}
	}()
	eventually(t, "some messages written", func() bool { return stub.totalRecords() > 50+20*round })
	require.NoError(t, w.Close())
	mu.Lock()
	closed = true
	mu.Unlock()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for _, v := range accepted {
		require.Equal(t, 1, completed[v], "%s accepted, reported %d times", v, completed[v])
	}
	require.Len(t, completed, len(accepted), "messages reported that no call had accepted")
}

// acceptedValues returns the values of the messages of an asynchronous
// WriteMessages call that it accepted: all of them when it returned nil,
// those WriteErrors has no error for when Close refused the rest, none
// when it refused the call. Any other error fails the test.
func acceptedValues(t *testing.T, msgs []Message, err error) []string {
	var werr WriteErrors
	if err != nil && !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("WriteMessages: %v", err) // called from other goroutines: no FailNow
	}
	if err != nil && !errors.As(err, &werr) {
		return nil
	}
	var vs []string
	for i, m := range msgs {
		if werr == nil || werr[i] == nil {
			vs = append(vs, string(m.Value))
		}
	}
	return vs
}

// Close on a Writer that was never used, twice, then the calls after it:
// nothing hangs, and every later call says the Writer is closed.
func TestWriterCloseUnusedThenCalls(t *testing.T) {
	w := &Writer{Addr: TCP("stub"), Topic: "t", Transport: newStubBroker(map[string]int{"t": 1})}
	require.NoError(t, w.Close())
	require.NoError(t, w.Close())
	require.ErrorIs(t, w.WriteMessages(context.Background(), Message{Value: []byte("x")}), io.ErrClosedPipe)
	require.ErrorIs(t, w.Flush(context.Background()), io.ErrClosedPipe)
	require.Nil(t, partitionWriterOf(w, topicPartition{"t", 0}), "a partition writer created after Close")
}

// Close racing calls that keep creating partition writers (each call
// writes to topics not seen before): a partition writer created as Close
// runs must either be closed by it or refuse the call, so every accepted
// message is reported before Close returns, and none is left behind after.
func TestWriterCloseRacesNewPartitions(t *testing.T) {
	for round := 0; round < 5; round++ {
		stub := newStubBroker(map[string]int{})
		stub.autoCreate = 2
		var mu sync.Mutex
		completed := map[string]int{}
		var accepted []string
		closed := false
		w := &Writer{
			Addr: TCP("stub"), Transport: stub, Async: true, AllowAutoTopicCreation: true,
			BatchTimeout: time.Hour, RequiredAcks: RequireOne,
			Completion: func(msgs []Message, err error) {
				mu.Lock()
				defer mu.Unlock()
				if closed {
					t.Error("Completion called after Close returned")
				}
				for _, m := range msgs {
					if err != nil {
						t.Errorf("%s: %v", m.Value, err)
					}
					completed[string(m.Value)]++
				}
			},
		}
		var wg sync.WaitGroup
		var calls sync.WaitGroup
		calls.Add(4)
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for n := 0; ; n++ {
					if n == 3 {
						calls.Done()
					}
					v := fmt.Sprintf("c%d/%d", g, n)
					msgs := []Message{
						{Topic: fmt.Sprintf("t%d-%d", g, n), Value: []byte(v)},
						{Topic: fmt.Sprintf("t%d-%d", g, n), Value: []byte(v + "b")},
						{Topic: "shared", Value: []byte(v + "s")},
					}
					err := w.WriteMessages(context.Background(), msgs...)
					took := acceptedValues(t, msgs, err)
					mu.Lock()
					accepted = append(accepted, took...)
					mu.Unlock()
					if err != nil {
						if n < 3 {
							calls.Done()
						}
						return
					}
				}
			}(g)
		}
		calls.Wait()
		require.NoError(t, w.Close())
		mu.Lock()
		closed = true
		mu.Unlock()
		wg.Wait()
		left := 0
		w.writers.Range(func(_, _ any) bool { left++; return true })
		require.Zero(t, left, "partition writers created after Close")
		mu.Lock()
		for _, v := range accepted {
			require.Equal(t, 1, completed[v], "%s accepted, reported %d times", v, completed[v])
		}
		require.Len(t, completed, len(accepted), "messages reported that no call had accepted")
		mu.Unlock()
	}
}
