package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/compress"
	"github.com/segmentio/kafka-go/protocol"
)

func seqMessages(prefix string, from, to int) []Message {
	msgs := make([]Message, 0, to-from)
	for i := from; i < to; i++ {
		msgs = append(msgs, Message{Key: []byte(prefix), Value: []byte(strconv.Itoa(i))})
	}
	return msgs
}

// keyBalancer sends a message to the partition written in its key ("p3" ->
// 3), so that tests choose partitions exactly.
var keyBalancer = BalancerFunc(func(msg Message, partitions ...int) int {
	n, err := strconv.Atoi(string(msg.Key[1:]))
	if err != nil || n >= len(partitions) {
		panic(fmt.Sprintf("bad test key %q", msg.Key))
	}
	return partitions[n]
})

// assertInOrder checks that recs are the values from..to-1 in order, each
// exactly once.
func assertInOrder(t *testing.T, recs []stubRecord, from, to int) {
	t.Helper()
	if len(recs) != to-from {
		t.Fatalf("got %d records, want %d", len(recs), to-from)
	}
	for i, r := range recs {
		if want := strconv.Itoa(from + i); r.value != want {
			t.Fatalf("record %d is %q, want %q (order broken or duplicate)", i, r.value, want)
		}
	}
}

func TestWriterDefaults(t *testing.T) {
	w := &Writer{}
	s := w.Stats()
	checks := []struct {
		name      string
		got, want interface{}
	}{
		{"MaxAttempts", s.MaxAttempts, int64(10)},
		{"WriteBackoffMin", s.WriteBackoffMin, 100 * time.Millisecond},
		{"WriteBackoffMax", s.WriteBackoffMax, time.Second},
		{"MaxBatchSize", s.MaxBatchSize, int64(100)},
		{"BatchTimeout", s.BatchTimeout, time.Second},
		{"ReadTimeout", s.ReadTimeout, 10 * time.Second},
		{"WriteTimeout", s.WriteTimeout, 10 * time.Second},
		{"RequiredAcks", s.RequiredAcks, int64(RequireNone)},
		{"Async", s.Async, false},
		{"MaxBufferedBatches", s.MaxBufferedBatches, int64(0)},
		{"MaxBufferedBytes", s.MaxBufferedBytes, int64(0)},
		{"batchBytes", w.batchBytes(), int64(1048576)},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestWriterValidation(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 1})
	ctx := context.Background()

	if err := (&Writer{Topic: "t"}).WriteMessages(ctx, Message{}); err == nil ||
		err.Error() != "kafka.(*Writer).WriteMessages: cannot create a kafka writer with a nil address" {
		t.Errorf("nil Addr: %v", err)
	}

	w := &Writer{Addr: TCP("stub"), Topic: "t", Transport: stub}
	if err := w.WriteMessages(ctx); err != nil {
		t.Errorf("no messages: %v", err)
	}
	if err := w.WriteMessages(ctx, Message{Topic: "t"}); err == nil ||
		err.Error() != "kafka.(*Writer): Topic must not be specified for both Writer and Message" {
		t.Errorf("both topics: %v", err)
	}
	w2 := &Writer{Addr: TCP("stub"), Transport: stub}
	if err := w2.WriteMessages(ctx, Message{}); err == nil ||
		err.Error() != "kafka.(*Writer): Topic must be specified for Writer or Message" {
		t.Errorf("no topic: %v", err)
	}

	// A message over BatchBytes fails the whole call, naming it.
	w3 := &Writer{Addr: TCP("stub"), Topic: "t", Transport: stub, BatchBytes: 100}
	msgs := []Message{{Value: []byte("a")}, {Value: make([]byte, 200)}, {Value: []byte("c")}}
	err := w3.WriteMessages(ctx, msgs...)
	var tooLarge MessageTooLargeError
	if !errors.As(err, &tooLarge) || !errors.Is(err, MessageSizeTooLarge) {
		t.Fatalf("oversized message: %v", err)
	}
	if len(tooLarge.Message.Value) != 200 || len(tooLarge.Remaining) != 2 {
		t.Errorf("MessageTooLargeError names the wrong messages: %+v", tooLarge)
	}
	if n := stub.totalRecords(); n != 0 {
		t.Errorf("%d records written by a rejected call", n)
	}

	// The same with a byte budget smaller than BatchBytes.
	w4 := &Writer{Addr: TCP("stub"), Topic: "t", Transport: stub, MaxBufferedBytes: 50}
	if err := w4.WriteMessages(ctx, Message{Value: make([]byte, 60)}); !errors.As(err, &tooLarge) {
		t.Errorf("message over MaxBufferedBytes: %v", err)
	}

	for _, w := range []*Writer{w, w2, w3, w4} {
		w.Close()
	}
	if err := w.WriteMessages(ctx, Message{}); err != io.ErrClosedPipe {
		t.Errorf("write after Close: %v", err)
	}
	if err := w.Flush(ctx); err != io.ErrClosedPipe {
		t.Errorf("flush after Close: %v", err)
	}
}

