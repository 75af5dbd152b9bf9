package kafka

import (
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	metadataAPI "github.com/segmentio/kafka-go/protocol/metadata"
	produceAPI "github.com/segmentio/kafka-go/protocol/produce"
)

// stubBroker is a RoundTripper standing in for a cluster in the Writer's
// unit tests. It answers Metadata from a table of topics, records the
// records of Produce requests in arrival order, can hold Produce requests
// until released, and can answer them with queued error codes.
type stubBroker struct {
	mu sync.Mutex

	partitions map[string]int
	autoCreate int // partitions of topics created on first sight (0: unknown topic)

	metaRequests int
	metaErrors   map[string][]int16

	produceErrors map[topicPartition][]int16
	log           map[topicPartition][]stubRecord
	attributes    []protocol.Attributes
	acks          []int16

	holdAll bool
	hold    map[topicPartition]bool
	held    map[topicPartition]int
	passes  map[topicPartition]int // held requests to let through, see releaseOne
	sizes   map[topicPartition][]int

	inflight      map[topicPartition]int
	overlapping   int // produce requests that found another in flight for their partition
	produceCalls  int
	failEvery     int   // when > 0, every failEvery-th produce answers failCode
	failCode      int16 // see failEvery
	produceDelay  time.Duration
	changed       chan struct{} // closed and replaced on every change of the hold state
	requestsSeen  chan struct{} // receives a token per produce request, if set
	ignoreContext bool          // keep holding even when the request's context ends
}

type stubRecord struct {
	key, value string
}

func newStubBroker(partitions map[string]int) *stubBroker {
	return &stubBroker{
		partitions:    partitions,
		metaErrors:    map[string][]int16{},
		produceErrors: map[topicPartition][]int16{},
		log:           map[topicPartition][]stubRecord{},
		hold:          map[topicPartition]bool{},
		held:          map[topicPartition]int{},
		passes:        map[topicPartition]int{},
		sizes:         map[topicPartition][]int{},
		inflight:      map[topicPartition]int{},
		changed:       make(chan struct{}),
	}
}

func (s *stubBroker) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// block holds the produce requests of the given partitions (of all of them
// when none is given) until release.
func (s *stubBroker) block(tps ...topicPartition) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(tps) == 0 {
		s.holdAll = true
	}
	for _, tp := range tps {
		s.hold[tp] = true
	}
	s.notifyLocked()
}

func (s *stubBroker) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holdAll = false
	s.hold = map[topicPartition]bool{}
	s.notifyLocked()
}

// releaseOne lets one held produce request of tp through (the writer has
// at most one in flight per partition) while the hold stays in force.
func (s *stubBroker) releaseOne(tp topicPartition) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.passes[tp]++
	s.notifyLocked()
}

// batchSizes returns the number of records of each produce request for tp
// that the broker appended, in order.
func (s *stubBroker) batchSizes(tp topicPartition) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.sizes[tp]...)
}

func (s *stubBroker) heldCount(tp topicPartition) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held[tp]
}

func (s *stubBroker) records(tp topicPartition) []stubRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]stubRecord(nil), s.log[tp]...)
}

func (s *stubBroker) totalRecords() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, recs := range s.log {
		n += len(recs)
	}
	return n
}

func (s *stubBroker) overlaps() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.overlapping
}

func (s *stubBroker) RoundTrip(ctx context.Context, addr net.Addr, req Request) (Response, error) {
	switch r := req.(type) {
	case *metadataAPI.Request:
		return s.metadata(r), nil
	case *produceAPI.Request:
		return s.produce(ctx, r)
	default:
		return nil, errors.New("stub broker: unsupported request")
	}
}

func (s *stubBroker) metadata(r *metadataAPI.Request) *metadataAPI.Response {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.metaRequests++
	res := &metadataAPI.Response{Brokers: []metadataAPI.ResponseBroker{{NodeID: 1, Host: "stub", Port: 9092}}}
	for _, name := range r.TopicNames {
		t := metadataAPI.ResponseTopic{Name: name}
		if codes := s.metaErrors[name]; len(codes) > 0 {
			t.ErrorCode = codes[0]
			s.metaErrors[name] = codes[1:]
			res.Topics = append(res.Topics, t)
			continue
		}
		n, ok := s.partitions[name]
		if !ok && s.autoCreate > 0 && r.AllowAutoTopicCreation {
			n, ok = s.autoCreate, true
			s.partitions[name] = n
		}
		if !ok {
			t.ErrorCode = int16(UnknownTopicOrPartition)
		}
		for p := 0; p < n; p++ {
			t.Partitions = append(t.Partitions, metadataAPI.ResponsePartition{PartitionIndex: int32(p), LeaderID: 1})
		}
		res.Topics = append(res.Topics, t)
	}
	return res
}

