package kafka

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	produceAPI "github.com/segmentio/kafka-go/protocol/produce"
)

// A brokerSink sends the ready batches of all the partitions one broker
// leads, together: one Produce request carries a batch of each partition
// that has one ready (up to sinkRequestBytes), and at most sinkMaxInflight
// requests are out at once. So the Writer's connections, goroutines and
// requests follow its traffic and its brokers, not its partitions: a
// partition costs a goroutine only while a Completion call of it runs.
//
// A partition enters its sink's ready list when it starts sending a batch
// (partitionWriter.startSendingLocked) or when the batch is to be retried,
// and leaves it when a request takes the batch; a partition has at most one
// batch in the sink at a time, which keeps its order. The answer is
// handled partition by partition (partitionWriter.attemptDone): success
// and errors, retries with their backoff, metadata refresh after a leader
// change, after which the partition goes to the sink of its new leader.
//
// There is no goroutine per sink: a request goroutine is started when a
// partition becomes ready and fewer than sinkMaxInflight run, and it goes
// on taking ready partitions until there are none. Partitions waiting for
// their retry are woken by the sink's one timer.
//
// Lock order: a partition's mu, then the sink's mu (push is called with
// pw.mu held); the sink never takes a partition's mu while holding its own.
// The batch in pw.sending and pw.retryAt are written before push and read
// by the sink, so they need no lock of their own.
type brokerSink struct {
	w      *Writer
	leader int32 // -1: the leader is unknown; the transport routes the request

	mu       sync.Mutex
	ready    []*partitionWriter
	inflight int  // request goroutines running
	active   bool // the sink holds a count of w.inflight (work is pending)
	timer    *time.Timer
	timerAt  time.Time // when the timer fires; zero when not set

	// lane is the connection its requests go on with RequireNone and a
	// *Transport (writer_acks_none_lanes.go). The sink's one request
	// goroutine uses it; once the sink is idle it lingers (see take) until
	// endLinger, or cutLinger at Close, leaves it.
	lane *noAckLane
	// lingerTimer ends a lane kept after the sink went idle (see take);
	// detaching is set while endLinger gives the lane up, during which the
	// sink keeps its count of w.inflight.
	lingerTimer *time.Timer
	detaching   bool
}

// noAckLinger is how long an idle sink keeps its acks=0 lane before the
// barrier that gives it up: a request soon after goes on the same
// connection at once, instead of waiting for the barrier's round trip
// (which a synchronous caller writing one message at a time would pay
// for every message).
const noAckLinger = 100 * time.Millisecond

const (
	// sinkMaxInflight bounds the Produce requests (and so the connections)
	// a Writer has out to one broker.
	sinkMaxInflight = 3
	// sinkRequestBytes bounds the messages' bytes in one request; a
	// single batch is never split (BatchBytes may be larger).
	sinkRequestBytes = 1 << 20
)

// sinkFor returns the sink of key's leader, as the Writer's metadata
// knows it.
func (w *Writer) sinkFor(key topicPartition) *brokerSink {
	st := w.state()
	id := st.meta.leader(key)
	st.sinksMu.Lock()
	defer st.sinksMu.Unlock()
	s := st.sinks[id]
	if s == nil {
		if st.sinks == nil {
			st.sinks = make(map[int32]*brokerSink)
		}
		s = &brokerSink{w: w, leader: id}
		st.sinks[id] = s
	}
	return s
}

// push hands pw, whose batch in sending is to be sent (at pw.retryAt when
// set), to the sink.
func (s *brokerSink) push(pw *partitionWriter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ready = append(s.ready, pw)
	if !s.active {
		// The sink holds a count of the Writer's inflight until it has
		// nothing left, so Close waits for its batches. push is called by
		// someone who holds a count (a request goroutine), by Close
		// itself, by a WriteMessages call (counted in Writer.calls, which
		// Close waits out before it waits for inflight), or under the
		// mutex of a partition with an open batch, which Close closes
		// before it waits.
		s.active = true
		s.w.inflight.Add(1)
	}
	s.startLocked(time.Now())
}