func TestWriterSyncDelivers(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 3})
	var mu sync.Mutex
	var completed []Message
	w := &Writer{
		Addr:         TCP("stub"),
		Topic:        "t",
		Transport:    stub,
		Balancer:     keyBalancer,
		BatchSize:    4,
		BatchTimeout: 5 * time.Millisecond,
		RequiredAcks: RequireAll,
		Compression:  compress.Snappy,
		Completion: func(msgs []Message, err error) {
			if err != nil {
				t.Errorf("completion error: %v", err)
			}
			mu.Lock()
			completed = append(completed, msgs...)
			mu.Unlock()
		},
	}
	defer shutdown(w, stub)

	var msgs []Message
	for p := 0; p < 3; p++ {
		msgs = append(msgs, seqMessages("p"+strconv.Itoa(p), 0, 10)...)
	}
	if err := w.WriteMessages(context.Background(), msgs...); err != nil {
		t.Fatal(err)
	}
	for p := 0; p < 3; p++ {
		assertInOrder(t, stub.records(topicPartition{"t", int32(p)}), 0, 10)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(completed) != 30 {
		t.Fatalf("completion saw %d messages, want 30", len(completed))
	}
	for _, m := range completed {
		v, _ := strconv.Atoi(string(m.Value))
		if m.Topic != "t" || strconv.Itoa(m.Partition) != string(m.Key[1:]) || m.Offset != int64(v) {
			t.Errorf("completed message has topic=%q partition=%d offset=%d, value %d", m.Topic, m.Partition, m.Offset, v)
		}
	}
	for _, a := range stub.attributes {
		if a.Compression() != compress.Snappy {
			t.Errorf("batch sent with compression %v", a.Compression())
		}
	}
	for _, acks := range stub.acks {
		if acks != -1 {
			t.Errorf("batch sent with acks %d", acks)
		}
	}
	if s := w.Stats(); s.Messages != 30 || s.Writes < 8 || s.Topic != "t" {
		t.Errorf("stats: messages %d, writes %d", s.Messages, s.Writes)
	}
}

func TestWriterRetriesLeaderChanges(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 1})
	tp := topicPartition{"t", 0}
	stub.metaErrors["t"] = []int16{int16(LeaderNotAvailable)}
	stub.produceErrors[tp] = []int16{int16(NotLeaderForPartition), int16(LeaderNotAvailable)}
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, BatchTimeout: time.Millisecond,
		WriteBackoffMin: time.Microsecond, WriteBackoffMax: time.Millisecond, RequiredAcks: RequireOne,
	}
	defer shutdown(w, stub)
	if err := w.WriteMessages(context.Background(), seqMessages("p0", 0, 3)...); err != nil {
		t.Fatal(err)
	}
	assertInOrder(t, stub.records(tp), 0, 3)
	if s := w.Stats(); s.Retries != 2 || s.Errors != 2 || s.Writes != 3 {
		t.Errorf("retries %d, errors %d, writes %d", s.Retries, s.Errors, s.Writes)
	}
}

