package writer_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/itest/clustertest"
	"github.com/segmentio/kafka-go/itest/internal/kgocheck"
)

// This file runs the idempotent Writer (Writer.Idempotent) against the
// embedded cluster through a fault-injecting connection: every connection
// the Writer's Transport dials is wrapped in a faultConn, which reads the
// Kafka frames going both ways and, for some Produce requests, loses the
// answer after the broker appended the batch, cuts the answer half way,
// cuts the request half way, or moves the partition's leader and then
// loses the answer. Each case runs with and without the option, and the
// log is read back with franz-go: with it, every message is there exactly
// once and in order; without it, the lost answers leave duplicates, which
// shows that the option is what removes them.

// faultAction is what happens to one Produce request.
type faultAction int

const (
	passThrough  faultAction = iota
	loseAnswer               // appended; the connection is reset before the answer
	cutAnswer                // appended; half of the answer arrives, then a reset
	cutRequest               // half of the request is sent, then a reset: not appended
	moveThenLose             // appended; the leader moves, then the answer is lost
)

// faultPlan decides, for each Produce request of any connection, what
// happens to it.
type faultPlan struct {
	mu       sync.Mutex
	rng      *rand.Rand
	action   faultAction
	rate     float64
	faults   atomic.Int64
	produces atomic.Int64
	cluster  *kfake.Cluster
	topic    string
	// mix, when set, is the set of actions a fault picks from at random
	// (action is then unused).
	mix []faultAction
}

func (p *faultPlan) decide() faultAction {
	p.produces.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rng.Float64() < p.rate {
		p.faults.Add(1)
		if len(p.mix) > 0 {
			return p.mix[p.rng.Intn(len(p.mix))]
		}
		return p.action
	}
	return passThrough
}

// moveLeaders moves every partition of the topic to the next broker.
func (p *faultPlan) moveLeaders() {
	for part := int32(0); part < partitions; part++ {
		leader := p.cluster.LeaderFor(p.topic, part)
		_ = p.cluster.MoveTopicPartition(p.topic, part, (leader+1)%3)
	}
}

func (p *faultPlan) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &faultConn{Conn: c, plan: p, pending: map[int32]faultAction{}}, nil
}

// faultConn forwards whole request frames to the broker, and whole answer
// frames back, applying the plan on the way.
type faultConn struct {
	net.Conn
	plan *faultPlan

	wmu     sync.Mutex
	out     []byte // request bytes not yet forwarded (an incomplete frame)
	pmu     sync.Mutex
	pending map[int32]faultAction // correlation ID -> action on its answer

	// Read side only (one reader at a time):
	in        []byte // answer bytes ready for the client
	resetNext bool   // the connection resets once in is consumed
}

var errReset = &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}

func (c *faultConn) Write(b []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.out = append(c.out, b...)
	for len(c.out) >= 12 {
		size := int(binary.BigEndian.Uint32(c.out))
		if len(c.out) < 4+size {
			break
		}
		frame := c.out[:4+size]
		apiKey := int16(binary.BigEndian.Uint16(frame[4:]))
		corr := int32(binary.BigEndian.Uint32(frame[8:]))
		action := passThrough
		if apiKey == 0 {
			action = c.plan.decide()
		}
		if action == cutRequest {
			c.Conn.Write(frame[:len(frame)/2])
			c.Conn.Close()
			return 0, &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.ECONNRESET)}
		}
		if action != passThrough {
			c.pmu.Lock()
			c.pending[corr] = action
			c.pmu.Unlock()
		}
		if _, err := c.Conn.Write(frame); err != nil {
			return 0, err
		}
		c.out = c.out[4+size:]
	}
	return len(b), nil
}

func (c *faultConn) Read(b []byte) (int, error) {
	for len(c.in) == 0 {
		if c.resetNext {
			c.Conn.Close()
			return 0, errReset
		}
		var hdr [4]byte
		if _, err := io.ReadFull(c.Conn, hdr[:]); err != nil {
			return 0, err
		}
		frame := make([]byte, 4+binary.BigEndian.Uint32(hdr[:]))
		copy(frame, hdr[:])
		if _, err := io.ReadFull(c.Conn, frame[4:]); err != nil {
			return 0, err
		}
		corr := int32(binary.BigEndian.Uint32(frame[4:]))
		c.pmu.Lock()
		action, ok := c.pending[corr]
		delete(c.pending, corr)
		c.pmu.Unlock()
		switch {
		case !ok:
			c.in = frame
		case action == cutAnswer:
			// Half the answer, then a reset.
			c.in, c.resetNext = frame[:len(frame)/2], true
		default:
			if action == moveThenLose {
				c.plan.moveLeaders()
			}
			c.Conn.Close()
			return 0, errReset
		}
	}
	n := copy(b, c.in)
	c.in = c.in[n:]
	return n, nil
}

