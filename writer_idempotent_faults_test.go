package kafka

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/segmentio/kafka-go/protocol/initproducerid"
	produceAPI "github.com/segmentio/kafka-go/protocol/produce"
)

// The idempotent Writer against odd answers, a re-entrant Completion, many
// callers with random cancellation, and a producer ID that cannot be had.

// oddTransport wraps an idemBroker and lets a test replace or distort the
// answers to some requests.
type oddTransport struct {
	*idemBroker
	init    func(call int) (Response, error, bool) // handled when the bool is true
	produce func(call int, res Response, err error) (Response, error)
	inits   atomic.Int32
	prods   atomic.Int32
}

func (o *oddTransport) RoundTrip(ctx context.Context, addr net.Addr, req Request) (Response, error) {
	switch req.(type) {
	case *initproducerid.Request:
		n := int(o.inits.Add(1))
		if o.init != nil {
			if res, err, ok := o.init(n); ok {
				return res, err
			}
		}
	case *produceAPI.Request:
		n := int(o.prods.Add(1))
		res, err := o.idemBroker.RoundTrip(ctx, addr, req)
		if o.produce != nil {
			return o.produce(n, res, err)
		}
		return res, err
	}
	return o.idemBroker.RoundTrip(ctx, addr, req)
}

func requireNoDuplicatesInOrder(t *testing.T, log []string) {
	t.Helper()
	seen := map[string]bool{}
	prev := ""
	for _, v := range log {
		require.False(t, seen[v], "%s is in the log twice: %v", v, log)
		seen[v] = true
		require.Less(t, prev, v, "log out of order: %v", log)
		prev = v
	}
}

// A produce answer that does not name the partition, after the broker
// appended the batch: the caller gets an error (the outcome is unknown), no
// panic, and the partition goes on without writing anything twice.
func TestIdempotentWriterAnswerWithoutPartition(t *testing.T) {
	o := &oddTransport{idemBroker: newIdemBroker(map[string]int{"t": 1})}
	o.produce = func(call int, res Response, err error) (Response, error) {
		if call == 2 {
			return &produceAPI.Response{}, nil
		}
		return res, err
	}
	w := newIdemWriter(o.idemBroker)
	w.Transport = o
	defer w.Close()
	ctx := context.Background()
	require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "a", 2)...))
	require.Error(t, w.WriteMessages(ctx, msgsFor(0, "b", 2)...))
	require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "c", 2)...))
	log := o.logOf(tp0)
	requireNoDuplicatesInOrder(t, log)
	assert.Equal(t, append(append(values("a", 2), values("b", 2)...), values("c", 2)...), log)
}

// Odd InitProducerId answers are errors, never a panic nor a session with
// an invalid producer ID; the Writer gets a good one later.
func TestIdempotentWriterOddInitProducerIDAnswers(t *testing.T) {
	answers := []func() (Response, error){
		func() (Response, error) { return nil, nil },
		func() (Response, error) { return &produceAPI.Response{}, nil },
		func() (Response, error) {
			return &initproducerid.Response{ErrorCode: int16(GroupCoordinatorNotAvailable), ProducerID: 7, ProducerEpoch: 0}, nil
		},
		func() (Response, error) { return &initproducerid.Response{ProducerID: -1, ProducerEpoch: 0}, nil },
		func() (Response, error) { return &initproducerid.Response{ProducerID: 5, ProducerEpoch: -3}, nil },
		func() (Response, error) {
			return &initproducerid.Response{ErrorCode: int16(ClusterAuthorizationFailed), ProducerID: -1, ProducerEpoch: -1}, nil
		},
	}
	for i, answer := range answers {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			o := &oddTransport{idemBroker: newIdemBroker(map[string]int{"t": 1})}
			o.init = func(call int) (Response, error, bool) {
				if call == 1 {
					res, err := answer()
					return res, err, true
				}
				return nil, nil, false
			}
			w := newIdemWriter(o.idemBroker)
			w.Transport = o
			w.MaxAttempts = 1
			defer w.Close()
			ctx := context.Background()
			require.Error(t, w.WriteMessages(ctx, msgsFor(0, "a", 1)...))
			require.NoError(t, w.WriteMessages(ctx, msgsFor(0, "b", 1)...))
			for _, sb := range o.sentTo(tp0) {
				require.GreaterOrEqual(t, sb.producerID, int64(0))
				require.GreaterOrEqual(t, sb.producerEpoch, int16(0))
			}
			assert.Equal(t, values("b", 1), o.logOf(tp0))
		})
	}
}

