package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Writer.Flush and BatchTimeout: partial batches sent now, and everything
// accepted before the call waited for, from Completion too.

func TestWriterFlush(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 2})
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, Balancer: keyBalancer,
		BatchSize: 1000, BatchTimeout: time.Hour, Async: true, RequiredAcks: RequireOne,
	}
	defer shutdown(w, stub)
	msgs := append(seqMessages("p0", 0, 5), seqMessages("p1", 0, 3)...)
	if err := w.WriteMessages(context.Background(), msgs...); err != nil {
		t.Fatal(err)
	}
	if stub.totalRecords() != 0 {
		t.Fatal("batches sent before their timeout or Flush")
	}
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Flush returned: everything accepted before it is acknowledged.
	assertInOrder(t, stub.records(topicPartition{"t", 0}), 0, 5)
	assertInOrder(t, stub.records(topicPartition{"t", 1}), 0, 3)

	// A stuck broker: Flush gives up with ctx, the batch is still sent.
	stub.block()
	if err := w.WriteMessages(context.Background(), seqMessages("p0", 5, 6)...); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := w.Flush(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("flush on a stuck broker: %v", err)
	}
	stub.release()
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	assertInOrder(t, stub.records(topicPartition{"t", 0}), 0, 6)
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
				Completion: func(msgs []Message, _ error) {
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
					err := w.Flush(ctx)
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

// A caller waiting for space does not stop the partition's BatchTimeout:
// the byte budget is used up by a partial batch that only BatchTimeout will
// send; while the caller waits, that batch reaches the broker (held there,
// so the caller stays waiting until we release it), and then the caller
// gets in.
func TestWriterBatchTimeoutSendsWhileCallerWaits(t *testing.T) {
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

// A Flush racing Close either says the Writer is closed or returns once
// what was accepted before it is acknowledged: it must not find the
// partitions already handed to Close and return at once, with nothing
// acknowledged yet. The window (between Flush's look at closed and its
// list of partitions) is narrow: these rounds find it only now and then,
// at once when a runtime.Gosched widens it.
func TestWriterFlushRacingCloseWaitsForAcks(t *testing.T) {
	const parts = 8
	early := 0
	for round := 0; round < 1000 && early == 0; round++ {
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
		flushed := make(chan int, 1)
		started := make(chan struct{})
		go func() {
			close(started)
			if err := w.Flush(context.Background()); err != nil {
				if !errors.Is(err, io.ErrClosedPipe) {
					t.Errorf("Flush: %v", err)
				}
				flushed <- -1
				return
			}
			flushed <- stub.totalRecords()
		}()
		<-started
		require.NoError(t, w.Close())
		if n := <-flushed; n >= 0 && n != parts {
			t.Errorf("round %d: Flush returned nil with %d of %d accepted messages written", round, n, parts)
			early++
		}
	}
}
