package faults_test

import (
	"math/rand"
	"testing"

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
