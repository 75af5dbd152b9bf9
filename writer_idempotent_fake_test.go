package kafka

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/initproducerid"
	metadataAPI "github.com/segmentio/kafka-go/protocol/metadata"
	produceAPI "github.com/segmentio/kafka-go/protocol/produce"
)

// idemBroker is a RoundTripper that behaves as a Kafka broker does for an
// idempotent producer: it decodes the record batch from the bytes the
// Writer would put on the wire, keeps per partition and producer the epoch,
// the next expected sequence and the last five batches, answers a
// retried batch without appending it again, and refuses sequences that do
// not follow. Each produce request can be given a fault.
type idemBroker struct {
	mu         sync.Mutex
	partitions map[string]int

	initCodes  []int16 // error codes for the next InitProducerId calls
	initErrs   []error // transport errors for the next InitProducerId calls
	initCalls  int
	nextPID    int64
	initEpoch  int16 // epoch of the sessions handed out
	issued     []idemSession
	dupCode    bool // answer DUPLICATE_SEQUENCE_NUMBER for a duplicate (brokers before 1.0 did)
	strictNew  bool // refuse a nonzero first sequence of an unknown producer (brokers before 2.5)
	fault      func(call int, tp topicPartition, b sentBatch) idemFault
	calls      int
	log        map[topicPartition][]string // values, in log order
	sent       map[topicPartition][]sentBatch
	state      map[idemKey]*idemPartitionState
	concurrent map[topicPartition]int
	overlaps   int

	// faultFreeAfter, when above zero, serves without any fault a request
	// that carries a batch already sent this many times. A transport
	// fault fails every batch of its request, whoever it was meant for,
	// so without this bound how often a batch fails depends on which
	// partitions the Writer happens to send with it.
	faultFreeAfter int

	// bench keeps no values: batches are only encoded and their headers
	// checked, so that a benchmark measures the Writer, not this broker.
	bench    bool
	benchBuf bytes.Buffer
	appended int
}

// idemFault is what happens to one produce request.
type idemFault struct {
	code      int16 // answered without appending (when nonzero)
	lateCode  int16 // appended as usual, then answered with this code (REQUEST_TIMED_OUT, ...)
	lose      bool  // the request never reaches the broker: a transport error
	refuse    bool  // no connection: the dial is refused
	loseReply bool  // appended as usual, then the answer is lost
}

// onCall is a fault function that does f to the produce request of the
// given call (the broker's calls count from 1) and nothing to the others.
func onCall(call int, f idemFault) func(int, topicPartition, sentBatch) idemFault {
	return func(c int, _ topicPartition, _ sentBatch) idemFault {
		if c == call {
			return f
		}
		return idemFault{}
	}
}

type sentBatch struct {
	producerID    int64
	producerEpoch int16
	baseSequence  int32
	values        []string
	code          int16 // what the broker answered, -1 when no answer came back
}

type idemKey struct {
	tp  topicPartition
	pid int64
}

type idemPartitionState struct {
	epoch  int16
	next   int32
	recent []idemEntry // last five appended batches
}

type idemEntry struct {
	seq    int32
	count  int
	offset int64
}

func newIdemBroker(partitions map[string]int) *idemBroker {
	return &idemBroker{
		partitions: partitions,
		nextPID:    1000,
		log:        map[topicPartition][]string{},
		sent:       map[topicPartition][]sentBatch{},
		state:      map[idemKey]*idemPartitionState{},
		concurrent: map[topicPartition]int{},
	}
}

func (s *idemBroker) RoundTrip(ctx context.Context, addr net.Addr, req Request) (Response, error) {
	switch r := req.(type) {
	case *metadataAPI.Request:
		res := &metadataAPI.Response{Brokers: []metadataAPI.ResponseBroker{{NodeID: 1, Host: "stub", Port: 9092}}}
		for _, name := range r.TopicNames {
			t := metadataAPI.ResponseTopic{Name: name}
			for p := 0; p < s.partitions[name]; p++ {
				t.Partitions = append(t.Partitions, metadataAPI.ResponsePartition{PartitionIndex: int32(p), LeaderID: 1})
			}
			if len(t.Partitions) == 0 {
				t.ErrorCode = int16(UnknownTopicOrPartition)
			}
			res.Topics = append(res.Topics, t)
		}
		return res, nil
	case *initproducerid.Request:
		return s.initProducerID(r)
	case *produceAPI.Request:
		return s.produce(r)
	}
	return nil, fmt.Errorf("idem broker: unexpected %T", req)
}

