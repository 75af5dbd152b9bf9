package kafka

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
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
