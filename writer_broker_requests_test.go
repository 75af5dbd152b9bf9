package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/protocol"
	metadataAPI "github.com/segmentio/kafka-go/protocol/metadata"
	produceAPI "github.com/segmentio/kafka-go/protocol/produce"
)

// The Writer sends the ready batches of all the partitions a broker leads
// in one Produce request (writer_sink.go). These tests check what goes on
// the wire, per-partition outcomes inside one response, leader moves, and
// that the Writer's goroutines and connections do not follow its partition
// count.

// partitionByKey sends a message to the partition written in its key.
var partitionByKey = BalancerFunc(func(m Message, partitions ...int) int {
	p, err := strconv.Atoi(string(m.Key))
	if err != nil || p >= len(partitions) {
		panic(fmt.Sprintf("test balancer: key %q for %d partitions", m.Key, len(partitions)))
	}
	return p
})

// fakeProduced is what a fake broker received in one Produce request.
type fakeProduced struct {
	broker int32
	conn   int
	parts  map[int32][]string // partition -> values, in order
}

func decodeProduceRequest(t testing.TB, r *produceAPI.Request) map[int32][]string {
	parts := map[int32][]string{}
	for _, tp := range r.Topics {
		for _, p := range tp.Partitions {
			if _, dup := parts[p.Partition]; dup {
				t.Errorf("partition %d twice in one request", p.Partition)
			}
			var values []string
			for {
				rec, err := p.RecordSet.Records.ReadRecord()
				if err != nil {
					break
				}
				v, _ := protocol.ReadAll(rec.Value)
				values = append(values, string(v))
			}
			parts[p.Partition] = values
		}
	}
	return parts
}

// answerProduce answers every partition of r with code(partition).
func answerProduce(r *fakebroker.Request, code func(p int32) int16) {
	req := r.Msg.(*produceAPI.Request)
	res := &produceAPI.Response{}
	for _, t := range req.Topics {
		rt := produceAPI.ResponseTopic{Topic: t.Topic}
		for _, p := range t.Partitions {
			rt.Partitions = append(rt.Partitions, produceAPI.ResponsePartition{Partition: p.Partition, ErrorCode: code(p.Partition), LogAppendTime: -1})
		}
		res.Topics = append(res.Topics, rt)
	}
	r.Reply(res)
}

func keyed(p int, value string) Message {
	return Message{Key: []byte(strconv.Itoa(p)), Value: []byte(value)}
}

