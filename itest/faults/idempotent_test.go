package faults_test

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/internal/faultproxy"
	"github.com/segmentio/kafka-go/itest/clustertest"
)

const keyInitProducerID = 22

// The idempotent Writer through the proxy, in every mode: the first
// InitProducerId answers are lost after the broker handed out a producer
// ID (the Writer asks again and uses the ID it gets), and produce answers
// are lost after the append, or requests reset before it. Every accepted
// message is in the log once (no run of duplicates at all, whatever was
// lost), in order per producer, and none fails.
func TestIdempotentWriterThroughProxy(t *testing.T) {
	for _, m := range allModes() {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			const producers, perProducer = 3, 40
			addrs, _ := clustertest.Start(t)
			topic := clustertest.Topic(t)
			ensureTopic(t, addrs, topic, false)
			p := newProxy(t)
			p.SetRule(both(
				every(keyInitProducerID, 1, 2, faultproxy.CloseAfter),
				every(keyProduce, 3, 6, faultproxy.CloseAfter),
				every(keyProduce, 5, 4, faultproxy.ResetBefore),
			))
			l := newLedger()
			w := newWriter(addrs, topic, p, m, l, false)
			w.Idempotent = true
			rng := rand.New(rand.NewSource(int64(len(t.Name()))))
			for producer := 0; producer < producers; producer++ {
				produceKeys(t, w, l, producer, perProducer, rng, false)
			}
			if err := w.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			s := p.Stats()
			if s.Unanswered[keyProduce] == 0 || s.Unanswered[keyInitProducerID] == 0 {
				t.Fatalf("faults did not strike: %+v", s)
			}
			v := check(t, l, readLog(t, addrs, topic), 0)
			if n := l.count(failed); n != 0 {
				t.Errorf("%d messages failed: %v", n, l.failures)
			}
			if n := l.count(delivered) + l.count(unknownOutcome); n != producers*perProducer {
				t.Errorf("%d messages accepted, want %d", n, producers*perProducer)
			}
			t.Logf("%d produce answers lost, %d InitProducerId answers lost; %v", s.Unanswered[keyProduce], s.Unanswered[keyInitProducerID], v)
		})
	}
}

// A produce attempt the broker holds past WriteTimeout is given up, but
// its connection is kept until the broker answers it (within
// max(10 s, 2 x WriteTimeout)), and the partition sends nothing meanwhile:
// the broker would work on a retry sent on another connection side by side
// with the held one, and could append the held one after the retry and
// after the messages that followed. So the retry's copy comes right after
// the first (without Idempotent), or is not appended (with it).
func TestWriterAttemptHeldPastWriteTimeout(t *testing.T) {
	for _, idempotent := range []bool{false, true} {
		t.Run(fmt.Sprintf("idempotent=%v", idempotent), func(t *testing.T) {
			addrs, c := clustertest.Start(t, kfake.NumBrokers(1), kfake.DefaultNumPartitions(1))
			topic := clustertest.Topic(t)
			ensureTopic(t, addrs, topic, false)
			released := make(chan struct{})
			var produces atomic.Int32
			c.ControlKey(keyProduce, func(kmsg.Request) (kmsg.Response, error, bool) {
				c.KeepControl()
				if produces.Add(1) == 1 {
					// The first attempt waits at the broker well past
					// the Writer's WriteTimeout, then is appended.
					c.SleepControl(func() {
						time.Sleep(3 * time.Second)
						close(released)
					})
				}
				return nil, nil, false
			})
			w := &kafka.Writer{
				Addr:            kafka.TCP(addrs...),
				Topic:           topic,
				RequiredAcks:    kafka.RequireAll,
				BatchSize:       1,
				WriteTimeout:    time.Second,
				WriteBackoffMin: time.Millisecond,
				Idempotent:      idempotent,
			}
			defer w.Close()
			ctx := context.Background()
			for i := 0; i < 3; i++ {
				if err := w.WriteMessages(ctx, kafka.Message{Value: newValue(0, i)}); err != nil {
					t.Fatalf("message %d: %v", i, err)
				}
			}
			<-released
			if err := w.WriteMessages(ctx, kafka.Message{Value: newValue(0, 3)}); err != nil {
				t.Fatalf("message 3: %v", err)
			}
			var got []int
			for _, r := range readLog(t, addrs, topic)[0] {
				got = append(got, r.id.seq)
			}
			var first []int
			seen := map[int]bool{}
			for _, s := range got {
				if !seen[s] {
					seen[s] = true
					first = append(first, s)
				}
			}
			if !slices.Equal(first, []int{0, 1, 2, 3}) {
				t.Fatalf("log %v: first copies %v, want 0 1 2 3", got, first)
			}
			if produces.Load() < 5 {
				t.Fatalf("%d produce requests: the first attempt was not sent again", produces.Load())
			}
			if idempotent && len(got) != 4 {
				t.Fatalf("idempotent: log %v, want every message once", got)
			}
			if runs := slices.Compact(slices.Clone(got)); !slices.Equal(runs, []int{0, 1, 2, 3}) {
				t.Fatalf("log %v: a copy of a message is not right after the previous one", got)
			}
			t.Logf("log %v", got)
		})
	}
}
