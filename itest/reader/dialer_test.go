package reader

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	kplain "github.com/twmb/franz-go/pkg/sasl/plain"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/itest/clustertest"
	"github.com/segmentio/kafka-go/sasl/plain"
)

// The Reader's Dialer applies to all its connections: SASL, client ID and
// a custom DialFunc, for partition and group readers alike. (SCRAM is
// covered by the sasl packages; its dependency is not in this module.)
func TestReaderDialerSASL(t *testing.T) {
	addrs, _ := clustertest.StartSASL(t)
	const topic = "sasl-topic"
	producer := newProducer(t, addrs, kgo.SASL(kplain.Auth{User: clustertest.PlainUser, Pass: clustertest.PlainSecret}.AsMechanism()), kgo.AllowAutoTopicCreation())
	produce(t, producer, topic, 1, 10)

	var dials atomic.Int64
	for name, dialer := range map[string]*kafka.Dialer{
		"plain": {ClientID: "reader-test", SASLMechanism: plain.Mechanism{Username: clustertest.PlainUser, Password: clustertest.PlainSecret}, Timeout: 5 * time.Second},
		"plain-dialfunc": {
			ClientID:      "reader-test",
			SASLMechanism: plain.Mechanism{Username: clustertest.PlainUser, Password: clustertest.PlainSecret},
			DialFunc: func(ctx context.Context, network, address string) (net.Conn, error) {
				dials.Add(1)
				var d net.Dialer
				return d.DialContext(ctx, network, address)
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := ctxTimeout(t, 30*time.Second)
			r := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: topic, Dialer: dialer, MaxWait: 100 * time.Millisecond})
			for i := 0; i < 10; i++ {
				if m, err := r.FetchMessage(ctx); err != nil || m.Offset != int64(i) {
					t.Fatalf("partition reader: %d %v", m.Offset, err)
				}
			}
			if st := r.Stats(); st.ClientID != "reader-test" {
				t.Fatalf("client ID %q", st.ClientID)
			}
			r.Close()

			g := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, GroupID: "sasl-" + name, Topic: topic, Dialer: dialer, MaxWait: 100 * time.Millisecond})
			for i := 0; i < 10; i++ {
				if m, err := g.ReadMessage(ctx); err != nil || m.Offset != int64(i) {
					t.Fatalf("group reader: %d %v", m.Offset, err)
				}
			}
			g.Close()
		})
	}
	if dials.Load() == 0 {
		t.Fatal("DialFunc not used")
	}
	checkNoGoroutines(t)
}