func (s *idemBroker) initProducerID(r *initproducerid.Request) (Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initCalls++
	if r.TransactionalID != "" || r.ProducerID != -1 || r.ProducerEpoch != -1 {
		return nil, fmt.Errorf("idem broker: InitProducerId for an idempotent producer must be anonymous and new: %+v", r)
	}
	if len(s.initErrs) > 0 {
		err := s.initErrs[0]
		s.initErrs = s.initErrs[1:]
		return nil, err
	}
	if len(s.initCodes) > 0 {
		code := s.initCodes[0]
		s.initCodes = s.initCodes[1:]
		return &initproducerid.Response{ErrorCode: code, ProducerID: -1, ProducerEpoch: -1}, nil
	}
	sess := idemSession{id: s.nextPID, epoch: s.initEpoch}
	s.nextPID++
	s.issued = append(s.issued, sess)
	return &initproducerid.Response{ProducerID: sess.id, ProducerEpoch: sess.epoch}, nil
}

// decode encodes the record set as the transport would (Produce v9, message
// format v2) and reads it back, so that what the test sees is what a broker
// would get.
func decodeProduced(rs protocol.RecordSet) (*protocol.RecordBatch, []string, error) {
	rs.Version = 2
	var buf bytes.Buffer
	if _, err := rs.WriteTo(&buf); err != nil {
		return nil, nil, err
	}
	var out protocol.RecordSet
	if _, err := out.ReadFrom(&buf); err != nil {
		return nil, nil, err
	}
	stream, ok := out.Records.(*protocol.RecordStream)
	if !ok || len(stream.Records) != 1 {
		return nil, nil, fmt.Errorf("idem broker: want one record batch, got %T", out.Records)
	}
	batch, ok := stream.Records[0].(*protocol.RecordBatch)
	if !ok {
		return nil, nil, fmt.Errorf("idem broker: want a record batch, got %T", stream.Records[0])
	}
	var values []string
	for {
		rec, err := batch.ReadRecord()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		v, _ := protocol.ReadAll(rec.Value)
		values = append(values, string(v))
	}
	return batch, values, nil
}

func (s *idemBroker) produce(r *produceAPI.Request) (Response, error) {
	if s.bench {
		return s.serve(r, false)
	}
	quiet, err := s.carriesRetry(r)
	if err != nil {
		return nil, err
	}
	return s.serve(r, quiet)
}

// carriesRetry says whether r carries a batch sent faultFreeAfter times
// already (never when faultFreeAfter is zero).
func (s *idemBroker) carriesRetry(r *produceAPI.Request) (bool, error) {
	if s.faultFreeAfter <= 0 {
		return false, nil
	}
	type batchKey struct {
		tp    topicPartition
		pid   int64
		epoch int16
		seq   int32
	}
	var keys []batchKey
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			batch, _, err := decodeProduced(p.RecordSet)
			if err != nil {
				return false, err
			}
			keys = append(keys, batchKey{topicPartition{t.Topic, p.Partition}, batch.ProducerID, batch.ProducerEpoch, batch.BaseSequence})
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		n := 0
		for _, prev := range s.sent[k.tp] {
			if prev.producerID == k.pid && prev.producerEpoch == k.epoch && prev.baseSequence == k.seq {
				n++
			}
		}
		if n >= s.faultFreeAfter {
			return true, nil
		}
	}
	return false, nil
}

// serve answers r, with the faults s.fault gives its partitions unless
// quiet.
func (s *idemBroker) serve(r *produceAPI.Request, quiet bool) (Response, error) {
	if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
		return producePerPartition(r, func(one *produceAPI.Request) (Response, error) { return s.serve(one, quiet) })
	}
	topic := r.Topics[0].Topic
	part := r.Topics[0].Partitions[0]
	tp := topicPartition{topic: topic, partition: part.Partition}
	if s.bench {
		return s.benchProduce(r)
	}
	batch, values, err := decodeProduced(part.RecordSet)
	if err != nil {
		return nil, err
	}
	sb := sentBatch{producerID: batch.ProducerID, producerEpoch: batch.ProducerEpoch, baseSequence: batch.BaseSequence, values: values, code: -1}

	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	s.concurrent[tp]++
	if s.concurrent[tp] > 1 {
		s.overlaps++
	}
	defer func() { s.concurrent[tp]-- }()
	var f idemFault
	if s.fault != nil && !quiet {
		f = s.fault(s.calls, tp, sb)
	}
	if f.refuse {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	}
	if f.lose {
		s.sent[tp] = append(s.sent[tp], sb)
		return nil, io.ErrUnexpectedEOF
	}
	code, base := f.code, int64(-1)
	if code == 0 {
		code, base = s.appendLocked(tp, r.Acks, batch, values)
	}
	if f.loseReply {
		s.sent[tp] = append(s.sent[tp], sb)
		return nil, io.ErrUnexpectedEOF
	}
	if f.lateCode != 0 && code == 0 {
		code, base = f.lateCode, -1
	}
	sb.code = code
	s.sent[tp] = append(s.sent[tp], sb)
	return &produceAPI.Response{Topics: []produceAPI.ResponseTopic{{
		Topic: topic,
		Partitions: []produceAPI.ResponsePartition{{
			Partition: part.Partition, ErrorCode: code, BaseOffset: base, LogAppendTime: -1,
		}},
	}}}, nil
}