// logOf reads the whole topic back with franz-go and returns the sequence
// numbers of each partition in log order.
func logOf(t *testing.T, addrs []string, topic string, atLeast int) map[int32][]int {
	t.Helper()
	out, _ := logWithEpochs(t, addrs, topic, atLeast)
	return out
}

// logWithEpochs is logOf, with the lowest and highest producer epoch of
// the records of each partition.
func logWithEpochs(t *testing.T, addrs []string, topic string, atLeast int) (map[int32][]int, map[int32][2]int16) {
	t.Helper()
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(addrs...),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	out := map[int32][]int{}
	epochs := map[int32][2]int16{}
	count := 0
	add := func(r *kgo.Record) {
		out[r.Partition] = append(out[r.Partition], int(binary.BigEndian.Uint64(r.Value)))
		e, ok := epochs[r.Partition]
		if !ok {
			e = [2]int16{r.ProducerEpoch, r.ProducerEpoch}
		}
		e[0], e[1] = min(e[0], r.ProducerEpoch), max(e[1], r.ProducerEpoch)
		epochs[r.Partition] = e
		count++
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for count < atLeast {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read back %d of at least %d messages", count, atLeast)
		}
		fetches.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fetches.EachRecord(add)
	}
	// Duplicates come on top of the messages written: drain the rest,
	// until a second passes without a record.
	for more := true; more; {
		extra, cancelExtra := context.WithTimeout(context.Background(), time.Second)
		before := count
		cl.PollFetches(extra).EachRecord(add)
		more = count > before
		cancelExtra()
	}
	return out, epochs
}

// audit counts, in the log, the copies beyond the first of each message,
// the messages missing, and the places where a partition goes backwards.
func audit(log map[int32][]int, total int) (duplicates, missing, disorder int) {
	seen := make([]int, total)
	for _, seqs := range log {
		for i, s := range seqs {
			seen[s]++
			if i > 0 && s <= seqs[i-1] {
				disorder++
			}
		}
	}
	for _, n := range seen {
		switch {
		case n == 0:
			missing++
		case n > 1:
			duplicates += n - 1
		}
	}
	return
}

func runFaultCase(t *testing.T, action faultAction, idempotent bool) (duplicates int) {
	addrs, c := clustertest.Start(t)
	topic := clustertest.Topic(t)
	kgocheck.Metadata(t, addrs, topic)

	plan := &faultPlan{rng: rand.New(rand.NewSource(1)), action: action, rate: 0.2, cluster: c, topic: topic}
	var done completions
	w := &kafka.Writer{
		Addr:               kafka.TCP(addrs...),
		Topic:              topic,
		Transport:          &kafka.Transport{Dial: plan.dial},
		Async:              true,
		Idempotent:         idempotent,
		RequiredAcks:       kafka.RequireAll,
		BatchSize:          20,
		BatchTimeout:       2 * time.Millisecond,
		MaxBufferedBatches: 2,
		MaxAttempts:        30,
		WriteBackoffMin:    time.Millisecond,
		WriteBackoffMax:    10 * time.Millisecond,
		Completion:         done.record,
	}
	const total = 2000
	for i := 0; i < total; i++ {
		v := make([]byte, 16)
		binary.BigEndian.PutUint64(v, uint64(i))
		if err := w.WriteMessages(context.Background(), kafka.Message{Value: v}); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(done.errors) != 0 || done.delivered != total {
		t.Fatalf("delivered %d of %d, errors: %v", done.delivered, total, done.errors)
	}
	if plan.faults.Load() == 0 {
		t.Fatal("no fault was injected")
	}
	dups, missing, disorder := audit(logOf(t, addrs, topic, total), total)
	t.Logf("idempotent=%v: %d produce requests, %d faults, %d retries; log: %d duplicates, %d missing, %d out of order",
		idempotent, plan.produces.Load(), plan.faults.Load(), w.Stats().Retries, dups, missing, disorder)
	if missing != 0 {
		t.Fatalf("%d messages missing from the log", missing)
	}
	if idempotent && (dups != 0 || disorder != 0) {
		t.Fatalf("idempotent writer: %d duplicates, %d out of order", dups, disorder)
	}
	return dups
}

// With the option, each fault case leaves every message in the log exactly
// once, in order; without it, a lost answer leaves duplicates (a request
// cut before the broker has it never does, with or without the option).
func TestIdempotentWriterFaults(t *testing.T) {
	for _, tc := range []struct {
		name       string
		action     faultAction
		dupWithout bool
	}{
		{"answer-lost-after-append", loseAnswer, true},
		{"answer-cut-mid-frame", cutAnswer, true},
		{"request-cut-mid-frame", cutRequest, false},
		{"leader-moves-answer-lost", moveThenLose, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runFaultCase(t, tc.action, true)
			dups := runFaultCase(t, tc.action, false)
			if tc.dupWithout && dups == 0 {
				t.Fatal("without Idempotent the lost answers left no duplicate: the fault did not test anything")
			}
			if !tc.dupWithout && dups != 0 {
				t.Fatalf("a request cut before the broker read it was appended %d times", dups)
			}
		})
	}
}

