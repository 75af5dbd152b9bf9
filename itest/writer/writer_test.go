// Package writer_test runs kafka-go's Writer against real brokers: an
// in-process kfake cluster whose produce requests are slowed down, to see
// MaxBufferedBatches bound the producer's memory, and the external cluster
// for a plain end-to-end check. Records are read back with franz-go, not
// with this project's Reader.
package writer_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/itest/clustertest"
	"github.com/segmentio/kafka-go/itest/internal/kgocheck"
)

const (
	partitions = clustertest.Partitions
	valueSize  = 1024
	batchSize  = 64
	batchBytes = 64 << 10
	slowDown   = 200 * time.Millisecond // per produce request
	produceFor = 3 * time.Second
)

// delayProduces holds every produce request for the duration in d (none
// when 0), which can be changed while the cluster runs.
func delayProduces(c *kfake.Cluster, d *atomic.Int64) {
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if delay := time.Duration(d.Load()); delay > 0 {
			c.SleepControl(func() { time.Sleep(delay) })
		}
		return nil, nil, false
	})
}

// newValue makes a fresh message value, as a real producer would, carrying
// the producer's sequence number in its first 8 bytes.
func newValue(seq int) []byte {
	v := make([]byte, valueSize)
	binary.BigEndian.PutUint64(v, uint64(seq))
	for i := 8; i < len(v); i++ {
		v[i] = byte(seq + i)
	}
	return v
}

// sampler records the peak of HeapInuse and of the writer's BufferedBytes
// gauge while a test runs.
type sampler struct {
	peakHeap     atomic.Uint64
	peakBuffered atomic.Int64
	stop         chan struct{}
	done         sync.WaitGroup
}

func startSampler(w *kafka.Writer) *sampler {
	s := &sampler{stop: make(chan struct{})}
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > s.peakHeap.Load() {
				s.peakHeap.Store(ms.HeapInuse)
			}
			if b := w.Stats().BufferedBytes; b > s.peakBuffered.Load() {
				s.peakBuffered.Store(b)
			}
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *sampler) finish() {
	close(s.stop)
	s.done.Wait()
}

func heapInuse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// produce writes as fast as it can, one message per asynchronous call,
// until the time is up or enough is buffered; it returns how many messages
// were accepted.
func produce(t *testing.T, w *kafka.Writer, d time.Duration, maxBuffered int64) int {
	t.Helper()
	deadline := time.Now().Add(d)
	n := 0
	for time.Now().Before(deadline) {
		if maxBuffered > 0 && n%256 == 0 && w.Stats().BufferedBytes > maxBuffered {
			break
		}
		if err := w.WriteMessages(context.Background(), kafka.Message{Value: newValue(n)}); err != nil {
			t.Fatalf("write %d: %v", n, err)
		}
		n++
	}
	return n
}

type completions struct {
	mu        sync.Mutex
	delivered int
	errors    []error
}

func (c *completions) record(msgs []kafka.Message, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.errors = append(c.errors, err)
		return
	}
	c.delivered += len(msgs)
}

