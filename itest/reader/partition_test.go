package reader

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	kafka "github.com/segmentio/kafka-go"
)

// Records written by kgo come back from a partition Reader once each, in
// order, with their keys, values, headers and offsets; Offset and Lag
// follow.
func TestPartitionReaderReadsEverythingInOrder(t *testing.T) {
	const topic, partitions, n = "orders", 3, 250
	addrs, _ := startCluster(t, topic, partitions)
	produce(t, newProducer(t, addrs), topic, partitions, n)

	for p := 0; p < partitions; p++ {
		r := kafka.NewReader(kafka.ReaderConfig{
			Brokers:   addrs,
			Topic:     topic,
			Partition: p,
			MaxWait:   100 * time.Millisecond,
		})
		if got := r.Offset(); got != kafka.FirstOffset {
			t.Fatalf("initial offset %d", got)
		}
		ctx := ctxTimeout(t, 30*time.Second)
		for i := 0; i < n; i++ {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if m.Topic != topic || m.Partition != p || m.Offset != int64(i) ||
				string(m.Key) != fmt.Sprintf("p%d-%d", p, i) || string(m.Value) != fmt.Sprintf("v%d", i) {
				t.Fatalf("message %d of partition %d: %+v", i, p, m)
			}
			if len(m.Headers) != 1 || m.Headers[0].Key != "h" || string(m.Headers[0].Value) != fmt.Sprint(i) {
				t.Fatalf("headers %+v", m.Headers)
			}
			if m.HighWaterMark != n {
				t.Fatalf("high water mark %d", m.HighWaterMark)
			}
			if m.Time.IsZero() {
				t.Fatal("no timestamp")
			}
			if got := r.Offset(); got != int64(i+1) {
				t.Fatalf("Offset() = %d after message %d", got, i)
			}
			if got := r.Lag(); got != int64(n-i-1) {
				t.Fatalf("Lag() = %d after message %d", got, i)
			}
		}
		lag, err := r.ReadLag(ctx)
		if err != nil || lag != 0 {
			t.Fatalf("ReadLag = %d, %v", lag, err)
		}
		// Nothing more: the read waits until its context ends.
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err = r.FetchMessage(short)
		cancel()
		if err != context.DeadlineExceeded {
			t.Fatalf("FetchMessage past the end: %v", err)
		}
		st := r.Stats()
		if st.Messages != n || st.Topic != topic || st.Partition != fmt.Sprint(p) || st.QueueCapacity != 100 || st.Fetches == 0 || st.Dials == 0 {
			t.Fatalf("stats %+v", st)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := r.FetchMessage(ctx); err != io.EOF {
			t.Fatalf("FetchMessage after Close: %v", err)
		}
		if err := r.SetOffset(3); err != io.ErrClosedPipe {
			t.Fatalf("SetOffset after Close: %v", err)
		}
	}
	checkNoGoroutines(t)
}

// SetOffset, SetOffsetAt and LastOffset move the reader; ReadLag measures
// the distance to the end.
func TestPartitionReaderSeek(t *testing.T) {
	const topic = "seek"
	addrs, _ := startCluster(t, topic, 1)
	cl := newProducer(t, addrs)
	produce(t, cl, topic, 1, 10)

	r := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: topic, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	ctx := ctxTimeout(t, 30*time.Second)

	lag, err := r.ReadLag(ctx)
	if err != nil || lag != 10 {
		t.Fatalf("ReadLag before reading = %d, %v", lag, err)
	}
	if err := r.SetOffset(7); err != nil {
		t.Fatal(err)
	}
	m, err := r.FetchMessage(ctx)
	if err != nil || m.Offset != 7 {
		t.Fatalf("after SetOffset(7): %d, %v", m.Offset, err)
	}
	lag, err = r.ReadLag(ctx)
	if err != nil || lag != 2 {
		t.Fatalf("ReadLag at 8 = %d, %v", lag, err)
	}
	if err := r.SetOffset(2); err != nil {
		t.Fatal(err)
	}
	for want := int64(2); want < 10; want++ {
		m, err := r.FetchMessage(ctx)
		if err != nil || m.Offset != want {
			t.Fatalf("after SetOffset(2): %d, %v (want %d)", m.Offset, err, want)
		}
	}

	// Messages written later, with later timestamps.
	time.Sleep(20 * time.Millisecond)
	boundary := time.Now()
	time.Sleep(20 * time.Millisecond)
	if err := cl.ProduceSync(ctx, record(topic, 0, 10), record(topic, 0, 11)).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := r.SetOffsetAt(ctx, boundary); err != nil {
		t.Fatal(err)
	}
	m, err = r.FetchMessage(ctx)
	if err != nil || m.Offset != 10 {
		t.Fatalf("after SetOffsetAt: %d, %v", m.Offset, err)
	}

	if err := r.SetOffset(kafka.LastOffset); err != nil {
		t.Fatal(err)
	}
	// The end is resolved when the partition reader starts, concurrently
	// with this: write until a message arrives, which must be a new one.
	for i := 12; ; i++ {
		if err := cl.ProduceSync(ctx, record(topic, 0, i)).FirstErr(); err != nil {
			t.Fatal(err)
		}
		short, cancel := context.WithTimeout(ctx, time.Second)
		m, err = r.FetchMessage(short)
		cancel()
		if err == nil {
			if m.Offset < 12 {
				t.Fatalf("after SetOffset(LastOffset): old message %d", m.Offset)
			}
			break
		}
		if err != context.DeadlineExceeded {
			t.Fatal(err)
		}
	}
}

// Batches compressed with each codec are decompressed.
func TestPartitionReaderCompressedBatches(t *testing.T) {
	codecs := map[string]kgo.CompressionCodec{
		"gzip":   kgo.GzipCompression(),
		"snappy": kgo.SnappyCompression(),
		"lz4":    kgo.Lz4Compression(),
		"zstd":   kgo.ZstdCompression(),
	}
	for name, codec := range codecs {
		t.Run(name, func(t *testing.T) {
			topic := "compressed-" + name
			addrs, _ := startCluster(t, topic, 1)
			cl := newProducer(t, addrs, kgo.ProducerBatchCompression(codec), kgo.ProducerLinger(50*time.Millisecond))
			ctx := ctxTimeout(t, 30*time.Second)
			// Asynchronous produces so that records share batches.
			done := make(chan error, 200)
			for i := 0; i < 200; i++ {
				cl.Produce(ctx, record(topic, 0, i), func(_ *kgo.Record, err error) { done <- err })
			}
			for i := 0; i < 200; i++ {
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			}
			r := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: topic, MaxWait: 100 * time.Millisecond})
			defer r.Close()
			// Start in the middle of a compressed batch: records before the
			// offset must not be returned.
			if err := r.SetOffset(5); err != nil {
				t.Fatal(err)
			}
			for i := 5; i < 200; i++ {
				m, err := r.FetchMessage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if m.Offset != int64(i) || string(m.Value) != fmt.Sprintf("v%d", i) {
					t.Fatalf("got offset %d value %q, want %d", m.Offset, m.Value, i)
				}
			}
		})
	}
}

