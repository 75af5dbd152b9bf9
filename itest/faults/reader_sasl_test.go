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
	"github.com/segmentio/kafka-go/sasl/plain"
)

const keySaslAuth = 36

// A Reader on a SASL cluster whose connections are lost, some of them in
// the middle of the SASL exchange (before the broker answers
// SaslAuthenticate): a connection lost there is a lost connection like any
// other, not a refused login; the Reader reconnects and no error reaches
// ReadMessage.
func TestReaderFaultsDuringSASL(t *testing.T) {
	const total = 200
	addrs, _ := clustertest.StartSASL(t)
	topic := clustertest.Topic(t)
	cl, err := kgo.NewClient(append(kgoSASL(t), kgo.SeedBrokers(addrs...), kgo.AllowAutoTopicCreation(),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := 0; i < total; i++ {
		rec := &kgo.Record{Topic: topic, Partition: 0, Value: []byte(fmt.Sprintf("v%d", i))}
		if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	cl.Close()

	p := newProxy(t)
	p.SetRule(both(
		every(keySaslAuth, 2, 3, faultproxy.CloseBefore),
		every(keyFetch, 3, 4, faultproxy.CloseAfter),
	))
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:   addrs,
		Topic:     topic,
		Partition: 0,
		Dialer: &kafka.Dialer{DialFunc: p.Dial, Timeout: 10 * time.Second,
			SASLMechanism: plain.Mechanism{Username: clustertest.PlainUser, Password: clustertest.PlainSecret}},
		MaxWait:        50 * time.Millisecond,
		MinBytes:       1,
		MaxBytes:       2 << 10,
		ReadBackoffMin: time.Millisecond,
		ReadBackoffMax: 20 * time.Millisecond,
	})
	defer r.Close()
	for i := 0; i < total; i++ {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if m.Offset != int64(i) || string(m.Value) != fmt.Sprintf("v%d", i) {
			t.Fatalf("message %d: offset %d value %q", i, m.Offset, m.Value)
		}
	}
	if s := p.Stats(); s.Fired[faultproxy.CloseBefore] < 2 {
		t.Fatalf("the SASL fault struck %d times", s.Fired[faultproxy.CloseBefore])
	}
}