func TestWriterNonRetriableError(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 1})
	tp := topicPartition{"t", 0}
	stub.produceErrors[tp] = []int16{int16(TopicAuthorizationFailed)}
	w := &Writer{Addr: TCP("stub"), Topic: "t", Transport: stub, BatchTimeout: time.Millisecond, RequiredAcks: RequireOne}
	defer shutdown(w, stub)
	err := w.WriteMessages(context.Background(), seqMessages("p0", 0, 2)...)
	var werr WriteErrors
	if !errors.As(err, &werr) || len(werr) != 2 || werr.Count() != 2 || !errors.Is(werr[1], TopicAuthorizationFailed) {
		t.Fatalf("err = %v", err)
	}
	if s := w.Stats(); s.Retries != 0 {
		t.Errorf("a non-retriable error was retried %d times", s.Retries)
	}
}

func TestWriterMaxAttempts(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 1})
	tp := topicPartition{"t", 0}
	stub.produceErrors[tp] = []int16{6, 6, 6, 6}
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, BatchTimeout: time.Millisecond, MaxAttempts: 3,
		WriteBackoffMin: time.Microsecond, WriteBackoffMax: time.Microsecond, RequiredAcks: RequireOne,
	}
	defer shutdown(w, stub)
	err := w.WriteMessages(context.Background(), Message{Value: []byte("x")})
	var werr WriteErrors
	if !errors.As(err, &werr) || !errors.Is(werr[0], NotLeaderForPartition) {
		t.Fatalf("err = %v", err)
	}
	if s := w.Stats(); s.Writes != 3 {
		t.Errorf("%d attempts, want 3", s.Writes)
	}
}