// appendLocked applies Kafka's rules for a batch (ProducerStateManager,
// per partition and producer) and appends it when they allow.
func (s *idemBroker) appendLocked(tp topicPartition, acks int16, b *protocol.RecordBatch, values []string) (int16, int64) {
	offset := int64(len(s.log[tp]))
	if b.ProducerID < 0 {
		s.log[tp] = append(s.log[tp], values...)
		return 0, offset
	}
	if acks != -1 {
		return int16(InvalidRequiredAcks), -1
	}
	k := idemKey{tp: tp, pid: b.ProducerID}
	st := s.state[k]
	switch {
	case st == nil:
		if s.strictNew && b.BaseSequence != 0 {
			return int16(UnknownProducerId), -1
		}
		st = &idemPartitionState{epoch: b.ProducerEpoch}
		s.state[k] = st
	case b.ProducerEpoch < st.epoch:
		return int16(InvalidProducerEpoch), -1
	case b.ProducerEpoch > st.epoch:
		if b.BaseSequence != 0 {
			return int16(OutOfOrderSequenceNumber), -1
		}
		st.epoch, st.recent = b.ProducerEpoch, nil
	default:
		for _, e := range st.recent {
			if e.seq == b.BaseSequence && e.count == len(values) {
				if s.dupCode {
					return int16(DuplicateSequenceNumber), -1
				}
				return 0, e.offset
			}
		}
		if b.BaseSequence != st.next {
			return int16(OutOfOrderSequenceNumber), -1
		}
	}
	st.next = nextSequence(b.BaseSequence, len(values))
	st.recent = append(st.recent, idemEntry{seq: b.BaseSequence, count: len(values), offset: offset})
	if len(st.recent) > 5 {
		st.recent = st.recent[1:]
	}
	s.log[tp] = append(s.log[tp], values...)
	return 0, offset
}

func (s *idemBroker) logOf(tp topicPartition) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log[tp]...)
}

func (s *idemBroker) sentTo(tp topicPartition) []sentBatch {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sentBatch(nil), s.sent[tp]...)
}

func (s *idemBroker) inits() (calls int, issued []idemSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.initCalls, append([]idemSession(nil), s.issued...)
}

// benchProduce encodes the batch as on the wire and appends it by its
// header alone.
func (s *idemBroker) benchProduce(r *produceAPI.Request) (Response, error) {
	part := r.Topics[0].Partitions[0]
	rs := part.RecordSet
	rs.Version = 2
	s.mu.Lock()
	defer s.mu.Unlock()
	s.benchBuf.Reset()
	if _, err := rs.WriteTo(&s.benchBuf); err != nil {
		return nil, err
	}
	h := s.benchBuf.Bytes()
	if len(h) < 61 {
		return nil, errors.New("idem broker: short batch")
	}
	pid := int64(binary.BigEndian.Uint64(h[43:]))
	seq := int32(binary.BigEndian.Uint32(h[53:]))
	count := int(binary.BigEndian.Uint32(h[57:]))
	tp := topicPartition{topic: r.Topics[0].Topic, partition: part.Partition}
	if pid >= 0 {
		k := idemKey{tp: tp, pid: pid}
		st := s.state[k]
		if st == nil {
			st = &idemPartitionState{}
			s.state[k] = st
		}
		if seq != st.next {
			return nil, fmt.Errorf("idem broker: sequence %d, want %d", seq, st.next)
		}
		st.next = nextSequence(seq, count)
	}
	base := int64(s.appended)
	s.appended += count
	return &produceAPI.Response{Topics: []produceAPI.ResponseTopic{{
		Topic:      tp.topic,
		Partitions: []produceAPI.ResponsePartition{{Partition: part.Partition, BaseOffset: base, LogAppendTime: -1}},
	}}}, nil
}