// DUPLICATE_SEQUENCE_NUMBER for the first attempt of a batch (a broker
// that answers so for a batch it never saw) counts as written, as in the
// Java client, and the messages get offset -1 rather than made-up ones.
func TestIdempotentWriterDuplicateOnFirstAttempt(t *testing.T) {
	b := newIdemBroker(map[string]int{"t": 1})
	b.fault = func(call int, tp topicPartition, sb sentBatch) idemFault {
		if call == 1 {
			return idemFault{code: int16(DuplicateSequenceNumber)}
		}
		return idemFault{}
	}
	var got []Message
	var gotErr error
	done := make(chan struct{})
	w := newIdemWriter(b)
	w.Async = true
	w.Completion = func(msgs []Message, err error) {
		got, gotErr = append([]Message(nil), msgs...), err
		close(done)
	}
	require.NoError(t, w.WriteMessages(context.Background(), msgsFor(0, "a", 3)...))
	<-done
	require.NoError(t, w.Close())
	require.NoError(t, gotErr)
	require.Len(t, got, 3)
	for _, m := range got {
		assert.Equal(t, int64(-1), m.Offset)
	}
}

// Every RequiredAcks value but RequireAll and zero is refused, odd ones
// included, before anything is sent, with an error saying what to set.
func TestIdempotentWriterRequiredAcksValues(t *testing.T) {
	for _, acks := range []RequiredAcks{RequireOne, -2, 2, 127} {
		b := newIdemBroker(map[string]int{"t": 1})
		w := newIdemWriter(b)
		w.RequiredAcks = acks
		err := w.WriteMessages(context.Background(), msgsFor(0, "a", 1)...)
		require.Error(t, err, "acks %d", acks)
		require.Contains(t, err.Error(), "set RequiredAcks to RequireAll")
		require.NoError(t, w.Close())
		assert.Empty(t, b.logOf(tp0))
	}
}

// An asynchronous idempotent Writer whose Completion writes again (a retry
// of what failed, then more) with the tightest bounds and lost answers:
// nothing deadlocks, and everything is in the log once, in order.
func TestIdempotentWriterCompletionReenters(t *testing.T) {
	for _, bounded := range []bool{true, false} {
		t.Run(fmt.Sprint("bounded=", bounded), func(t *testing.T) {
			testIdemCompletionReenters(t, bounded)
		})
	}
}

func testIdemCompletionReenters(t *testing.T, bounded bool) {
	b := newIdemBroker(map[string]int{"t": 2})
	b.fault = func(call int, tp topicPartition, sb sentBatch) idemFault {
		switch call % 5 {
		case 1:
			return idemFault{loseReply: true}
		case 3:
			return idemFault{lose: true}
		}
		return idemFault{}
	}
	const rounds = 60
	var w *Writer
	var mu sync.Mutex
	next := map[int]int{}
	var wg sync.WaitGroup
	w = newIdemWriter(b)
	w.Async = true
	w.BatchSize = 1
	if bounded {
		w.MaxBufferedBatches = 1
		w.MaxBufferedBytes = 64
	}
	w.MaxAttempts = 10
	w.Completion = func(msgs []Message, err error) {
		defer wg.Done()
		if err != nil {
			t.Errorf("completion: %v", err)
			return
		}
		p := int(msgs[0].Key[0] - '0')
		mu.Lock()
		i := next[p]
		next[p]++
		mu.Unlock()
		if i+1 < rounds {
			wg.Add(1)
			m := Message{Key: []byte{byte('0' + p)}, Value: []byte(fmt.Sprintf("r-%04d", i+1))}
			if err := w.WriteMessages(context.Background(), m); err != nil {
				wg.Done()
				t.Errorf("write from completion: %v", err)
			}
		}
	}
	for p := 0; p < 2; p++ {
		wg.Add(1)
		require.NoError(t, w.WriteMessages(context.Background(), Message{Key: []byte{byte('0' + p)}, Value: []byte("r-0000")}))
	}
	waitOrFail(t, &wg, 30*time.Second)
	require.NoError(t, w.Close())
	for p := 0; p < 2; p++ {
		log := b.logOf(topicPartition{"t", int32(p)})
		requireNoDuplicatesInOrder(t, log)
		require.Len(t, log, rounds)
	}
}

func waitOrFail(t *testing.T, wg *sync.WaitGroup, d time.Duration) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		buf := make([]byte, 1<<20)
		t.Fatalf("hang:\n%s", buf[:runtime.Stack(buf, true)])
	}
}

