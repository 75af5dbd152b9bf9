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
	"github.com/twmb/franz-go/pkg/kgo"

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
	readBackSmall(t, addrs, topic, total)
}

func newSmallValue(seq int) []byte {
	v := make([]byte, 100)
	binary.BigEndian.PutUint64(v, uint64(seq))
	return v
}

// readBackSmall is readBack for the 100-byte values of newSmallValue: every
// sequence number once, increasing within each partition.
func readBackSmall(t *testing.T, addrs []string, topic string, total int) {
	t.Helper()
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(addrs...),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxBytes(64<<20),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	seen := make([]bool, total)
	last := map[int32]int{}
	count := 0
	check := func(r *kgo.Record) {
		seq := int(binary.BigEndian.Uint64(r.Value))
		switch {
		case seq < 0 || seq >= total:
			t.Fatalf("unexpected sequence number %d", seq)
		case seen[seq]:
			t.Fatalf("message %d delivered twice", seq)
		}
		seen[seq] = true
		if prev, ok := last[r.Partition]; ok && seq <= prev {
			t.Fatalf("partition %d: message %d after %d (order broken)", r.Partition, seq, prev)
		}
		last[r.Partition] = seq
		count++
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for count < total {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read back %d of %d messages", count, total)
		}
		fetches.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fetches.EachRecord(check)
	}
	extra, cancelExtra := context.WithTimeout(context.Background(), time.Second)
	defer cancelExtra()
	cl.PollFetches(extra).EachRecord(check)
	if count != total {
		t.Fatalf("read %d messages, wrote %d", count, total)
	}
}