// TestWriterSendsPartitionsOfABrokerInOneRequest writes one batch to each of
// 60 partitions led by two brokers while each broker holds the Writer's
// first requests: the other batches must wait and then travel together,
// each request carrying only partitions its broker leads, with at most
// sinkMaxInflight requests (and connections for them) per broker.
func TestWriterSendsPartitionsOfABrokerInOneRequest(t *testing.T) {
	const partitions = 60
	fc := fakebroker.New(t, 2)
	for p := int32(0); p < partitions; p++ {
		fc.SetLeader(p, 1+p%2)
	}
	release := make(chan struct{})
	var mu sync.Mutex
	var got []fakeProduced
	held := map[int32]int{}    // requests held, by broker
	covered := map[int32]int{} // partitions in them
	fc.SetHandler(func(r *fakebroker.Request) {
		req, ok := r.Msg.(*produceAPI.Request)
		if !ok {
			return
		}
		parts := decodeProduceRequest(t, req)
		mu.Lock()
		got = append(got, fakeProduced{broker: r.Broker, conn: r.Conn.Num, parts: parts})
		hold := held[r.Broker] < sinkMaxInflight
		if hold {
			held[r.Broker]++
			covered[r.Broker] += len(parts)
		}
		mu.Unlock()
		go func() {
			if hold {
				<-release
			}
			answerProduce(r, func(int32) int16 { return 0 })
		}()
	})

	w := &Writer{Addr: fc.Addr(), Topic: "t", Transport: tpNewTransport(t), Balancer: partitionByKey,
		BatchSize: 1, Async: true, RequiredAcks: RequireOne}
	defer w.Close()
	ctx := testContext(t)
	var msgs []Message
	for p := 0; p < partitions; p++ {
		msgs = append(msgs, keyed(p, "v"+strconv.Itoa(p)))
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	// Each broker holds sinkMaxInflight requests, or fewer that carry
	// all its partitions: the others wait for a request to come back.
	eventually(t, "the first requests held", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for b := int32(1); b <= 2; b++ {
			if held[b] < sinkMaxInflight && covered[b] < partitions/2 {
				return false
			}
		}
		return true
	})
	close(release)
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	perBroker := map[int32]int{}
	widest := 0
	seen := map[int32][]string{}
	for _, req := range got {
		perBroker[req.broker]++
		widest = max(widest, len(req.parts))
		for p, values := range req.parts {
			if 1+p%2 != req.broker {
				t.Errorf("partition %d (leader %d) sent to broker %d", p, 1+p%2, req.broker)
			}
			seen[p] = append(seen[p], values...)
		}
	}
	for p := int32(0); p < partitions; p++ {
		if want := []string{"v" + strconv.Itoa(int(p))}; fmt.Sprint(seen[p]) != fmt.Sprint(want) {
			t.Errorf("partition %d received %q, want %q", p, seen[p], want)
		}
	}
	// At most three requests held per broker, and the batches waiting
	// behind them fit in one more request: 30 partitions in at most 4
	// requests.
	for b, n := range perBroker {
		if n > sinkMaxInflight+1 {
			t.Errorf("broker %d got %d produce requests, want at most %d", b, n, sinkMaxInflight+1)
		}
	}
	if min := (partitions/2 + sinkMaxInflight) / (sinkMaxInflight + 1); widest < min {
		t.Errorf("widest request carried %d partitions, want at least %d", widest, min)
	}
	for _, b := range fc.Brokers {
		// One connection for metadata at most, and one per request in
		// flight.
		if n := b.NumConns(); n > sinkMaxInflight+1 {
			t.Errorf("broker %d: %d connections, want at most %d", b.ID, n, sinkMaxInflight+1)
		}
	}
}

// TestWriterRetriesEachPartitionOfAResponse answers one request for
// several partitions with an error for some of them only: those, and only
// those, are sent again; the others are acknowledged once.
func TestWriterRetriesEachPartitionOfAResponse(t *testing.T) {
	const partitions = 8
	fc := fakebroker.New(t, 1)
	for p := int32(0); p < partitions; p++ {
		fc.SetLeader(p, 1)
	}
	var mu sync.Mutex
	appended := map[int32][]string{}
	failed := map[int32]bool{}
	requests := 0
	fc.SetHandler(func(r *fakebroker.Request) {
		req, ok := r.Msg.(*produceAPI.Request)
		if !ok {
			return
		}
		parts := decodeProduceRequest(t, req)
		mu.Lock()
		requests++
		codes := map[int32]int16{}
		for p, values := range parts {
			if p%2 == 1 && !failed[p] {
				failed[p] = true
				codes[p] = int16(NotEnoughReplicas) // retriable, not appended
				continue
			}
			appended[p] = append(appended[p], values...)
		}
		mu.Unlock()
		answerProduce(r, func(p int32) int16 { return codes[p] })
	})

	w := &Writer{Addr: fc.Addr(), Topic: "t", Transport: tpNewTransport(t), Balancer: partitionByKey,
		BatchSize: 1000, BatchTimeout: time.Hour, RequiredAcks: RequireOne, WriteBackoffMin: time.Millisecond}
	defer w.Close()
	var msgs []Message
	for p := 0; p < partitions; p++ {
		msgs = append(msgs, keyed(p, "a"+strconv.Itoa(p)), keyed(p, "b"+strconv.Itoa(p)))
	}
	ctx := testContext(t)
	done := make(chan error, 1)
	go func() { done <- w.WriteMessages(ctx, msgs...) }()
	// The synchronous call's batches stay open until Flush closes them all
	// at once, so that they share requests.
	eventually(t, "every partition holds a batch", func() bool {
		return len(w.partitionWriters()) == partitions
	})
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	for p := int32(0); p < partitions; p++ {
		want := fmt.Sprint([]string{"a" + strconv.Itoa(int(p)), "b" + strconv.Itoa(int(p))})
		if got := fmt.Sprint(appended[p]); got != want {
			t.Errorf("partition %d appended %s, want %s once", p, got, want)
		}
	}
	if len(failed) != partitions/2 {
		t.Errorf("%d partitions failed once, want %d", len(failed), partitions/2)
	}
	if s := w.Stats(); s.Retries != partitions/2 {
		t.Errorf("%d retries, want %d (one per failed partition)", s.Retries, partitions/2)
	}
	if requests >= 2*partitions {
		t.Errorf("%d requests for %d partitions: the partitions did not share requests", requests, partitions)
	}
}