// Many synchronous callers with random deadlines, random faults and tight
// bounds: nothing is in the log twice, every message reported written is
// in it, each caller's messages keep their order, and Close releases every
// goroutine.
func TestIdempotentWriterManyCallersRandomCancel(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			before := runtime.NumGoroutine()
			const parts, callers, perCaller = 3, 8, 60
			var rngMu sync.Mutex
			rng := rand.New(rand.NewSource(seed))
			intn := func(n int) int { rngMu.Lock(); defer rngMu.Unlock(); return rng.Intn(n) }
			b := newIdemBroker(map[string]int{"t": parts})
			// Half the runs answer a duplicate with DUPLICATE_SEQUENCE_NUMBER
			// (brokers before 1.0), half with the first copy's offset, and
			// odd seeds refuse a new producer's nonzero sequence.
			b.dupCode = seed%2 == 0
			b.strictNew = seed%2 == 1
			b.fault = func(call int, tp topicPartition, sb sentBatch) idemFault {
				switch x := intn(20); {
				case x < 2:
					return idemFault{lose: true}
				case x < 4:
					return idemFault{loseReply: true}
				case x < 5:
					return idemFault{code: int16(NotLeaderForPartition)}
				case x < 6:
					return idemFault{code: int16(OutOfOrderSequenceNumber)}
				case x < 7:
					return idemFault{code: int16(UnknownProducerId)}
				}
				return idemFault{}
			}
			w := newIdemWriter(b)
			w.BatchSize = 1 + int(seed)
			w.MaxAttempts = 4
			if seed%2 == 0 {
				w.MaxBufferedBatches, w.MaxBufferedBytes = 1, 256
			}
			var mu sync.Mutex
			ok := map[string]bool{}
			var wg sync.WaitGroup
			for c := 0; c < callers; c++ {
				wg.Add(1)
				go func(c int) {
					defer wg.Done()
					p := c % parts
					for i := 0; i < perCaller; i++ {
						ctx, cancel := context.WithTimeout(context.Background(), time.Duration(intn(3000))*time.Microsecond)
						v := fmt.Sprintf("c%d-%04d", c, i)
						err := w.WriteMessages(ctx, Message{Key: []byte{byte('0' + p)}, Value: []byte(v)})
						cancel()
						if err == nil {
							mu.Lock()
							ok[v] = true
							mu.Unlock()
						}
					}
				}(c)
			}
			waitOrFail(t, &wg, 60*time.Second)
			closed := make(chan error)
			go func() { closed <- w.Close() }()
			select {
			case err := <-closed:
				require.NoError(t, err)
			case <-time.After(60 * time.Second):
				t.Fatal("Close hangs")
			}

			inLog := map[string]bool{}
			for p := 0; p < parts; p++ {
				last := map[string]string{}
				for _, v := range b.logOf(topicPartition{"t", int32(p)}) {
					require.False(t, inLog[v], "%s is in the log twice", v)
					inLog[v] = true
					caller := v[:3]
					require.Less(t, last[caller], v, "order of %s", caller)
					last[caller] = v
				}
			}
			for v := range ok {
				require.True(t, inLog[v], "%s reported written, not in the log", v)
			}
			b.mu.Lock()
			require.Zero(t, b.overlaps)
			b.mu.Unlock()
			deadline := time.Now().Add(10 * time.Second)
			for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			require.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines left after Close")
		})
	}
}

// A cluster that never answers InitProducerId: writes fail after their
// attempts, Flush and Close return, and no goroutine is left.
func TestIdempotentWriterInitProducerIDNeverAnswers(t *testing.T) {
	before := runtime.NumGoroutine()
	o := &oddTransport{idemBroker: newIdemBroker(map[string]int{"t": 2})}
	o.init = func(call int) (Response, error, bool) {
		return nil, errors.New("unreachable"), false
	}
	stall := &stallInit{oddTransport: o}
	w := newIdemWriter(o.idemBroker)
	w.Transport = stall
	w.WriteTimeout = 30 * time.Millisecond
	w.MaxAttempts = 2
	w.Async = true
	var failed atomic.Int32
	w.Completion = func(msgs []Message, err error) {
		if err != nil {
			failed.Add(int32(len(msgs)))
		}
	}
	ctx := context.Background()
	require.NoError(t, w.WriteMessages(ctx, append(msgsFor(0, "a", 3), msgsFor(1, "b", 3)...)...))
	require.NoError(t, w.Flush(ctx))
	require.NoError(t, w.Close())
	assert.Equal(t, int32(6), failed.Load())
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines left after Close")
}

type stallInit struct{ *oddTransport }

func (s *stallInit) RoundTrip(ctx context.Context, addr net.Addr, req Request) (Response, error) {
	if _, ok := req.(*initproducerid.Request); ok {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.oddTransport.RoundTrip(ctx, addr, req)
}
