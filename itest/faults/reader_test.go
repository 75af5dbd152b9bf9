package faults_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/internal/faultproxy"
	"github.com/segmentio/kafka-go/itest/clustertest"
)

const (
	keyFetch       = 1
	keyListOffsets = 2
)

// The Reader through the same faults: connections closed or reset before
// or after a Fetch (or ListOffsets) reaches the broker. It reconnects and
// goes on from where it was: every record of the partition once, in
// order, and no error reaches ReadMessage.
func TestReaderFaults(t *testing.T) {
	const total = 300
	for _, action := range []faultproxy.Action{faultproxy.CloseBefore, faultproxy.ResetBefore, faultproxy.CloseAfter, faultproxy.ResetAfter} {
		t.Run(action.String(), func(t *testing.T) {
			t.Parallel()
			addrs, _ := clustertest.Start(t)
			topic := clustertest.Topic(t)
			produceWithKgo(t, addrs, topic, total)

			p := newProxy(t)
			p.SetRule(both(every(keyFetch, 3, 5, action), every(keyListOffsets, 2, 1, action)))
			r := kafka.NewReader(kafka.ReaderConfig{
				Brokers:        addrs,
				Topic:          topic,
				Partition:      0,
				Dialer:         &kafka.Dialer{DialFunc: p.Dial, Timeout: 10 * time.Second},
				MaxWait:        50 * time.Millisecond,
				MinBytes:       1,
				MaxBytes:       4 << 10, // small fetches: many requests to break
				ReadBackoffMin: time.Millisecond,
				ReadBackoffMax: 20 * time.Millisecond,
			})
			defer r.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for i := 0; i < total; i++ {
				m, err := r.ReadMessage(ctx)
				if err != nil {
					t.Fatalf("message %d: %v", i, err)
				}
				if m.Offset != int64(i) || string(m.Value) != fmt.Sprintf("v%d", i) {
					t.Fatalf("message %d: offset %d value %q", i, m.Offset, m.Value)
				}
			}
			s := p.Stats()
			if s.Fired[action] < 2 {
				t.Fatalf("the fault struck %d times", s.Fired[action])
			}
			t.Logf("fault struck %d times", s.Fired[action])
		})
	}
}

// produceWithKgo writes total records v0, v1, ... to partition 0 of topic.
func produceWithKgo(t *testing.T, addrs []string, topic string, total int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.AllowAutoTopicCreation(),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := 0; i < total; i++ {
		rec := &kgo.Record{Topic: topic, Partition: 0, Value: []byte(fmt.Sprintf("v%d", i))}
		if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
}