// TestWriterFollowsLeaderToItsBroker moves a partition's leadership: the
// old leader refuses with NOT_LEADER_OR_FOLLOWER, and the batch must reach
// the new leader, once.
func TestWriterFollowsLeaderToItsBroker(t *testing.T) {
	fc := fakebroker.New(t, 2)
	fc.SetLeader(0, 1)
	fc.SetLeader(1, 2)
	var mu sync.Mutex
	appended := map[int32][]string{} // broker -> values of partition 0
	leader := int32(1)
	fc.SetHandler(func(r *fakebroker.Request) {
		req, ok := r.Msg.(*produceAPI.Request)
		if !ok {
			return
		}
		parts := decodeProduceRequest(t, req)
		mu.Lock()
		codes := map[int32]int16{}
		for p, values := range parts {
			if p == 0 && r.Broker != leader {
				codes[p] = int16(NotLeaderForPartition)
				continue
			}
			if p == 0 {
				appended[r.Broker] = append(appended[r.Broker], values...)
			}
		}
		mu.Unlock()
		answerProduce(r, func(p int32) int16 { return codes[p] })
	})

	w := &Writer{Addr: fc.Addr(), Topic: "t", Transport: tpNewTransport(t), Balancer: partitionByKey,
		BatchSize: 1, RequiredAcks: RequireOne, WriteBackoffMin: time.Millisecond}
	defer w.Close()
	ctx := testContext(t)
	if err := w.WriteMessages(ctx, keyed(0, "before"), keyed(1, "x")); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	leader = 2
	mu.Unlock()
	fc.SetLeader(0, 2)
	if err := w.WriteMessages(ctx, keyed(0, "after")); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := fmt.Sprint(appended[1], appended[2]); got != "[before] [after]" {
		t.Fatalf("partition 0 appended on brokers 1, 2: %s, want [before] [after]", got)
	}
	if n := w.Stats().Retries; n < 1 {
		t.Fatalf("%d retries: the old leader's refusal was not retried", n)
	}
}