func (s *stubBroker) produce(ctx context.Context, r *produceAPI.Request) (Response, error) {
	if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
		return producePerPartition(r, func(one *produceAPI.Request) (Response, error) { return s.produce(ctx, one) })
	}
	topic := r.Topics[0].Topic
	part := r.Topics[0].Partitions[0]
	tp := topicPartition{topic: topic, partition: part.Partition}

	var recs []stubRecord
	for {
		rec, err := part.RecordSet.Records.ReadRecord()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		k, _ := protocol.ReadAll(rec.Key)
		v, _ := protocol.ReadAll(rec.Value)
		recs = append(recs, stubRecord{key: string(k), value: string(v)})
	}

	s.mu.Lock()
	s.produceCalls++
	s.attributes = append(s.attributes, part.RecordSet.Attributes)
	s.acks = append(s.acks, r.Acks)
	if s.requestsSeen != nil {
		select {
		case s.requestsSeen <- struct{}{}:
		default:
		}
	}
	s.inflight[tp]++
	if s.inflight[tp] > 1 {
		s.overlapping++
	}
	for s.holdAll || s.hold[tp] {
		if s.passes[tp] > 0 {
			s.passes[tp]--
			break
		}
		s.held[tp]++
		changed := s.changed
		s.mu.Unlock()
		var done <-chan struct{}
		if !s.ignoreContext {
			done = ctx.Done()
		}
		select {
		case <-changed:
			s.mu.Lock()
			s.held[tp]--
		case <-done:
			s.mu.Lock()
			s.held[tp]--
			s.inflight[tp]--
			s.mu.Unlock()
			return nil, ctx.Err()
		}
	}
	var code int16
	if codes := s.produceErrors[tp]; len(codes) > 0 {
		code = codes[0]
		s.produceErrors[tp] = codes[1:]
	} else if s.failEvery > 0 && s.produceCalls%s.failEvery == 0 {
		code = s.failCode
	}
	base := int64(len(s.log[tp]))
	if code == 0 {
		s.log[tp] = append(s.log[tp], recs...)
		s.sizes[tp] = append(s.sizes[tp], len(recs))
	}
	delay := s.produceDelay
	s.mu.Unlock()

	if delay > 0 {
		time.Sleep(delay)
	}
	s.mu.Lock()
	s.inflight[tp]--
	s.mu.Unlock()

	if r.Acks == 0 {
		return nil, nil
	}
	return &produceAPI.Response{Topics: []produceAPI.ResponseTopic{{
		Topic: topic,
		Partitions: []produceAPI.ResponsePartition{{
			Partition:     part.Partition,
			ErrorCode:     code,
			BaseOffset:    base,
			LogAppendTime: -1,
		}},
	}}}, nil
}

// producePerPartition serves a Produce request that carries several
// partitions as a broker does: each partition on its own (here by serve,
// called with a request of that partition alone, all of them at once so
// that a held partition holds the answer, not the others' appends), and
// one answer for the whole request, once every partition is done. A
// failed partition fails the request, as a broken connection would.
func producePerPartition(r *produceAPI.Request, serve func(*produceAPI.Request) (Response, error)) (Response, error) {
	type result struct {
		res Response
		err error
	}
	var parts []*produceAPI.Request
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			one := *r
			one.Topics = []produceAPI.RequestTopic{{Topic: t.Topic, Partitions: []produceAPI.RequestPartition{p}}}
			parts = append(parts, &one)
		}
	}
	results := make([]result, len(parts))
	var wg sync.WaitGroup
	for i, one := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := serve(one)
			results[i] = result{res, err}
		}()
	}
	wg.Wait()
	if r.Acks == 0 {
		return nil, nil
	}
	merged := &produceAPI.Response{}
	for _, x := range results {
		if x.err != nil {
			return nil, x.err
		}
		res, ok := x.res.(*produceAPI.Response)
		if !ok {
			return nil, errors.New("stub broker: a partition without an answer")
		}
		merged.ThrottleTimeMs = max(merged.ThrottleTimeMs, res.ThrottleTimeMs)
		for _, t := range res.Topics {
			found := false
			for i := range merged.Topics {
				if merged.Topics[i].Topic == t.Topic {
					merged.Topics[i].Partitions = append(merged.Topics[i].Partitions, t.Partitions...)
					found = true
				}
			}
			if !found {
				merged.Topics = append(merged.Topics, t)
			}
		}
	}
	return merged, nil
}

// eventually polls cond until it holds, failing the test after a generous
// time; it is how tests wait for another goroutine to reach a state.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// checkNoGoroutineLeak waits for the goroutine count to come back to
// baseline (other tests' stragglers may take a moment to exit).
func checkNoGoroutineLeak(t *testing.T, baseline int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= baseline {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("goroutines: %d after Close, %d before\n%s", n, baseline, buf)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// partitionWriterOf returns the writer's partition writer for tp, or nil.
func partitionWriterOf(w *Writer, tp topicPartition) *partitionWriter {
	pw, _ := w.writers.Load(tp)
	pw2, _ := pw.(*partitionWriter)
	return pw2
}

// bufferState reports, for a partition writer, the batches that wait in its
// queue and all the batches it holds (filling, queued, sending, and those
// whose Completion has not returned).
func (pw *partitionWriter) bufferState() (queued, alive int) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	queued = pw.queue.len()
	alive = queued + int(pw.completing.Load())
	for _, b := range []*writeBatch{pw.cur, pw.sending} {
		if b != nil {
			alive++
		}
	}
	return queued, alive
}

// slotWaiters is the number of callers in line for partition tp.
func slotWaiters(w *Writer, tp topicPartition) int {
	pw := partitionWriterOf(w, tp)
	if pw == nil {
		return 0
	}
	pw.mu.Lock()
	defer pw.mu.Unlock()
	return len(pw.adm.line)
}

func byteWaiters(w *Writer) int {
	if st := w.state(); st.bytes != nil {
		return st.bytes.Waiting()
	}
	return 0
}

// shutdown releases the stub before closing the writer, so that a test
// failing while the broker is held does not leave Close waiting for
// requests that only time out.
func shutdown(w *Writer, s *stubBroker) {
	s.release()
	w.Close()
}