// maxInflight is how many requests the sink may have out at once: one
// with RequireNone, whose requests are done once written, so that each
// goes out after the previous one (and on its connection, see
// noAckLanes); otherwise sinkMaxInflight, a partition's order being
// kept by its having one batch out at a time until the broker answers.
func (s *brokerSink) maxInflight() int {
	if s.w.requiredAcks() == RequireNone {
		return 1
	}
	return sinkMaxInflight
}

// startLocked starts a request goroutine if one may run and a partition is
// due, and otherwise sets the timer for the next retry.
func (s *brokerSink) startLocked(now time.Time) {
	if s.inflight >= s.maxInflight() {
		return
	}
	var next time.Time
	for _, pw := range s.ready {
		if !pw.retryAt.After(now) {
			s.inflight++
			go s.run()
			return
		}
		if next.IsZero() || pw.retryAt.Before(next) {
			next = pw.retryAt
		}
	}
	if !next.IsZero() && s.inflight == 0 {
		s.armLocked(next, now)
	}
}

func (s *brokerSink) armLocked(at, now time.Time) {
	if !s.timerAt.IsZero() && !s.timerAt.After(at) {
		return // set for no later already
	}
	s.timerAt = at
	if s.timer == nil {
		s.timer = time.AfterFunc(at.Sub(now), s.wake)
	} else {
		s.timer.Reset(at.Sub(now))
	}
}

// wake is the retry timer.
func (s *brokerSink) wake() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.timerAt = time.Time{}
	s.startLocked(time.Now())
}

// run sends requests while partitions are ready.
func (s *brokerSink) run() {
	var parts []*partitionWriter
	for {
		var lane *noAckLane
		parts, lane = s.take(parts[:0])
		if lane != nil {
			s.w.state().noAck.detach(lane, s.w.writeTimeout())
			continue
		}
		if len(parts) == 0 {
			return
		}
		s.send(parts)
		clear(parts)
	}
}

// take moves the partitions due now out of the ready list, in order, up to
// a request's worth, and appends them to parts. When none is due, the
// calling goroutine ends, and the sink goes idle when nothing is left;
// a lane it holds lingers, the sink keeping its count of w.inflight until
// endLinger or cutLinger leaves it, except once Close has begun: take
// then returns the lane for the goroutine to leave before it ends.
func (s *brokerSink) take(parts []*partitionWriter) ([]*partitionWriter, *noAckLane) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	var total int64
	var next time.Time
	kept := 0
	for _, pw := range s.ready {
		b := pw.sending
		switch {
		case pw.retryAt.After(now):
			if next.IsZero() || pw.retryAt.Before(next) {
				next = pw.retryAt
			}
		case len(parts) == 0 || total+b.bytes <= sinkRequestBytes:
			parts = append(parts, pw)
			total += b.bytes
			continue
		}
		s.ready[kept] = pw
		kept++
	}
	clear(s.ready[kept:])
	s.ready = s.ready[:kept]
	if len(parts) > 0 {
		return parts, nil
	}
	if l := s.lane; l != nil && s.w.calls.Load()&callsClosed != 0 {
		s.lane = nil
		return parts, l
	}
	s.inflight--
	if !next.IsZero() {
		s.armLocked(next, now)
	}
	if s.lane != nil {
		if s.lingerTimer == nil {
			s.lingerTimer = time.AfterFunc(noAckLinger, s.endLinger)
		} else {
			s.lingerTimer.Reset(noAckLinger)
		}
		return parts, nil
	}
	if s.inflight == 0 && len(s.ready) == 0 && !s.detaching {
		s.active = false
		s.w.inflight.Done()
	}
	return parts, nil
}