func TestWriterRequireNoneHasNoOffsets(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 1})
	done := make(chan []Message, 1)
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, BatchTimeout: time.Millisecond,
		Completion: func(msgs []Message, err error) { done <- msgs },
	}
	defer shutdown(w, stub)
	if err := w.WriteMessages(context.Background(), Message{Value: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	msgs := <-done
	if stub.acks[0] != 0 || len(msgs) != 1 || msgs[0].Topic != "" {
		t.Errorf("acks %d; messages %+v", stub.acks[0], msgs)
	}
}

func TestWriterTopicPerMessage(t *testing.T) {
	stub := newStubBroker(map[string]int{"a": 1})
	stub.autoCreate = 2
	w := &Writer{Addr: TCP("stub"), Transport: stub, BatchTimeout: time.Millisecond, AllowAutoTopicCreation: true}
	defer shutdown(w, stub)
	err := w.WriteMessages(context.Background(),
		Message{Topic: "a", Value: []byte("0")}, Message{Topic: "b", Value: []byte("0")})
	if err != nil {
		t.Fatal(err)
	}
	if len(stub.records(topicPartition{"a", 0})) != 1 || stub.totalRecords() != 2 {
		t.Errorf("records not routed by message topic")
	}
	w2 := &Writer{Addr: TCP("stub"), Transport: stub}
	defer w2.Close()
	err = w2.WriteMessages(context.Background(), Message{Topic: "missing"})
	if !errors.Is(err, UnknownTopicOrPartition) {
		t.Errorf("unknown topic: %v", err)
	}
}

// With retriable failures sprinkled over thousands of small batches, each
// partition still receives its messages exactly once and in order, and
// never has two produce requests in flight.
func TestWriterOrderAcrossBatchesAndRetries(t *testing.T) {
	for _, n := range []int{0, 1, 3} {
		t.Run(fmt.Sprintf("MaxBufferedBatches=%d", n), func(t *testing.T) {
			stub := newStubBroker(map[string]int{"t": 4})
			stub.failEvery, stub.failCode = 7, int16(NotLeaderForPartition)
			w := &Writer{
				Addr: TCP("stub"), Topic: "t", Transport: stub, Balancer: keyBalancer,
				BatchSize: 3, BatchTimeout: time.Millisecond, Async: true, MaxBufferedBatches: n,
				WriteBackoffMin: time.Microsecond, WriteBackoffMax: time.Microsecond, RequiredAcks: RequireOne,
			}
			var wg sync.WaitGroup
			for p := 0; p < 4; p++ {
				wg.Add(1)
				go func(p int) {
					defer wg.Done()
					for i := 0; i < 500; i++ {
						if err := w.WriteMessages(context.Background(), seqMessages("p"+strconv.Itoa(p), i, i+1)...); err != nil {
							t.Error(err)
							return
						}
					}
				}(p)
			}
			wg.Wait()
			w.Close()
			for p := 0; p < 4; p++ {
				assertInOrder(t, stub.records(topicPartition{"t", int32(p)}), 0, 500)
			}
			if stub.overlaps() != 0 {
				t.Errorf("%d produce requests overlapped on a partition", stub.overlaps())
			}
		})
	}
}

func TestWriterRecordsCarryMessageFields(t *testing.T) {
	msgs := []Message{
		{Key: []byte("k"), Value: []byte("v"), Headers: []Header{{Key: "h", Value: []byte("1")}}, Time: time.Unix(1700000000, 0)},
		{Value: []byte("no key")},
	}
	var b writeBatch
	for i := range msgs {
		b.add(&msgs[i], false)
	}
	msgs[0].Value[0] = 'x' // the batch holds a copy: the caller may reuse its buffers
	if b.extras != nil {
		t.Fatal("a batch without Completion keeps message fields")
	}
	r := b.recs.Reader()
	rec, err := r.ReadRecord()
	if err != nil {
		t.Fatal(err)
	}
	k, _ := protocol.ReadAll(rec.Key)
	v, _ := protocol.ReadAll(rec.Value)
	if string(k) != "k" || string(v) != "v" || len(rec.Headers) != 1 || !rec.Time.Equal(msgs[0].Time) {
		t.Errorf("first record: %q %q %v %v", k, v, rec.Headers, rec.Time)
	}
	rec, err = r.ReadRecord()
	if err != nil || rec.Key != nil {
		t.Fatalf("a nil key must stay null: %v %v", rec.Key, err)
	}
	if _, err := r.ReadRecord(); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
}

func TestWriterBackoff(t *testing.T) {
	min, max := 100*time.Millisecond, time.Second
	for attempt, want := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 400 * time.Millisecond, 3: 900 * time.Millisecond, 4: time.Second, 50: time.Second} {
		if got := backoff(attempt, min, max); got != want {
			t.Errorf("backoff(%d) = %v, want %v", attempt, got, want)
		}
	}
}

type fixedResolver []string

func (r fixedResolver) LookupHost(context.Context, string) ([]string, error) { return r, nil }

func TestNewWriter(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewWriter without brokers must panic")
		}
	}()
	var dialed []string
	w := NewWriter(WriterConfig{
		Brokers:            []string{"broker-a:9092"},
		Topic:              "t",
		BatchBytes:         4096,
		MaxBufferedBatches: 3,
		MaxBufferedBytes:   1 << 20,
		CompressionCodec:   compress.Lz4.Codec(),
		Dialer: &Dialer{
			Resolver: fixedResolver{"10.0.0.7:1234"},
			DialFunc: func(ctx context.Context, network, address string) (net.Conn, error) {
				dialed = append(dialed, address)
				return nil, errors.New("no network in unit tests")
			},
		},
	})
	if w.RequiredAcks != RequireAll {
		t.Errorf("RequiredAcks = %v, want all (NewWriter's historical default)", w.RequiredAcks)
	}
	if w.Compression != compress.Lz4 || w.BatchBytes != 4096 || w.MaxBufferedBatches != 3 || w.MaxBufferedBytes != 1<<20 {
		t.Errorf("config not carried over: %+v", w)
	}
	if w.Addr.String() != "broker-a:9092" {
		t.Errorf("Addr = %v", w.Addr)
	}
	tr, ok := w.Transport.(*Transport)
	if !ok || tr.IdleTimeout != 9*time.Minute || tr.MetadataTTL != 15*time.Second {
		t.Fatalf("transport: %+v", w.Transport)
	}
	// The dial function resolves with the custom resolver, keeps the port
	// asked for, and is counted in the deprecated dial stats.
	if _, err := tr.Dial(context.Background(), "tcp", "broker-a:9092"); err == nil {
		t.Fatal("expected the stub dial error")
	}
	if len(dialed) != 1 || dialed[0] != "10.0.0.7:9092" {
		t.Errorf("dialed %v", dialed)
	}
	if s := w.Stats(); s.Dials != 1 || s.DialTime.Count != 1 {
		t.Errorf("dials %d, dial time count %d", s.Dials, s.DialTime.Count)
	}
	w.Close()

	if err := (&WriterConfig{}).Validate(); err == nil {
		t.Error("Validate accepted an empty broker list")
	}
	NewWriter(WriterConfig{})
}

