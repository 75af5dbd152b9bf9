package rdmock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/itest/rdmock"
)

var codecs = []struct {
	name  string
	codec kafka.Compression
}{
	{"none", 0},
	{"gzip", kafka.Gzip},
	{"snappy", kafka.Snappy},
	{"lz4", kafka.Lz4},
	{"zstd", kafka.Zstd},
}

// The Writer, synchronous and asynchronous, in every codec: kcat reads back
// every message with its key, value and headers, in order per partition.
func TestWriterCodecs(t *testing.T) {
	const partitions, n = 3, 300
	c := rdmock.Start(t, 3)
	for _, async := range []bool{false, true} {
		for _, cc := range codecs {
			mode := "sync"
			if async {
				mode = "async"
			}
			t.Run(mode+"-"+cc.name, func(t *testing.T) {
				topic := topicName(t)
				c.CreateTopic(topic, partitions)
				msgs := messages(mode+cc.name, n, partitions)

				errs := make(chan error, n)
				w := &kafka.Writer{
					Addr:         kafka.TCP(c.Addrs...),
					Topic:        topic,
					Balancer:     keyPartitioner,
					Compression:  cc.codec,
					BatchSize:    40,
					BatchTimeout: 5 * time.Millisecond,
					RequiredAcks: kafka.RequireAll,
					Async:        async,
					Transport:    newTransport(t),
					Completion: func(ms []kafka.Message, err error) {
						for range ms {
							errs <- err
						}
					},
				}
				ctx := ctxFor(t, 60*time.Second)
				// Several calls, so that batches of one call and of the
				// next follow each other on each partition.
				for i := 0; i < n; i += 50 {
					if err := w.WriteMessages(ctx, msgs[i:i+50]...); err != nil {
						t.Fatalf("WriteMessages: %v", err)
					}
				}
				if err := w.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
				for i := 0; i < n; i++ {
					select {
					case err := <-errs:
						if err != nil {
							t.Fatalf("completion error: %v", err)
						}
					default:
						t.Fatalf("%d completions after Close, want %d", i, n)
					}
				}
				got := rdmock.KcatConsume(t, c.Bootstrap(), topic, n)
				rdmock.SameRecords(t, "kcat", got, expected(msgs), false)
				if cc.codec == 0 || cc.codec == kafka.Gzip {
					got := rdmock.PythonConsume(t, c.Bootstrap(), topic, n, 30*time.Second)
					rdmock.SameRecords(t, "kafka-python", got, expected(msgs), false)
				}
			})
		}
	}
}

