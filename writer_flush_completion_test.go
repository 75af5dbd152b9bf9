package kafka

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// flushCounts is what one Writer's Completion has reported, counted inside
// Completion before it returns.
type flushCounts struct {
	accepted  atomic.Int64 // messages whose async WriteMessages returned nil
	completed atomic.Int64 // messages Completion reported, written or failed
}

// Flush, as a program uses it to checkpoint: async Writers on three topics
// (two per topic), a broker that answers every fourth Produce request with
// a retriable error, producers writing all along, and Flush called every
// few milliseconds. After each Flush, every message accepted before it has
// reached Completion, and that Completion call has returned.
func TestWriterFlushWaitsForCompletion(t *testing.T) {
	stub := newStubBroker(map[string]int{"a": 3, "b": 2, "c": 1})
	stub.failEvery, stub.failCode = 4, int16(NotLeaderForPartition)
	const writers, perWriter = 6, 1500
	topics := []string{"a", "b", "c"}
	counts := make([]*flushCounts, writers)
	ws := make([]*Writer, writers)
	for i := range ws {
		c := &flushCounts{}
		counts[i] = c
		ws[i] = &Writer{
			Addr: TCP("stub"), Topic: topics[i%len(topics)], Transport: stub, Async: true,
			RequiredAcks: RequireAll, BatchSize: 7, BatchTimeout: 5 * time.Millisecond,
			MaxAttempts: 50, WriteBackoffMin: time.Millisecond, WriteBackoffMax: time.Millisecond,
			Completion: func(msgs []Message, err error) {
				// A Completion that takes a moment, as one that updates
				// a database does: the window a Flush must not miss.
				time.Sleep(200 * time.Microsecond)
				c.completed.Add(int64(len(msgs)))
			},
		}
	}
	defer func() {
		for _, w := range ws {
			w.Close()
		}
	}()

	var producers sync.WaitGroup
	for i, w := range ws {
		producers.Add(1)
		go func() {
			defer producers.Done()
			for j := 0; j < perWriter; j++ {
				if err := w.WriteMessages(context.Background(), Message{Value: []byte(fmt.Sprint(j))}); err != nil {
					t.Errorf("writer %d: %v", i, err)
					return
				}
				counts[i].accepted.Add(1)
				if j%5 == 0 {
					time.Sleep(time.Millisecond) // let the flushes interleave with the writes
				}
			}
		}()
	}
	stop := make(chan struct{})
	go func() { producers.Wait(); close(stop) }()

	flushes := 0
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard, not a measure
	defer cancel()
	for done := false; !done; flushes++ {
		select {
		case <-stop:
			done = true // one last Flush after the producers are done
		case <-time.After(2 * time.Millisecond):
		}
		for i, w := range ws {
			before := counts[i].accepted.Load()
			if err := w.Flush(ctx); err != nil {
				t.Fatalf("flush %d of writer %d: %v", flushes, i, err)
			}
			if got := counts[i].completed.Load(); got < before {
				t.Fatalf("flush %d of writer %d returned with %d messages through Completion, %d accepted before it", flushes, i, got, before)
			}
		}
	}
	for i := range ws {
		if a, c := counts[i].accepted.Load(), counts[i].completed.Load(); a != perWriter || c != perWriter {
			t.Fatalf("writer %d: %d accepted, %d completed, want %d", i, a, c, perWriter)
		}
	}
	t.Logf("%d rounds of Flush over %d writers", flushes, writers)
}

