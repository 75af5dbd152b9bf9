package kafka

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	produceAPI "github.com/segmentio/kafka-go/protocol/produce"
)

// delayLogger collects the delays the Writer says it backs off for.
type delayLogger struct {
	mu     sync.Mutex
	delays []string
}

func (l *delayLogger) Printf(format string, args ...interface{}) {
	msg := fmt.Sprintf(format, args...)
	if rest, ok := strings.CutPrefix(msg, "backing off "); ok {
		l.mu.Lock()
		l.delays = append(l.delays, strings.Fields(rest)[0])
		l.mu.Unlock()
	}
}

// The Writer waits before retry n (n ≥ 1) n² × WriteBackoffMin, capped at
// WriteBackoffMax, as v0.4.51's Writer does (it paces its retries with the
// package's backoff, as the Reader does; the first try never waits). The
// Writer's own copy that backoff replaced differed only for attempt 0,
// where it gave WriteBackoffMax; the Writer never asks for attempt 0.
func TestWriterRetryDelays(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 1})
	retriable := int16(NotLeaderForPartition)
	stub.produceErrors[topicPartition{"t", 0}] = []int16{retriable, retriable, retriable}
	log := new(delayLogger)
	w := &Writer{
		Addr:            TCP("stub:9092"),
		Topic:           "t",
		Transport:       stub,
		MaxAttempts:     4,
		RequiredAcks:    RequireOne,
		BatchSize:       1,
		WriteBackoffMin: time.Millisecond,
		WriteBackoffMax: 5 * time.Millisecond,
		Logger:          log,
	}
	defer w.Close()
	if err := w.WriteMessages(testContext(t), Message{Value: []byte("v")}); err != nil {
		t.Fatal(err)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if got, want := strings.Join(log.delays, " "), "1ms 4ms 5ms"; got != want {
		t.Fatalf("delays %q, want %q", got, want)
	}
}

// A broker that holds the first Produce past WriteTimeout, then appends it:
// the Writer sends nothing more for the partition until the broker answered
// it, so the retry's copy lands right after the first, not after later
// messages; also when the Transport's idle connections are closed meanwhile
// (another user of a shared Transport), which must not cut the connection
// the partition waits on.
func TestWriterHeldAttemptAnsweredBeforeRetry(t *testing.T) {
	for _, closeIdle := range []bool{false, true} {
		t.Run(fmt.Sprintf("closeIdle=%v", closeIdle), func(t *testing.T) {
			fc := fakebroker.New(t, 1)
			fc.SetLeader(0, 1)
			var mu sync.Mutex
			var log []string
			first, heldDone := make(chan struct{}), make(chan struct{})
			var n int
			fc.SetHandler(func(r *fakebroker.Request) {
				req, ok := r.Msg.(*produceAPI.Request)
				if !ok {
					return
				}
				mu.Lock()
				n++
				held := n == 1
				mu.Unlock()
				if held {
					close(first)
					time.Sleep(2 * time.Second) // busy with it; appends it anyway
				}
				mu.Lock()
				log = append(log, decodeProduceRequest(t, req)[0]...)
				mu.Unlock()
				if held {
					close(heldDone)
				}
				answerProduce(r, func(int32) int16 { return 0 })
			})
			tr := &Transport{}
			defer tr.CloseIdleConnections()
			w := &Writer{Addr: fc.Addr(), Topic: "t", Transport: tr, RequiredAcks: RequireAll, BatchSize: 1,
				WriteTimeout: 300 * time.Millisecond, WriteBackoffMin: time.Millisecond, WriteBackoffMax: 5 * time.Millisecond}
			defer w.Close()
			if closeIdle {
				go func() {
					<-first
					time.Sleep(500 * time.Millisecond) // past the Writer's WriteTimeout
					tr.CloseIdleConnections()
				}()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for i := 0; i < 4; i++ {
				if err := w.WriteMessages(ctx, Message{Value: []byte(strconv.Itoa(i))}); err != nil {
					t.Fatalf("message %d: %v", i, err)
				}
			}
			<-heldDone // the held request is in the log, wherever it landed
			mu.Lock()
			defer mu.Unlock()
			runs := slices.Compact(slices.Clone(log))
			if !slices.Equal(runs, []string{"0", "1", "2", "3"}) {
				t.Fatalf("broker log %v: a copy landed after later messages", log)
			}
		})
	}
}