// endLinger gives up the lane an idle sink kept (see take), unless a
// request goroutine took it over meanwhile; the sink then goes idle if
// nothing came in while the barrier ran. Spurious calls do nothing.
func (s *brokerSink) endLinger() {
	s.mu.Lock()
	if s.inflight > 0 || s.lane == nil || s.detaching {
		s.mu.Unlock()
		return
	}
	l := s.lane
	s.lane = nil
	s.detaching = true
	s.mu.Unlock()

	s.w.state().noAck.detach(l, s.w.writeTimeout())

	s.mu.Lock()
	defer s.mu.Unlock()
	s.detaching = false
	if s.active && s.inflight == 0 && len(s.ready) == 0 && s.lane == nil {
		s.active = false
		s.w.inflight.Done()
	}
}

// cutLingers makes the idle sinks that keep an acks=0 lane give it up now
// rather than when their linger ends, for Close (no sink starts a linger
// once callsClosed is set).
func (w *Writer) cutLingers() {
	st := w.state()
	st.sinksMu.Lock()
	sinks := make([]*brokerSink, 0, len(st.sinks))
	for _, s := range st.sinks {
		sinks = append(sinks, s)
	}
	st.sinksMu.Unlock()
	for _, s := range sinks {
		s.cutLinger()
	}
}

// cutLinger ends a lingering lane now, for Close, which then waits for
// the sink's count of w.inflight.
func (s *brokerSink) cutLinger() {
	s.mu.Lock()
	lingering := s.lingerTimer != nil && s.inflight == 0 && s.lane != nil
	if lingering {
		s.lingerTimer.Stop()
	}
	s.mu.Unlock()
	if lingering {
		s.endLinger()
	}
}

// send makes one attempt of the batches of parts in one Produce request and
// hands each partition its outcome.
func (s *brokerSink) send(parts []*partitionWriter) {
	w := s.w
	timeout := w.writeTimeout()
	req := &produceAPI.Request{
		Acks: int16(w.requiredAcks()),
		// Half of our own deadline, so that the broker's answer to a
		// timed-out request still reaches us before we give up on it.
		Timeout: int32(timeout / 2 / time.Millisecond),
	}
	// errs holds the error of the partitions that could not be put in the
	// request (no producer ID for an idempotent Writer).
	errs := make([]error, len(parts))
	var topicIndex map[string]int
	sent := 0
	for i, pw := range parts {
		b := pw.sending
		if pw.settling != nil {
			select {
			case <-pw.settling:
				pw.settling = nil
			default:
				errs[i] = &heldBackError{broker: fmt.Sprint(s.leader), unanswered: true}
				continue
			}
		}
		pw.attemptStarts(b)
		records, err := pw.records(b)
		if err != nil {
			errs[i] = err
			continue
		}
		sent++
		ti := -1
		if topicIndex != nil {
			if j, ok := topicIndex[pw.key.topic]; ok {
				ti = j
			}
		} else {
			for j := range req.Topics {
				if req.Topics[j].Topic == pw.key.topic {
					ti = j
					break
				}
			}
		}
		if ti < 0 {
			ti = len(req.Topics)
			req.Topics = append(req.Topics, produceAPI.RequestTopic{Topic: pw.key.topic})
			if topicIndex == nil && len(req.Topics) > 8 {
				topicIndex = make(map[string]int, 16)
				for j := range req.Topics {
					topicIndex[req.Topics[j].Topic] = j
				}
			} else if topicIndex != nil {
				topicIndex[pw.key.topic] = ti
			}
		}
		t := &req.Topics[ti]
		t.Partitions = append(t.Partitions, produceAPI.RequestPartition{
			Partition: pw.key.partition,
			RecordSet: protocol.RecordSet{
				Attributes: protocol.Attributes(w.Compression) & 7,
				Records:    records,
			},
		})
	}

	start := time.Now()
	var res *produceAPI.Response
	var reqErr error
	if sent > 0 {
		var slot settleSlot
		res, reqErr = s.roundTrip(req, timeout, parts, errs, &slot)
		if slot.done != nil {
			// Given up on unanswered: whatever each partition sends next
			// waits until the broker is done with this request.
			for i, pw := range parts {
				if errs[i] == nil {
					pw.settling = slot.done
				}
			}
		}
	}

	index := newResultIndex(res)
	var refresh []string // topics whose leaders moved
	for i, pw := range parts {
		b := pw.sending
		var pr *produceResult
		err := errs[i]
		switch {
		case err != nil:
		case reqErr != nil:
			err = reqErr
		default:
			pr, err = index.result(pw.key)
		}
		if pw.attemptDone(b, pr, err, start) {
			if leadershipChanged(err) || (pr != nil && leadershipChanged(pr.err)) {
				refresh = appendTopic(refresh, pw.key.topic)
			}
			continue
		}
		parts[i] = nil // done with its batch: not retried
	}

	// The partitions to retry go to the sink of their leader, which may
	// have moved: ask for the topics' metadata again first.
	for _, topic := range refresh {
		w.state().meta.invalidate(topic)
		ctx, cancel := context.WithTimeout(context.Background(), w.readTimeout())
		_, _ = w.partitions(ctx, topic, nil) // a failure leaves the leader unknown, and the transport routes
		cancel()
	}
	for _, pw := range parts {
		if pw != nil {
			w.sinkFor(pw.key).push(pw)
		}
	}
}