// Flush called from Completion, by every partition of several Writers at
// once, returns (no Completion waits for another's), and returns only once
// every message its Writer accepted before it is acknowledged: the broker
// has it.
func TestWriterFlushFromEveryCompletion(t *testing.T) {
	topics := []string{"a", "b", "c", "d"}
	stub := newStubBroker(map[string]int{"a": 3, "b": 2, "c": 1, "d": 2})
	stub.failEvery, stub.failCode = 5, int16(NotLeaderForPartition)
	const writers, perWriter = 4, 200
	accepted := make([]atomic.Int64, writers)
	var flushErrs, short atomic.Int64
	var firstErr atomic.Value
	ws := make([]*Writer, writers)
	for i := range ws {
		var w *Writer
		w = &Writer{
			Addr: TCP("stub"), Topic: topics[i], Transport: stub, Async: true,
			RequiredAcks: RequireAll, BatchSize: 5, BatchTimeout: 2 * time.Millisecond,
			MaxAttempts: 50, WriteBackoffMin: time.Millisecond, WriteBackoffMax: time.Millisecond,
			MaxBufferedBatches: 2,
			Completion: func(msgs []Message, err error) {
				if flushErrs.Load() > 0 {
					return // failed already: do not wait out every guard
				}
				before := accepted[i].Load()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a deadlock turns into an error
				defer cancel()
				if err := w.Flush(ctx); err != nil {
					flushErrs.Add(1)
					firstErr.CompareAndSwap(nil, err)
					return
				}
				if int64(stub.topicRecords(topics[i])) < before {
					short.Add(1)
				}
			},
		}
		ws[i] = w
	}
	var producers sync.WaitGroup
	for i, w := range ws {
		producers.Add(1)
		go func() {
			defer producers.Done()
			for j := 0; j < perWriter; j++ {
				if err := w.WriteMessages(context.Background(), Message{Value: []byte(fmt.Sprint(j))}); err != nil {
					t.Errorf("writer %d: %v", i, err)
					return
				}
				accepted[i].Add(1)
			}
		}()
	}
	producers.Wait()
	// Flush (from here, it waits for the Completion calls) before Close,
	// which would make the Flush calls of the last Completions fail with
	// io.ErrClosedPipe.
	for _, w := range ws {
		if err := w.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if n := flushErrs.Load(); n != 0 {
		t.Fatalf("%d Flush calls from Completion failed (a deadlock ends with the context): %v", n, firstErr.Load())
	}
	if n := short.Load(); n != 0 {
		t.Fatalf("%d Flush calls from Completion returned before the messages accepted before them reached the broker", n)
	}
	if got := stub.totalRecords(); got != writers*perWriter {
		t.Fatalf("%d records on the broker, want %d", got, writers*perWriter)
	}
}

func (s *stubBroker) topicRecords(topic string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for tp, recs := range s.log {
		if tp.topic == topic {
			n += len(recs)
		}
	}
	return n
}

// A partition's Completion calls come in the order of its batches, however
// quickly the broker answers: the next batch is sent as soon as one is
// answered, so its answer can come back before the earlier batch's
// Completion is queued, unless queuing is part of recording the answer.
// Offsets, which the stub broker hands out in the order it appends, must
// rise from one call to the next. Several Writers side by side keep the
// scheduler switching between their sinks.
func TestWriterCompletionsInBatchOrder(t *testing.T) {
	stub := newStubBroker(map[string]int{"a": 1, "b": 1, "c": 1, "d": 1})
	topics := []string{"a", "b", "c", "d"}
	const perWriter = 3000
	var outOfOrder atomic.Int64
	var firstBad atomic.Value
	ws := make([]*Writer, len(topics))
	var completed sync.WaitGroup
	for i := range ws {
		last := int64(-1)
		completed.Add(perWriter)
		ws[i] = &Writer{
			Addr: TCP("stub"), Topic: topics[i], Transport: stub, Async: true,
			RequiredAcks: RequireOne, BatchSize: 1, BatchTimeout: time.Millisecond,
			Completion: func(msgs []Message, err error) {
				if err != nil {
					firstBad.CompareAndSwap(nil, fmt.Sprintf("topic %s: %v", topics[i], err))
					outOfOrder.Add(1)
				}
				for _, m := range msgs {
					if m.Offset <= last {
						firstBad.CompareAndSwap(nil, fmt.Sprintf("topic %s: offset %d after %d", topics[i], m.Offset, last))
						outOfOrder.Add(1)
					}
					last = m.Offset
					completed.Done()
				}
			},
		}
	}
	defer func() {
		for _, w := range ws {
			w.Close()
		}
	}()
	var producers sync.WaitGroup
	for _, w := range ws {
		producers.Add(1)
		go func() {
			defer producers.Done()
			for j := 0; j < perWriter; j++ {
				if err := w.WriteMessages(context.Background(), Message{Value: []byte(fmt.Sprint(j))}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	producers.Wait()
	done := make(chan struct{})
	go func() { completed.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute): // a guard, not a measure
		t.Fatal("not every message reached Completion")
	}
	if n := outOfOrder.Load(); n > 0 {
		t.Fatalf("%d Completion calls out of batch order or failed; first: %v", n, firstBad.Load())
	}
}