// readBack consumes the whole topic with franz-go and checks that the
// sequence numbers 0..total-1 each arrive exactly once, increasing within
// every partition, in values of size bytes.
func readBack(t *testing.T, addrs []string, topic string, total, size int) {
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
		if len(r.Value) != size {
			t.Fatalf("record of %d bytes", len(r.Value))
		}
		seq := int(binary.BigEndian.Uint64(r.Value))
		if seq < 0 || seq >= total {
			t.Fatalf("unexpected sequence number %d", seq)
		}
		if seen[seq] {
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
	// Anything more would be a duplicate.
	extra, cancelExtra := context.WithTimeout(context.Background(), time.Second)
	defer cancelExtra()
	cl.PollFetches(extra).EachRecord(check)
	if count != total {
		t.Fatalf("read %d messages, wrote %d", count, total)
	}
}

// boundBytes is the most the Writer may buffer: what the MaxBufferedBatches
// documentation promises.
func boundBytes(maxBatches int) int64 {
	return int64(partitions * (maxBatches + 2) * batchBytes)
}

// With MaxBufferedBatches set, a producer that outruns a slow cluster keeps
// its memory bounded, and everything it wrote arrives exactly once and in
// order per partition.
func TestWriterBoundedMemoryWithSlowBroker(t *testing.T) {
	const maxBatches = 2
	addrs, c := clustertest.Start(t)
	topic := clustertest.Topic(t)
	kgocheck.Metadata(t, addrs, topic)
	var delay atomic.Int64
	delay.Store(int64(slowDown))
	delayProduces(c, &delay)

	var done completions
	w := &kafka.Writer{
		Addr:               kafka.TCP(addrs...),
		Topic:              topic,
		Async:              true,
		BatchSize:          batchSize,
		BatchBytes:         batchBytes,
		BatchTimeout:       10 * time.Millisecond,
		RequiredAcks:       kafka.RequireAll,
		MaxBufferedBatches: maxBatches,
		Completion:         done.record,
	}
	baseline := heapInuse()
	s := startSampler(w)
	total := produce(t, w, produceFor, 0)
	s.finish()
	delay.Store(0)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	peak := s.peakHeap.Load() - min(baseline, s.peakHeap.Load())
	t.Logf("wrote %d messages; peak BufferedBytes %d (bound %d); heap growth %d KiB",
		total, s.peakBuffered.Load(), boundBytes(maxBatches), peak>>10)
	if b := s.peakBuffered.Load(); b > boundBytes(maxBatches) {
		t.Errorf("BufferedBytes reached %d, above the documented bound %d", b, boundBytes(maxBatches))
	}
	// The heap also holds the cluster's copy of what was delivered, the
	// encoded requests in flight and the runtime's slack; the bound is
	// deliberately generous, the unbounded test below grows far past it.
	heapBound := uint64(8*boundBytes(maxBatches)) + uint64(4*total*valueSize) + 32<<20
	if peak > heapBound {
		t.Errorf("heap grew by %d bytes, more than %d", peak, heapBound)
	}
	if len(done.errors) != 0 || done.delivered != total {
		t.Fatalf("delivered %d of %d, errors: %v", done.delivered, total, done.errors)
	}
	readBack(t, addrs, topic, total, valueSize)
}

// With the default (0), the same producer's buffer grows far past what the
// bounded writer ever holds. It stops at 48 MiB to spare the machine.
func TestWriterUnboundedBufferGrowsWithSlowBroker(t *testing.T) {
	const stopAt = 48 << 20
	addrs, c := clustertest.Start(t)
	topic := clustertest.Topic(t)
	kgocheck.Metadata(t, addrs, topic)
	var delay atomic.Int64
	delay.Store(int64(slowDown))
	delayProduces(c, &delay)

	var done completions
	w := &kafka.Writer{
		Addr:         kafka.TCP(addrs...),
		Topic:        topic,
		Async:        true,
		BatchSize:    batchSize,
		BatchBytes:   batchBytes,
		BatchTimeout: 10 * time.Millisecond,
		RequiredAcks: kafka.RequireAll,
		Completion:   done.record,
	}
	baseline := heapInuse()
	s := startSampler(w)
	total := produce(t, w, produceFor, stopAt)
	s.finish()
	delay.Store(0)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	growth := s.peakHeap.Load() - min(baseline, s.peakHeap.Load())
	t.Logf("wrote %d messages; peak BufferedBytes %d; heap growth %d KiB", total, s.peakBuffered.Load(), growth>>10)
	if b := s.peakBuffered.Load(); b <= 4*boundBytes(2) {
		t.Errorf("unbounded writer buffered at most %d bytes; expected growth well past %d", b, 4*boundBytes(2))
	}
	if len(done.errors) != 0 || done.delivered != total {
		t.Fatalf("delivered %d of %d, errors: %v", done.delivered, total, done.errors)
	}
}

// A plain round trip through the external cluster: keyed messages, sync
// writes, read back with franz-go.
func TestWriterExternalCluster(t *testing.T) {
	addrs := clustertest.External(t)
	topic := clustertest.Topic(t)
	w := &kafka.Writer{
		Addr:                   kafka.TCP(addrs...),
		Topic:                  topic,
		Balancer:               &kafka.Hash{},
		BatchTimeout:           10 * time.Millisecond,
		RequiredAcks:           kafka.RequireAll,
		AllowAutoTopicCreation: true,
		MaxBufferedBatches:     4,
	}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const total = 200
	for i := 0; i < total; i += 20 {
		msgs := make([]kafka.Message, 0, 20)
		for j := i; j < i+20; j++ {
			msgs = append(msgs, kafka.Message{Key: []byte(fmt.Sprintf("key-%d", j%7)), Value: newValue(j)})
		}
		if err := w.WriteMessages(ctx, msgs...); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	readBack(t, addrs, topic, total, valueSize)
}

// Partition leaders move while a bounded writer produces: the brokers answer
// NOT_LEADER_OR_FOLLOWER, the writer retries after the transport refreshes
// its metadata, and every message still arrives exactly once, in order.
func TestWriterLeaderMoves(t *testing.T) {
	addrs, c := clustertest.Start(t)
	topic := clustertest.Topic(t)
	kgocheck.Metadata(t, addrs, topic)

	var done completions
	w := &kafka.Writer{
		Addr:               kafka.TCP(addrs...),
		Topic:              topic,
		Async:              true,
		BatchSize:          10,
		BatchTimeout:       2 * time.Millisecond,
		RequiredAcks:       kafka.RequireAll,
		MaxBufferedBatches: 2,
		WriteBackoffMin:    5 * time.Millisecond,
		WriteBackoffMax:    50 * time.Millisecond,
		Completion:         done.record,
	}
	const total = 3000
	moved := make(chan error, 1)
	go func() {
		// Move every partition to the next broker a few times while the
		// producer runs.
		nodes := []int32{0, 1, 2}
		for round := 0; round < 5; round++ {
			time.Sleep(20 * time.Millisecond)
			for p := int32(0); p < partitions; p++ {
				leader := c.LeaderFor(topic, p)
				next := nodes[(int(leader)+1)%len(nodes)]
				if err := c.MoveTopicPartition(topic, p, next); err != nil {
					moved <- err
					return
				}
			}
		}
		moved <- nil
	}()
	for i := 0; i < total; i++ {
		if err := w.WriteMessages(context.Background(), kafka.Message{Value: newValue(i)}); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		if i%100 == 0 {
			time.Sleep(time.Millisecond) // let the moves interleave with the writes
		}
	}
	if err := <-moved; err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("retries: %d", w.Stats().Retries)
	if len(done.errors) != 0 || done.delivered != total {
		t.Fatalf("delivered %d of %d, errors: %v", done.delivered, total, done.errors)
	}
	readBack(t, addrs, topic, total, valueSize)
}