// A call spanning many partitions and topics, interleaved, keeps each
// partition's messages in call order.
func TestWriterManyPartitionsOneCall(t *testing.T) {
	stub := newStubBroker(map[string]int{"a": 20, "b": 20})
	w := &Writer{
		Addr: TCP("stub"), Transport: stub, Balancer: keyBalancer, BatchSize: 7,
		BatchTimeout: time.Millisecond, RequiredAcks: RequireOne, MaxBufferedBatches: 2,
	}
	defer shutdown(w, stub)
	var msgs []Message
	for i := 0; i < 30; i++ {
		for p := 0; p < 20; p++ {
			for _, topic := range []string{"a", "b"} {
				msgs = append(msgs, Message{Topic: topic, Key: []byte("p" + strconv.Itoa(p)), Value: []byte(strconv.Itoa(i))})
			}
		}
	}
	if err := w.WriteMessages(context.Background(), msgs...); err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{"a", "b"} {
		for p := 0; p < 20; p++ {
			assertInOrder(t, stub.records(topicPartition{topic, int32(p)}), 0, 30)
		}
	}
}

func TestWriterPartitionGroupIndexes(t *testing.T) {
	g := partitionGroup{shared: true, indexes: identityIndexes[:0:0]}
	for i := int32(0); i < 300; i++ {
		g.add(i)
	}
	if g.shared || len(g.indexes) != 300 || g.indexes[299] != 299 {
		t.Fatalf("indexes past the shared prefix: shared=%v len=%d", g.shared, len(g.indexes))
	}
	for i, v := range identityIndexes {
		if v != int32(i) {
			t.Fatalf("shared identity indexes were written to at %d", i)
		}
	}
	h := partitionGroup{shared: true, indexes: identityIndexes[:0:0]}
	h.add(0)
	h.add(2)
	h.add(5)
	if h.shared || len(h.indexes) != 3 || h.indexes[1] != 2 || identityIndexes[1] != 1 {
		t.Fatalf("non-contiguous indexes: %v", h.indexes)
	}
}

// The partition count is cached (one metadata request serves many calls)
// and refreshed after writerMetadataTTL, so partitions added to a topic
// start receiving messages.
func TestWriterPartitionCountCachedThenRefreshed(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 1})
	w := &Writer{Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 1, RequiredAcks: RequireOne}
	defer w.Close()
	ctx := context.Background()
	const calls = 200
	for i := 0; i < calls; i++ {
		if err := w.WriteMessages(ctx, seqMessages("a", i, i+1)...); err != nil {
			t.Fatal(err)
		}
	}
	stub.mu.Lock()
	asked := stub.metaRequests
	stub.partitions["t"] = 3
	stub.mu.Unlock()
	if asked >= calls/2 {
		t.Fatalf("%d metadata requests for %d calls: the partition count is not cached", asked, calls)
	}
	newPartitions := func() bool {
		return len(stub.records(topicPartition{"t", 1}))+len(stub.records(topicPartition{"t", 2})) > 0
	}
	i := calls
	eventually(t, "messages on the partitions added", func() bool {
		if err := w.WriteMessages(ctx, seqMessages("b", i, i+1)...); err != nil {
			t.Fatal(err)
		}
		i++
		return newPartitions()
	})
}