func appendTopic(topics []string, topic string) []string {
	for _, t := range topics {
		if t == topic {
			return topics
		}
	}
	return append(topics, topic)
}

// roundTrip sends req, which carries the batches of the partitions of
// parts without an error in errs; with RequireNone the broker does not
// answer, and the response is nil. Otherwise slot learns whether the
// request was given up on unanswered (settleSlot).
func (s *brokerSink) roundTrip(req *produceAPI.Request, timeout time.Duration, parts []*partitionWriter, errs []error, slot *settleSlot) (*produceAPI.Response, error) {
	w := s.w
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if w.requiredAcks() == RequireNone {
		if t, ok := w.transportOrDefault().(*Transport); ok {
			return nil, s.laneRoundTrip(ctx, t, req, parts, errs)
		}
	} else {
		ctx = withSettleSlot(ctx, slot)
	}
	m, err := w.transportOrDefault().RoundTrip(ctx, w.Addr, req)
	if err != nil {
		return nil, err
	}
	if w.requiredAcks() == RequireNone {
		return nil, nil
	}
	r, ok := m.(*produceAPI.Response)
	if !ok {
		return nil, fmt.Errorf("kafka.(*Writer): unexpected response of type %T to a produce request", m)
	}
	return r, nil
}

// resultIndex finds each partition's answer in a Produce response (nil
// with RequireNone), with a map when the response is large.
type resultIndex struct {
	r     *produceAPI.Response
	byKey map[topicPartition]*produceAPI.ResponsePartition
}

func newResultIndex(r *produceAPI.Response) resultIndex {
	x := resultIndex{r: r}
	if r == nil {
		return x
	}
	n := 0
	for i := range r.Topics {
		n += len(r.Topics[i].Partitions)
	}
	if n > 8 {
		x.byKey = make(map[topicPartition]*produceAPI.ResponsePartition, n)
		for i := range r.Topics {
			t := &r.Topics[i]
			for j := range t.Partitions {
				p := &t.Partitions[j]
				x.byKey[topicPartition{topic: t.Topic, partition: p.Partition}] = p
			}
		}
	}
	return x
}

func (x resultIndex) result(key topicPartition) (*produceResult, error) {
	r := x.r
	if r == nil {
		return nil, nil
	}
	p := x.byKey[key]
	for i := 0; p == nil && x.byKey == nil && i < len(r.Topics); i++ {
		t := &r.Topics[i]
		if t.Topic != key.topic {
			continue
		}
		for j := range t.Partitions {
			if t.Partitions[j].Partition == key.partition {
				p = &t.Partitions[j]
				break
			}
		}
	}
	if p == nil {
		return nil, protocol.NewErrNoPartition(key.topic, key.partition)
	}
	return &produceResult{
		err:           makeError(p.ErrorCode, p.ErrorMessage),
		baseOffset:    p.BaseOffset,
		logAppendTime: makeTime(p.LogAppendTime),
		throttle:      makeDuration(r.ThrottleTimeMs),
	}, nil
}
