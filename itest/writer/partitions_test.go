package writer_test

import (
	"context"
	"encoding/binary"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/itest/clustertest"
)

// TestWriterThousandPartitions writes keyed messages over a topic of 1000
// partitions on a 3-broker cluster. Every message must arrive once, in
// order within its partition, and the Writer must not open a connection per
// partition: a request per broker carries the batches of all the partitions
// the broker leads, with a few requests out per broker at most.
func TestWriterThousandPartitions(t *testing.T) {
	const parts = 1000
	topic := "thousand-partitions"
	addrs, _ := clustertest.Start(t, kfake.SeedTopics(parts, topic))

	var dials atomic.Int64
	dialer := &net.Dialer{}
	transport := &kafka.Transport{Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return dialer.DialContext(ctx, network, addr)
	}}
	defer transport.CloseIdleConnections()

	var mu sync.Mutex
	var failures []error
	delivered := 0
	w := &kafka.Writer{
		Addr:               kafka.TCP(addrs...),
		Topic:              topic,
		Balancer:           &kafka.Hash{},
		Transport:          transport,
		Async:              true,
		BatchSize:          1000,
		BatchTimeout:       10 * time.Millisecond,
		RequiredAcks:       kafka.RequireOne,
		MaxBufferedBatches: 4,
		MaxBufferedBytes:   4 << 20,
		Completion: func(msgs []kafka.Message, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failures = append(failures, err)
				return
			}
			delivered += len(msgs)
		},
	}
	const total = 20000
	ctx := context.Background()
	for i := 0; i < total; i += 100 {
		msgs := make([]kafka.Message, 100)
		for j := range msgs {
			seq := i + j
			msgs[j] = kafka.Message{Key: []byte(strconv.Itoa(seq % (3 * parts))), Value: newSmallValue(seq)}
		}
		if err := w.WriteMessages(ctx, msgs...); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(failures) != 0 || delivered != total {
		t.Fatalf("delivered %d of %d, errors: %v", delivered, total, failures)
	}
	// One connection for metadata and at most three produce connections
	// per broker, each reused; a few more for connections the transport
	// closed when idle or broken would still be far from 1000.
	if n := dials.Load(); n > 3*(3+1)+4 {
		t.Errorf("%d connections dialed for %d partitions, want at most %d", n, parts, 3*(3+1)+4)
	}
	t.Logf("%d connections dialed; %d batches written", dials.Load(), w.Stats().Writes)
	readBack(t, addrs, topic, total, smallValueSize)
}

// smallValueSize is the size of newSmallValue's values.
const smallValueSize = 100

func newSmallValue(seq int) []byte {
	v := make([]byte, smallValueSize)
	binary.BigEndian.PutUint64(v, uint64(seq))
	return v
}