// peakBatches samples the Writer's BufferedBatches gauge until stop is
// closed and returns its peak.
func peakBatches(w *kafka.Writer, stop <-chan struct{}) <-chan int64 {
	res := make(chan int64, 1)
	go func() {
		var peak int64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if b := w.Stats().BufferedBatches; b > peak {
				peak = b
			}
			select {
			case <-stop:
				res <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return res
}

// MaxBufferedBatches against a slow broker (every answer delayed): an async
// producer far faster than the brokers never holds more than
// partitions × (MaxBufferedBatches+2) batches, and still delivers every
// message in order. The same run without the bound shows that the broker is
// slow enough for the batches to pile up, so the bound is what held them.
func TestWriterMaxBufferedBatchesSlowBroker(t *testing.T) {
	const partitions, n, batch, maxBatches = 3, 600, 10, 1
	c := rdmock.Start(t, 3)
	for _, bounded := range []bool{true, false} {
		name := "unbounded"
		if bounded {
			name = "bounded"
		}
		t.Run(name, func(t *testing.T) {
			topic := topicName(t)
			c.CreateTopic(topic, partitions)
			c.SetRTT(-1, 0)
			w := &kafka.Writer{
				Addr:         kafka.TCP(c.Addrs...),
				Topic:        topic,
				Balancer:     keyPartitioner,
				BatchSize:    batch,
				BatchTimeout: time.Millisecond,
				RequiredAcks: kafka.RequireAll,
				Async:        true,
				Transport:    newTransport(t),
			}
			if bounded {
				w.MaxBufferedBatches = maxBatches
			}
			ctx := ctxFor(t, 120*time.Second)
			msgs := messages(name, n, partitions)
			// Learn the partitions before the brokers slow down.
			if err := w.WriteMessages(ctx, msgs[:partitions]...); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			c.SetRTT(-1, 100*time.Millisecond)

			stop := make(chan struct{})
			peak := peakBatches(w, stop)
			for i := partitions; i < n; i += batch {
				if err := w.WriteMessages(ctx, msgs[i:min(i+batch, n)]...); err != nil {
					t.Fatalf("WriteMessages: %v", err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			close(stop)
			got := <-peak
			limit := int64(partitions * (maxBatches + 2))
			t.Logf("peak of %d buffered batches (bound %d when bounded)", got, limit)
			if bounded && got > limit {
				t.Errorf("%d batches buffered, bound is %d", got, limit)
			}
			if !bounded && got <= limit {
				t.Errorf("without a bound only %d batches piled up: the broker is not slow enough for this test to show the bound", got)
			}
			c.SetRTT(-1, 0)
			// Async without Completion: kcat's exact count is what
			// shows that no batch failed.
			rdmock.SameRecords(t, "kcat", rdmock.KcatConsume(t, c.Bootstrap(), topic, n), expected(msgs), false)
		})
	}
}

// Partition leaders move between the brokers while a synchronous Writer
// writes, and the leaders answer NOT_LEADER_OR_FOLLOWER to some produces:
// every message arrives once, in order, and the queued errors were all
// answered (so the Writer did go through them).
func TestWriterLeaderMoves(t *testing.T) {
	const partitions, n, rounds = 3, 600, 6
	c := rdmock.Start(t, 3)
	topic := topicName(t)
	c.CreateTopic(topic, partitions)
	for p := 0; p < partitions; p++ {
		c.SetLeader(topic, p, p+1)
	}
	w := &kafka.Writer{
		Addr:            kafka.TCP(c.Addrs...),
		Topic:           topic,
		Balancer:        keyPartitioner,
		BatchSize:       20,
		BatchTimeout:    time.Millisecond,
		RequiredAcks:    kafka.RequireAll,
		WriteBackoffMin: 10 * time.Millisecond,
		WriteBackoffMax: 100 * time.Millisecond,
		Transport:       newTransport(t),
	}
	defer w.Close()
	ctx := ctxFor(t, 120*time.Second)
	msgs := messages("moves", n, partitions)
	per := n / rounds
	for r := 0; r < rounds; r++ {
		if r > 0 {
			// Move every leader one broker along, and make the new
			// leaders refuse their next produce.
			for p := 0; p < partitions; p++ {
				b := (p+r)%3 + 1
				c.SetLeader(topic, p, b)
			}
			for b := 1; b <= 3; b++ {
				c.PushBrokerErrors(b, apiProduce, errNotLeader)
			}
		}
		if err := w.WriteMessages(ctx, msgs[r*per:(r+1)*per]...); err != nil {
			t.Fatalf("round %d: WriteMessages: %v", r, err)
		}
	}
	for b := 1; b <= 3; b++ {
		if left := c.BrokerErrorsLeft(b, apiProduce); left != 0 {
			t.Errorf("broker %d: %d NOT_LEADER_OR_FOLLOWER answers never sent: the writer did not produce there", b, left)
		}
	}
	if st := w.Stats(); st.Retries == 0 {
		t.Errorf("no retries counted after %d refused produces", 3*(rounds-1))
	}
	rdmock.SameRecords(t, "kcat", rdmock.KcatConsume(t, c.Bootstrap(), topic, n), expected(msgs), false)
	rdmock.SameRecords(t, "kafka-python", rdmock.PythonConsume(t, c.Bootstrap(), topic, n, 30*time.Second), expected(msgs), false)
}

// The leader of every partition goes down (connections closed, new ones
// refused, leadership unchanged) between two writes, and comes back while
// the second write is retrying: the write succeeds once the broker is up,
// and nothing is lost or duplicated.
func TestWriterBrokerDownThenUp(t *testing.T) {
	const partitions, n = 3, 300
	c := rdmock.Start(t, 3)
	topic := topicName(t)
	c.CreateTopic(topic, partitions)
	for p := 0; p < partitions; p++ {
		c.SetLeader(topic, p, 2)
	}
	w := &kafka.Writer{
		Addr:            kafka.TCP(c.Addrs[0]), // broker 1 answers metadata
		Topic:           topic,
		Balancer:        keyPartitioner,
		BatchSize:       25,
		BatchTimeout:    time.Millisecond,
		RequiredAcks:    kafka.RequireAll,
		MaxAttempts:     50,
		WriteBackoffMin: 20 * time.Millisecond,
		WriteBackoffMax: 200 * time.Millisecond,
		Transport:       newTransport(t),
	}
	defer w.Close()
	ctx := ctxFor(t, 120*time.Second)
	msgs := messages("downup", n, partitions)
	if err := w.WriteMessages(ctx, msgs[:n/2]...); err != nil {
		t.Fatal(err)
	}
	c.Down(2)
	done := make(chan error, 1)
	go func() { done <- w.WriteMessages(ctx, msgs[n/2:]...) }()
	// Let the writer fail against the down broker (Stats counts the
	// retries since the previous call, so any count above zero is one).
	deadline := time.Now().Add(30 * time.Second)
	for w.Stats().Retries == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no retry while the leader was down")
		}
		select {
		case err := <-done:
			t.Fatalf("write finished while the leader was down: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	c.Up(2)
	if err := <-done; err != nil {
		t.Fatalf("write after the broker came back: %v", err)
	}
	rdmock.SameRecords(t, "kcat", rdmock.KcatConsume(t, c.Bootstrap(), topic, n), expected(msgs), false)
}

// A partition whose leader keeps refusing produces past MaxAttempts: the
// synchronous write reports the broker's error for those messages (none is
// silently dropped or half-written: kcat finds none of them), and the
// Writer writes the next messages once the leader accepts again.
func TestWriterReportsExhaustedRetries(t *testing.T) {
	const attempts = 3
	c := rdmock.Start(t, 3)
	topic := topicName(t)
	c.CreateTopic(topic, 1)
	c.SetLeader(topic, 0, 2)
	w := &kafka.Writer{
		Addr:            kafka.TCP(c.Addrs...),
		Topic:           topic,
		Balancer:        keyPartitioner,
		BatchTimeout:    time.Millisecond,
		RequiredAcks:    kafka.RequireAll,
		MaxAttempts:     attempts,
		WriteBackoffMin: 5 * time.Millisecond,
		WriteBackoffMax: 20 * time.Millisecond,
		Transport:       newTransport(t),
	}
	defer w.Close()
	ctx := ctxFor(t, 60*time.Second)
	msgs := messages("exhausted", 20, 1)

	codes := make([]int, attempts)
	for i := range codes {
		codes[i] = errNotLeader
	}
	c.PushBrokerErrors(2, apiProduce, codes...)
	err := w.WriteMessages(ctx, msgs[:10]...)
	var werrs kafka.WriteErrors
	if !errors.As(err, &werrs) || werrs.Count() != 10 || !errors.Is(werrs[0], kafka.NotLeaderForPartition) {
		t.Fatalf("write refused %d times: %v, want NOT_LEADER_OR_FOLLOWER for all 10 messages", attempts, err)
	}
	if left := c.BrokerErrorsLeft(2, apiProduce); left != 0 {
		t.Fatalf("%d refusals left: the writer made fewer than %d attempts", left, attempts)
	}

	if err := w.WriteMessages(ctx, msgs[10:]...); err != nil {
		t.Fatalf("write after the refusals: %v", err)
	}
	want := expected(msgs[10:])
	for i := range want {
		want[i].Offset = int64(i)
	}
	rdmock.SameRecords(t, "kcat", rdmock.KcatConsume(t, c.Bootstrap(), topic, 10), want, true)
	if _, last, err := lastOffset(ctx, c, topic); err != nil || last != 10 {
		t.Errorf("partition end %d, %v; want 10 (nothing of the refused write)", last, err)
	}
}

func lastOffset(ctx context.Context, c *rdmock.Cluster, topic string) (int64, int64, error) {
	conn, err := kafka.DialLeader(ctx, "tcp", c.Addrs[0], topic, 0)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	return conn.ReadOffsets()
}