// Batches that fail for good after their requests were cut (two attempts)
// leave gaps in the sequence; the broker refuses the next batch as out of
// order, and the Writer bumps the epoch and sends it again from sequence 0.
// On the embedded cluster, which validates epochs and sequences as Kafka
// does: the refusals happen, the Writer recovers, nothing is in the log
// twice, every message reported written is there, and each partition keeps
// the order of acceptance.
func TestIdempotentWriterEpochBumpOnCluster(t *testing.T) {
	addrs, c := clustertest.Start(t)
	topic := clustertest.Topic(t)
	kgocheck.Metadata(t, addrs, topic)

	plan := &faultPlan{rng: rand.New(rand.NewSource(7)), action: cutRequest, rate: 0.3, cluster: c, topic: topic}
	var refusals atomic.Int64
	var mu sync.Mutex
	written := map[int]bool{}
	failed := 0
	w := &kafka.Writer{
		Addr:            kafka.TCP(addrs...),
		Topic:           topic,
		Transport:       &kafka.Transport{Dial: plan.dial},
		Async:           true,
		Idempotent:      true,
		RequiredAcks:    kafka.RequireAll,
		BatchSize:       10,
		BatchTimeout:    2 * time.Millisecond,
		MaxAttempts:     2,
		WriteBackoffMin: time.Millisecond,
		WriteBackoffMax: 5 * time.Millisecond,
		ErrorLogger: kafka.LoggerFunc(func(format string, args ...interface{}) {
			if strings.Contains(fmt.Sprintf(format, args...), "Out Of Order Sequence Number") {
				refusals.Add(1)
			}
		}),
		Completion: func(msgs []kafka.Message, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed += len(msgs)
				return
			}
			for _, m := range msgs {
				written[int(binary.BigEndian.Uint64(m.Value))] = true
			}
		},
	}
	const total = 1500
	for i := 0; i < total; i++ {
		v := make([]byte, 16)
		binary.BigEndian.PutUint64(v, uint64(i))
		if err := w.WriteMessages(context.Background(), kafka.Message{Value: v}); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(written)+failed != total {
		t.Fatalf("%d written + %d failed, want %d reported", len(written), failed, total)
	}
	if refusals.Load() == 0 || failed == 0 {
		t.Fatalf("no out-of-order refusal (%d) or no failed batch (%d messages): the case was not exercised", refusals.Load(), failed)
	}
	log, epochs := logWithEpochs(t, addrs, topic, len(written))
	// The refusals are only answered by a new epoch: a Writer that did not
	// bump it would have every later batch of the refused partition
	// refused too, and the log would hold a single epoch per partition.
	rose := false
	for _, e := range epochs {
		rose = rose || e[1] > e[0]
	}
	if !rose {
		t.Fatalf("producer epochs per partition %v: no partition was written to after an epoch bump", epochs)
	}
	dups, _, disorder := audit(log, total)
	inLog := map[int]bool{}
	for _, seqs := range log {
		for _, s := range seqs {
			inLog[s] = true
		}
	}
	for s := range written {
		if !inLog[s] {
			t.Fatalf("message %d reported written, not in the log", s)
		}
	}
	t.Logf("%d written, %d failed, %d out-of-order refusals, %d retries; log: %d messages, %d duplicates, %d out of order",
		len(written), failed, refusals.Load(), w.Stats().Retries, len(inLog), dups, disorder)
	if dups != 0 || disorder != 0 {
		t.Fatalf("%d duplicates, %d out of order", dups, disorder)
	}
}

// The option's cost end to end, on an in-process cluster (whose brokers
// share the process, so cpu-ns/msg includes their work, sequence checks
// included): asynchronous one-message calls of 100 bytes, off and on.
func BenchmarkIdempotentWriterCluster(b *testing.B) {
	for _, idempotent := range []bool{false, true} {
		name := "off"
		if idempotent {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			addrs, _ := clustertest.Start(b)
			topic := clustertest.Topic(b)
			kgocheck.Metadata(b, addrs, topic)
			var done completions
			w := &kafka.Writer{
				Addr:         kafka.TCP(addrs...),
				Topic:        topic,
				Async:        true,
				Idempotent:   idempotent,
				RequiredAcks: kafka.RequireAll,
				BatchSize:    100,
				BatchTimeout: time.Millisecond,
				Completion:   done.record,
			}
			msg := kafka.Message{Value: make([]byte, 100)}
			b.SetBytes(100)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				if err := w.WriteMessages(context.Background(), msg); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			cpu := processCPU() - cpu0
			b.StopTimer()
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/msg")
			if len(done.errors) != 0 || done.delivered != b.N {
				b.Fatalf("delivered %d of %d, errors: %v", done.delivered, b.N, done.errors)
			}
		})
	}
}

// processCPU is the user and system CPU time the process used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