// TestWriterKeepsOrderPerPartitionUnderFaults writes to many partitions of
// one broker while every third request for a partition fails with a
// retriable error, so that requests mix first attempts and retries: every
// partition must hold its messages once each, in the order written.
func TestWriterKeepsOrderPerPartitionUnderFaults(t *testing.T) {
	const partitions, perPartition = 50, 40
	s := newStubBroker(map[string]int{"t": partitions})
	s.failEvery = 3
	s.failCode = int16(NotEnoughReplicas)
	w := &Writer{Addr: TCP("stub"), Topic: "t", Transport: s, Balancer: partitionByKey,
		BatchSize: 3, BatchTimeout: time.Millisecond, Async: true, RequiredAcks: RequireOne,
		MaxAttempts: 100, WriteBackoffMin: time.Millisecond, WriteBackoffMax: time.Millisecond,
		MaxBufferedBatches: 2, MaxBufferedBytes: 4096}
	var failures sync.Map
	w.Completion = func(msgs []Message, err error) {
		if err != nil {
			failures.Store(string(msgs[0].Value), err)
		}
	}
	ctx := testContext(t)
	for i := 0; i < perPartition; i++ {
		var msgs []Message
		for p := 0; p < partitions; p++ {
			msgs = append(msgs, keyed(p, strconv.Itoa(i)))
		}
		if err := w.WriteMessages(ctx, msgs...); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	failures.Range(func(k, v any) bool {
		t.Errorf("batch starting with %v failed: %v", k, v)
		return true
	})
	for p := 0; p < partitions; p++ {
		recs := s.records(topicPartition{topic: "t", partition: int32(p)})
		if len(recs) != perPartition {
			t.Fatalf("partition %d holds %d records, want %d", p, len(recs), perPartition)
		}
		for i, r := range recs {
			if r.value != strconv.Itoa(i) {
				t.Fatalf("partition %d: record %d is %q, want %q", p, i, r.value, strconv.Itoa(i))
			}
		}
	}
}

// concurrencyMeter is a RoundTripper that counts the Produce requests out
// at once, and holds them while gate is set.
type concurrencyMeter struct {
	RoundTripper
	mu        sync.Mutex
	now, peak int
	gate      chan struct{}
}

func (c *concurrencyMeter) hold() {
	c.mu.Lock()
	c.gate = make(chan struct{})
	c.mu.Unlock()
}

func (c *concurrencyMeter) release() {
	c.mu.Lock()
	close(c.gate)
	c.gate = nil
	c.mu.Unlock()
}

func (c *concurrencyMeter) RoundTrip(ctx context.Context, addr net.Addr, req Request) (Response, error) {
	if _, ok := req.(*produceAPI.Request); !ok {
		return c.RoundTripper.RoundTrip(ctx, addr, req)
	}
	c.mu.Lock()
	c.now++
	c.peak = max(c.peak, c.now)
	gate := c.gate
	c.mu.Unlock()
	if gate != nil {
		<-gate
	}
	defer func() {
		c.mu.Lock()
		c.now--
		c.mu.Unlock()
	}()
	return c.RoundTripper.RoundTrip(ctx, addr, req)
}

// TestWriterGoroutinesDoNotFollowPartitions writes to 1000 partitions:
// the Writer's goroutines stay a small constant, with a batch open on
// every partition, while a broker holds the requests, and once idle; and
// no more than sinkMaxInflight requests are out at once.
func TestWriterGoroutinesDoNotFollowPartitions(t *testing.T) {
	const partitions = 1000
	s := newStubBroker(map[string]int{"t": partitions})
	meter := &concurrencyMeter{RoundTripper: s}
	baseline := runtime.NumGoroutine()
	w := &Writer{Addr: TCP("stub"), Topic: "t", Transport: meter, Balancer: partitionByKey,
		BatchSize: 10, BatchTimeout: time.Hour, Async: true, RequiredAcks: RequireOne,
		Completion: func([]Message, error) {}}
	ctx := testContext(t)
	var msgs []Message
	for p := 0; p < partitions; p++ {
		msgs = append(msgs, keyed(p, "v"))
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	// Every partition has an open batch, waiting for its BatchTimeout.
	// Goroutines of earlier tests may still be on their way out, so the
	// count is awaited rather than sampled once: a goroutine per partition
	// (a thousand) never gets there.
	eventually(t, fmt.Sprintf("at most 2 goroutines with %d open batches", partitions), func() bool {
		return runtime.NumGoroutine()-baseline <= 2
	})

	meter.hold()
	flushed := make(chan error, 1)
	go func() { flushed <- w.Flush(ctx) }()
	eventually(t, "requests held", func() bool {
		meter.mu.Lock()
		defer meter.mu.Unlock()
		return meter.now > 0
	})
	// The Flush call's goroutine, and one per request out.
	eventually(t, fmt.Sprintf("at most %d goroutines with %d requests out", sinkMaxInflight+1, sinkMaxInflight), func() bool {
		return runtime.NumGoroutine()-baseline <= sinkMaxInflight+1
	})
	meter.release()
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if meter.peak > sinkMaxInflight {
		t.Errorf("%d produce requests out at once, want at most %d", meter.peak, sinkMaxInflight)
	}
	if got := s.totalRecords(); got != partitions {
		t.Errorf("%d records, want %d", got, partitions)
	}
	checkNoGoroutineLeak(t, baseline)
}

// lossyAnswers drops from every other Produce response the answer of one
// partition (and takes the batch out of the stub's log), and adds the
// answer of a partition that was not asked for: the Writer must report the
// unanswered batch failed (as it always did for a response without its
// partition), ignore the stray answer, deliver every other batch in order
// within the same responses, and neither panic nor lose nor duplicate a
// message.
type lossyAnswers struct {
	*stubBroker
	mu sync.Mutex
	n  int
}

func (l *lossyAnswers) RoundTrip(ctx context.Context, addr net.Addr, req Request) (Response, error) {
	res, err := l.stubBroker.RoundTrip(ctx, addr, req)
	r, ok := res.(*produceAPI.Response)
	if err != nil || !ok || len(r.Topics) == 0 {
		return res, err
	}
	l.mu.Lock()
	l.n++
	lossy := l.n%2 == 1
	l.mu.Unlock()
	if lossy {
		t := &r.Topics[0]
		dropped := t.Partitions[0]
		t.Partitions = t.Partitions[1:]
		// Dropped from the answer but appended by the broker: delete
		// it from the stub's log, since the Writer sends it again.
		l.stubBroker.mu.Lock()
		tp := topicPartition{topic: t.Topic, partition: dropped.Partition}
		n := l.stubBroker.sizes[tp][len(l.stubBroker.sizes[tp])-1]
		l.stubBroker.sizes[tp] = l.stubBroker.sizes[tp][:len(l.stubBroker.sizes[tp])-1]
		l.stubBroker.log[tp] = l.stubBroker.log[tp][:len(l.stubBroker.log[tp])-n]
		l.stubBroker.mu.Unlock()
		t.Partitions = append(t.Partitions, produceAPI.ResponsePartition{Partition: 9999, ErrorCode: int16(NotLeaderForPartition)})
	}
	return r, nil
}

func TestWriterSurvivesIncompleteProduceAnswers(t *testing.T) {
	const partitions = 20
	s := newStubBroker(map[string]int{"t": partitions})
	w := &Writer{Addr: TCP("stub"), Topic: "t", Transport: &lossyAnswers{stubBroker: s}, Balancer: partitionByKey,
		BatchSize: 1, RequiredAcks: RequireOne, MaxAttempts: 50,
		WriteBackoffMin: time.Millisecond, WriteBackoffMax: time.Millisecond}
	defer w.Close()
	ctx := testContext(t)
	var msgs []Message
	for i := 0; i < 5; i++ {
		for p := 0; p < partitions; p++ {
			msgs = append(msgs, keyed(p, strconv.Itoa(i)))
		}
	}
	err := w.WriteMessages(ctx, msgs...)
	var werr WriteErrors
	if err != nil && !errors.As(err, &werr) {
		t.Fatal(err)
	}
	for p := 0; p < partitions; p++ {
		var want []string
		for i := 0; i < 5; i++ {
			if werr == nil || werr[i*partitions+p] == nil {
				want = append(want, strconv.Itoa(i))
			}
		}
		var got []string
		for _, r := range s.records(topicPartition{topic: "t", partition: int32(p)}) {
			got = append(got, r.value)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("partition %d holds %v, want %v", p, got, want)
		}
	}
	failed := 0
	for _, err := range werr {
		if err != nil {
			failed++
			if !errors.Is(err, protocol.ErrNoPartition) {
				t.Errorf("message failed with %v, want a missing partition", err)
			}
		}
	}
	if failed == 0 {
		t.Error("no message failed: the lossy answers were not exercised")
	}
	t.Logf("%d messages reported failed (%v)", failed, err)
}

// TestWriterIdlePartitionCost measures the heap an idle partition costs
// the Writer (written to once, its batch acknowledged): it must stay a few
// hundred bytes, since a program may write to thousands of partitions.
func TestWriterIdlePartitionCost(t *testing.T) {
	const partitions = 5000
	w := &Writer{Addr: TCP("stub"), Topic: "t", Transport: ackAll{partitions: partitions}, Balancer: partitionByKey,
		BatchSize: 1, RequiredAcks: RequireOne, MaxBufferedBatches: 4, MaxBufferedBytes: 1 << 20}
	defer w.Close()
	ctx := testContext(t)
	// The Writer's own state (metadata, sinks, ...) exists before the
	// measure starts.
	if err := w.WriteMessages(ctx, keyed(0, "v")); err != nil {
		t.Fatal(err)
	}
	before := heapInUse()
	var msgs []Message
	for p := 1; p < partitions; p++ {
		msgs = append(msgs, keyed(p, "v"))
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	msgs = nil
	after := heapInUse()
	perPartition := (after - before) / (partitions - 1)
	t.Logf("idle partition: %d bytes of heap (partitionWriter %d bytes)", perPartition, unsafe.Sizeof(partitionWriter{}))
	if perPartition > idlePartitionBytes {
		t.Errorf("an idle partition costs %d bytes, want at most %d", perPartition, idlePartitionBytes)
	}
	runtime.KeepAlive(w)
}

// ackAll is a RoundTripper for topic "t" that acknowledges every produced
// batch and keeps nothing, so that a test measures the Writer's memory
// alone.
type ackAll struct{ partitions int }

func (a ackAll) RoundTrip(ctx context.Context, addr net.Addr, req Request) (Response, error) {
	switch r := req.(type) {
	case *metadataAPI.Request:
		t := metadataAPI.ResponseTopic{Name: "t"}
		for p := 0; p < a.partitions; p++ {
			t.Partitions = append(t.Partitions, metadataAPI.ResponsePartition{PartitionIndex: int32(p), LeaderID: 1})
		}
		return &metadataAPI.Response{Brokers: []metadataAPI.ResponseBroker{{NodeID: 1, Host: "stub", Port: 9092}}, Topics: []metadataAPI.ResponseTopic{t}}, nil
	case *produceAPI.Request:
		res := &produceAPI.Response{}
		for _, t := range r.Topics {
			rt := produceAPI.ResponseTopic{Topic: t.Topic}
			for _, p := range t.Partitions {
				for {
					if _, err := p.RecordSet.Records.ReadRecord(); err != nil {
						break
					}
				}
				rt.Partitions = append(rt.Partitions, produceAPI.ResponsePartition{Partition: p.Partition, LogAppendTime: -1})
			}
			res.Topics = append(res.Topics, rt)
		}
		if r.Acks == 0 {
			return nil, nil
		}
		return res, nil
	}
	return nil, fmt.Errorf("ackAll: unexpected %T", req)
}

// idlePartitionBytes is the heap an idle partition may cost (see
// docs/backpressure.md).
const idlePartitionBytes = 512

// heapInUse returns the live heap after a full collection.
func heapInUse() int64 {
	var ms runtime.MemStats
	for i := 0; i < 2; i++ {
		runtime.GC()
	}
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// TestWriterCompletionChainAcrossPartitions makes the Completion of each
// partition's first batch write synchronously to the next partition, whose
// batch is done only once its own Completion has returned: a chain of 20
// Completion calls each waiting for the next. The Writer's completion
// workers must not make a waiting call queue behind the calls that wait
// for it.
func TestWriterCompletionChainAcrossPartitions(t *testing.T) {
	testCompletionChain(t, 20)
}

// TestWriterCompletionChainWithoutWatchdog runs a chain of 100 Completion
// calls, each writing synchronously to the next partition, with the
// completion watchdog's wait set to an hour: each link waits inside the
// Writer, which must start the next link's worker at once
// (completionWorkers.park), not after the watchdog's wait (up to 100 ms
// per link otherwise).
func TestWriterCompletionChainWithoutWatchdog(t *testing.T) {
	stall, stallMax := completionStall, completionStallMax
	completionStall, completionStallMax = time.Hour, time.Hour
	defer func() { completionStall, completionStallMax = stall, stallMax }()
	testCompletionChain(t, 100)
}

func testCompletionChain(t *testing.T, partitions int) {
	s := newStubBroker(map[string]int{"t": partitions})
	var w *Writer
	var mu sync.Mutex
	var chained []string
	w = &Writer{Addr: TCP("stub"), Topic: "t", Transport: s, Balancer: partitionByKey,
		BatchSize: 1, RequiredAcks: RequireOne, MaxBufferedBatches: 1,
		Completion: func(msgs []Message, err error) {
			if err != nil {
				t.Error(err)
				return
			}
			p := msgs[0].Partition
			mu.Lock()
			chained = append(chained, string(msgs[0].Value))
			mu.Unlock()
			if p+1 < partitions {
				if err := w.WriteMessages(context.Background(), keyed(p+1, "chained")); err != nil {
					t.Error(err)
				}
			}
		}}
	defer w.Close()
	ctx := testContext(t)
	done := make(chan error, 1)
	go func() {
		done <- w.WriteMessages(ctx, keyed(0, "chained"))
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("the chain of Completion calls deadlocked")
	}
	for p := 0; p < partitions; p++ {
		if got := len(s.records(topicPartition{topic: "t", partition: int32(p)})); got != 1 {
			t.Errorf("partition %d holds %d records, want 1", p, got)
		}
	}
	if len(chained) != partitions {
		t.Errorf("%d Completion calls, want %d", len(chained), partitions)
	}
}

// TestWriterCompletionWorkersNeverStrandAPartition hands two partitions'
// outcomes to the completion workers at once, each Completion waiting for
// the other's to start: the partition queued behind the first call must
// get a worker of its own, although a worker was idle when it was queued.
func TestWriterCompletionWorkersNeverStrandAPartition(t *testing.T) {
	ctx := testContext(t)
	var started sync.WaitGroup
	started.Add(2)
	w := &Writer{Addr: TCP("stub"), Topic: "t", Transport: newStubBroker(map[string]int{"t": 2}),
		Completion: func(msgs []Message, err error) {
			started.Done()
			waited := make(chan struct{})
			go func() { started.Wait(); close(waited) }()
			select {
			case <-waited:
			case <-ctx.Done():
				t.Error("a Completion call never started while another waited for it")
			}
		}}
	defer w.Close()
	var pws []*partitionWriter
	for p := int32(0); p < 2; p++ {
		pws = append(pws, w.partitionWriter(topicPartition{topic: "t", partition: p}))
	}
	var batches []*writeBatch
	for _, pw := range pws {
		b := &writeBatch{done: make(chan struct{})}
		b.add(&Message{Value: []byte("v")}, true)
		batches = append(batches, b)
		pw.completing.Add(1)
		w.inflight.Add(1) // as a sink holds while it hands outcomes over
		pw.mu.Lock()
		start := pw.queueCompletionLocked(b)
		pw.mu.Unlock()
		if start {
			pw.startCompletions()
		}
		w.inflight.Done()
	}
	for _, b := range batches {
		select {
		case <-b.done:
		case <-ctx.Done():
			t.Fatal("a batch was never finished")
		}
	}
}
