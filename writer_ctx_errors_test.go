package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	metadataAPI "github.com/segmentio/kafka-go/protocol/metadata"
)

// slowMetadata holds the Metadata requests for topic "slow" until their
// context ends and then fails them the way the Transport does (ctxError:
// the bare error for a cancel, a wrapped one for a deadline); everything
// else goes to the stub.
type slowMetadata struct {
	*stubBroker
	entered chan struct{}
}

func (s *slowMetadata) RoundTrip(ctx context.Context, addr net.Addr, req Request) (Response, error) {
	if r, ok := req.(*metadataAPI.Request); ok && len(r.TopicNames) == 1 && r.TopicNames[0] == "slow" {
		select {
		case s.entered <- struct{}{}:
		default:
		}
		<-ctx.Done()
		return nil, ctxError(ctx, fmt.Errorf("read tcp: %w", errTestTimeout{}))
	}
	return s.stubBroker.RoundTrip(ctx, addr, req)
}

type errTestTimeout struct{}

func (errTestTimeout) Error() string { return "i/o timeout" }
func (errTestTimeout) Timeout() bool { return true }

// Every way a ctx can end a Writer call gives an error that errors.Is
// matches with the ctx's own error, with or without a bound, sync or async;
// and the default (unbounded) Writer returns ctx.Err() itself when ctx ends
// during the partition lookup, as v0.4.51 does, so that `err == ctx.Err()`
// and a type switch on WriteErrors keep working.
func TestWriterContextErrorsAsCallerSees(t *testing.T) {
	// Each ctx ends when the test says so (end), not at a time: a deadline
	// that passed while the machine was busy would end the call elsewhere.
	ends := []error{context.Canceled, context.DeadlineExceeded}
	type place struct {
		name     string
		bounded  bool // the place exists only with a bound
		syncOnly bool // the place exists only in synchronous mode
		// run starts the call with ctx on a fresh Writer and returns once
		// the call waits where it should (or has returned).
		run func(t *testing.T, w *Writer, stub *stubBroker, ctx context.Context) <-chan error
	}
	places := []place{
		{name: "lookup", run: func(t *testing.T, w *Writer, stub *stubBroker, ctx context.Context) <-chan error {
			w.Topic = "slow"
			errc := make(chan error, 1)
			go func() { errc <- w.WriteMessages(ctx, seqMessages("p0", 0, 2)...) }()
			<-w.Transport.(*slowMetadata).entered
			return errc
		}},
		{name: "lookup-backoff", run: func(t *testing.T, w *Writer, stub *stubBroker, ctx context.Context) <-chan error {
			stub.mu.Lock()
			stub.metaErrors["t"] = []int16{int16(LeaderNotAvailable), int16(LeaderNotAvailable)}
			stub.mu.Unlock()
			w.WriteBackoffMin, w.WriteBackoffMax = time.Hour, time.Hour
			errc := make(chan error, 1)
			go func() { errc <- w.WriteMessages(ctx, seqMessages("p0", 0, 2)...) }()
			eventually(t, "the lookup retried once", func() bool {
				stub.mu.Lock()
				defer stub.mu.Unlock()
				return len(stub.metaErrors["t"]) == 1
			})
			return errc
		}},
		{name: "space", bounded: true, run: func(t *testing.T, w *Writer, stub *stubBroker, ctx context.Context) <-chan error {
			stub.block()
			fill(t, w, 3) // N+2 batches of one message
			errc := make(chan error, 1)
			go func() { errc <- w.WriteMessages(ctx, seqMessages("p0", 3, 4)...) }()
			eventually(t, "caller waiting for space", func() bool { return slotWaiters(w, topicPartition{"t", 0}) == 1 })
			return errc
		}},
		{name: "acknowledgement", syncOnly: true, run: func(t *testing.T, w *Writer, stub *stubBroker, ctx context.Context) <-chan error {
			stub.block()
			errc := make(chan error, 1)
			go func() { errc <- w.WriteMessages(ctx, seqMessages("p0", 0, 1)...) }()
			eventually(t, "request held", func() bool { return stub.heldCount(topicPartition{"t", 0}) == 1 })
			return errc
		}},
		{name: "flush", run: func(t *testing.T, w *Writer, stub *stubBroker, ctx context.Context) <-chan error {
			stub.block()
			fill(t, w, 1)
			errc := make(chan error, 1)
			go func() { errc <- w.Flush(ctx) }()
			eventually(t, "request held", func() bool { return stub.heldCount(topicPartition{"t", 0}) == 1 })
			return errc
		}},
	}

	for _, pl := range places {
		for _, bounded := range []bool{false, true} {
			if pl.bounded && !bounded {
				continue
			}
			for _, async := range []bool{false, true} {
				if pl.syncOnly && async {
					continue
				}
				for _, end := range ends {
					name := fmt.Sprintf("%s/bounded=%v/async=%v/%v", pl.name, bounded, async, end)
					t.Run(name, func(t *testing.T) {
						stub := newStubBroker(map[string]int{"t": 1, "slow": 1})
						w := &Writer{
							Addr: TCP("stub"), Topic: "t", Transport: &slowMetadata{stubBroker: stub, entered: make(chan struct{}, 1)},
							BatchSize: 1, Async: async, RequiredAcks: RequireOne, WriteTimeout: time.Hour,
						}
						if bounded {
							w.MaxBufferedBatches = 1
						}
						defer shutdown(w, stub)
						ctx := newEndingContext()
						errc := pl.run(t, w, stub, ctx)
						ctx.end(end)
						err := <-errc
						cause := ctx.Err()
						if !errors.Is(err, cause) {
							t.Fatalf("err = %v (%T), want one matching %v", err, err, cause)
						}
						lookup := pl.name == "lookup" || pl.name == "lookup-backoff"
						var nae *NotAcceptedError
						switch {
						case lookup && !bounded && err != cause:
							t.Fatalf("err = %#v, want ctx.Err() itself, as v0.4.51", err)
						case lookup && bounded && !errors.As(err, &nae):
							t.Fatalf("err = %v, want a *NotAcceptedError from a bounded Writer", err)
						case pl.name == "acknowledgement" && err != cause:
							t.Fatalf("err = %#v, want ctx.Err() itself (accepted, outcome unknown)", err)
						}
					})
				}
			}
		}
	}
}

// fill makes the Writer hold n one-message batches of partition t/0 (the
// stub holding every request), from goroutines of their own since a
// synchronous call waits for its batch.
func fill(t *testing.T, w *Writer, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		go w.WriteMessages(context.Background(), seqMessages("p0", i, i+1)...)
	}
	eventually(t, "partition holds the batches", func() bool {
		pw := partitionWriterOf(w, topicPartition{"t", 0})
		if pw == nil {
			return false
		}
		_, alive := pw.bufferState()
		return alive == n
	})
}

// endingContext is a context that ends when end is called, with the error
// given: context.DeadlineExceeded stands for a deadline that passed at that
// moment.
type endingContext struct {
	context.Context
	done chan struct{}
	err  atomic.Value
}

func newEndingContext() *endingContext {
	return &endingContext{Context: context.Background(), done: make(chan struct{})}
}

func (c *endingContext) end(err error) {
	c.err.Store(err)
	close(c.done)
}

func (c *endingContext) Done() <-chan struct{} { return c.done }

func (c *endingContext) Err() error {
	if err, ok := c.err.Load().(error); ok {
		return err
	}
	return nil
}
