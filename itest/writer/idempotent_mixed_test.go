package writer_test

import (
	"context"
	"encoding/binary"
	"math/rand"
	"sync"
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/itest/clustertest"
	"github.com/segmentio/kafka-go/itest/internal/kgocheck"
)

// The hardest mix for the idempotent Writer on the embedded cluster: every
// fault kind at random (answers lost after the append, answers cut, requests
// cut, leaders moved), few attempts so that batches also fail for good
// after having been appended (their outcome unknown) and the broker then
// refuses later sequences, tight bounds, and several goroutines writing.
// Whatever happens: nothing is in the log twice, each partition keeps the
// order of acceptance, every message reported written is in the log, and
// every accepted message is reported exactly once.
func TestIdempotentWriterMixedFaultsFewAttempts(t *testing.T) {
	for _, seed := range []int64{3, 11} {
		addrs, c := clustertest.Start(t)
		topic := clustertest.Topic(t)
		kgocheck.Metadata(t, addrs, topic)

		plan := &faultPlan{rng: rand.New(rand.NewSource(seed)), rate: 0.25, cluster: c, topic: topic,
			mix: []faultAction{loseAnswer, cutAnswer, cutRequest, moveThenLose}}
		var mu sync.Mutex
		reports := map[int]int{}
		written := map[int]bool{}
		w := &kafka.Writer{
			Addr:               kafka.TCP(addrs...),
			Topic:              topic,
			Transport:          &kafka.Transport{Dial: plan.dial},
			Async:              true,
			Idempotent:         true,
			RequiredAcks:       kafka.RequireAll,
			BatchSize:          7,
			BatchTimeout:       time.Millisecond,
			MaxBufferedBatches: 1,
			MaxBufferedBytes:   4096,
			MaxAttempts:        2,
			WriteBackoffMin:    time.Millisecond,
			WriteBackoffMax:    5 * time.Millisecond,
			Completion: func(msgs []kafka.Message, err error) {
				mu.Lock()
				defer mu.Unlock()
				for _, m := range msgs {
					s := int(binary.BigEndian.Uint64(m.Value))
					reports[s]++
					if err == nil {
						written[s] = true
					}
				}
			},
		}
		// Writer g writes the sequence numbers g, g+writers, g+2*writers...
		// with keys of its own, so that order per partition is order per
		// writer within each key's partition.
		const writers, per = 4, 400
		var wg sync.WaitGroup
		for g := 0; g < writers; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for i := 0; i < per; i++ {
					s := g + i*writers
					v := make([]byte, 16)
					binary.BigEndian.PutUint64(v, uint64(s))
					if err := w.WriteMessages(context.Background(), kafka.Message{Key: []byte{byte(g)}, Value: v}); err != nil {
						t.Errorf("write %d: %v", s, err)
						return
					}
				}
			}(g)
		}
		wg.Wait()
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		const total = writers * per
		if len(reports) != total {
			t.Fatalf("seed %d: %d of %d messages reported", seed, len(reports), total)
		}
		for s, n := range reports {
			if n != 1 {
				t.Fatalf("seed %d: message %d reported %d times", seed, s, n)
			}
		}
		log := logOf(t, addrs, topic, len(written))
		dups, _, _ := audit(log, total)
		inLog := map[int]bool{}
		disorder := 0
		for _, seqs := range log {
			last := map[int]int{}
			for _, s := range seqs {
				inLog[s] = true
				if prev, ok := last[s%writers]; ok && s <= prev {
					disorder++
				}
				last[s%writers] = s
			}
		}
		for s := range written {
			if !inLog[s] {
				t.Fatalf("seed %d: message %d reported written, not in the log", seed, s)
			}
		}
		t.Logf("seed %d: %d faults of %d produce requests; %d written, %d failed; log: %d messages, %d duplicates, %d out of order",
			seed, plan.faults.Load(), plan.produces.Load(), len(written), total-len(written), len(inLog), dups, disorder)
		if dups != 0 || disorder != 0 {
			t.Fatalf("seed %d: %d duplicates, %d out of order", seed, dups, disorder)
		}
	}
}