// An offset past the end is waited for, or reported as OffsetOutOfRange
// with OffsetOutOfRangeError.
func TestPartitionReaderOffsetPastTheEnd(t *testing.T) {
	const topic = "past-end"
	addrs, _ := startCluster(t, topic, 1)
	cl := newProducer(t, addrs)
	produce(t, cl, topic, 1, 3)
	ctx := ctxTimeout(t, 30*time.Second)

	strict := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: topic, OffsetOutOfRangeError: true, MaxWait: 100 * time.Millisecond})
	defer strict.Close()
	if err := strict.SetOffset(5); err != nil {
		t.Fatal(err)
	}
	if _, err := strict.FetchMessage(ctx); !errors.Is(err, kafka.OffsetOutOfRange) {
		t.Fatalf("strict reader: %v", err)
	}

	patient := kafka.NewReader(kafka.ReaderConfig{
		Brokers: addrs, Topic: topic, MaxWait: 100 * time.Millisecond,
		ReadBackoffMin: 10 * time.Millisecond, ReadBackoffMax: 50 * time.Millisecond,
	})
	defer patient.Close()
	if err := patient.SetOffset(5); err != nil {
		t.Fatal(err)
	}
	got := make(chan kafka.Message, 1)
	go func() {
		if m, err := patient.FetchMessage(ctx); err == nil {
			got <- m
		}
	}()
	time.Sleep(200 * time.Millisecond)
	for i := 3; i < 6; i++ {
		if err := cl.ProduceSync(ctx, record(topic, 0, i)).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case m := <-got:
		if m.Offset != 5 || string(m.Value) != "v5" {
			t.Fatalf("got %d %q", m.Offset, m.Value)
		}
	case <-ctx.Done():
		t.Fatal("no message once the partition reached the offset")
	}
}

// When the partition leader moves, or its broker goes away, mid-read, the
// reader finds the new leader and goes on without losing or repeating
// messages.
func TestPartitionReaderLeaderMoves(t *testing.T) {
	const topic = "moving"
	addrs, c := startCluster(t, topic, 1)
	cl := newProducer(t, addrs)
	produce(t, cl, topic, 1, 10)
	ctx := ctxTimeout(t, 60*time.Second)

	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: addrs, Topic: topic, MaxWait: 100 * time.Millisecond,
		ReadBackoffMin: 10 * time.Millisecond, ReadBackoffMax: 100 * time.Millisecond,
	})
	defer r.Close()
	next := int64(0)
	readUpTo := func(end int64) {
		t.Helper()
		for ; next < end; next++ {
			m, err := r.FetchMessage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if m.Offset != next || string(m.Value) != fmt.Sprintf("v%d", next) {
				t.Fatalf("got %d %q, want %d", m.Offset, m.Value, next)
			}
		}
	}
	readUpTo(10)

	leader := c.LeaderFor(topic, 0)
	other := (leader + 1) % 3
	if err := c.MoveTopicPartition(topic, 0, other); err != nil {
		t.Fatal(err)
	}
	for i := 10; i < 20; i++ {
		if err := cl.ProduceSync(ctx, record(topic, 0, i)).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	readUpTo(20)

	// The new leader's broker disappears; the partition moves to a broker
	// that is still there.
	survivor := (other + 1) % 3
	if err := c.MoveTopicPartition(topic, 0, survivor); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveNode(other); err != nil {
		t.Fatal(err)
	}
	for i := 20; i < 30; i++ {
		if err := cl.ProduceSync(ctx, record(topic, 0, i)).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	readUpTo(30)
}
