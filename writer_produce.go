package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	produceAPI "github.com/segmentio/kafka-go/protocol/produce"
)

// The sending side of a partition writer: its loop, one batch at a time,
// each sent with retries, and the Produce request of one attempt.

// run is the sending loop.
func (pw *partitionWriter) run() {
	defer pw.w.inflight.Done()
	for {
		pw.mu.Lock()
		for pw.sending == nil && !pw.closed {
			pw.mu.Unlock()
			<-pw.wake
			pw.mu.Lock()
		}
		b := pw.sending
		pw.mu.Unlock()
		if b == nil {
			break // closed and drained
		}
		pw.send(b)
	}
	if pw.completions != nil {
		pw.completions.close()
	}
}

// send sends b until it is written or fails for good, fills in what the
// broker said about its messages, and moves the partition to its next
// batch.
func (pw *partitionWriter) send(b *writeBatch) {
	w := pw.w
	s := w.state().stats
	s.batchTime.observeSince(b.opened)
	s.batchSize.observe(int64(len(b.msgs)))
	s.batchBytes.observe(b.bytes)

	res, err := pw.produceWithRetries(b)
	if res != nil {
		for i := range b.msgs {
			m := &b.msgs[i]
			m.Topic = pw.key.topic
			m.Partition = int(pw.key.partition)
			m.Offset = res.baseOffset + int64(i)
			if res.baseOffset < 0 {
				m.Offset = -1 // a duplicate the broker did not place
			}
			if m.Time.IsZero() {
				m.Time = res.logAppendTime
			}
		}
	}
	b.err = err

	// Refilling the sending place in the same step as the outcome is
	// recorded (and, without a Completion, as the budget is given back)
	// keeps the partition's batches within N+2 at every instant, and
	// "queue not empty implies a batch is being sent" true at all times.
	// The budget comes back before Flush and synchronous callers hear of
	// the outcome.
	if w.Completion == nil {
		pw.reportDropped(b, err) // before finishing b drops its messages
	}
	partials := false
	pw.mu.Lock()
	if w.Completion != nil {
		pw.completing.Add(1)
	} else {
		partials = pw.finishLocked(b)
	}
	pw.ackedLocked(b.seq)
	pw.sending = pw.queue.pop()
	if pw.sending == nil && pw.cur != nil && (pw.cur.lingering || pw.w.partialsWanted()) {
		pw.closeCurrentLocked() // straight to sending
	}
	pw.mu.Unlock()

	if w.Completion != nil {
		pw.completions.put(b)
	} else if partials {
		w.sendPartials()
	}
}

type produceResult struct {
	err           error
	baseOffset    int64
	logAppendTime time.Time
	throttle      time.Duration
}

func (pw *partitionWriter) produceWithRetries(b *writeBatch) (*produceResult, error) {
	w := pw.w
	s := w.state().stats
	key := pw.key
	var res *produceResult
	var err error
	for attempt, max := 0, w.maxAttempts(); attempt < max; attempt++ {
		if attempt > 0 {
			s.retries.add(1)
			delay := backoff(attempt, w.writeBackoffMin(), w.writeBackoffMax())
			w.logf("backing off %s writing %d messages to %s (partition: %d)", delay, len(b.msgs), key.topic, key.partition)
			time.Sleep(delay)
		}
		w.logf("writing %d messages to %s (partition: %d)", len(b.msgs), key.topic, key.partition)

		start := time.Now()
		res, err = pw.produce(b)
		s.writes.add(1)
		s.messages.add(int64(len(b.msgs)))
		s.bytes.add(b.bytes)
		s.writeTime.observeSince(start)
		if res != nil {
			err = res.err
			s.waitTime.observe(int64(res.throttle))
		}
		if pw.idem != nil {
			err = pw.idem.settle(res, err)
		}
		if err == nil {
			break
		}
		s.errors.add(1)
		if !brokerRefused(err) {
			b.mayBeWritten = true
		}
		w.errorf("error writing messages to %s (partition %d, attempt %d): %s", key.topic, key.partition, attempt, err)
		if !writerRetriable(err) {
			break
		}
		if leadershipChanged(err) {
			w.state().meta.invalidate(key.topic)
		}
	}
	var retry idemRetry
	if errors.As(err, &retry) {
		// MaxAttempts ran out just as the partition restarted its
		// sequence numbers: the batch was refused and never appended, so
		// the broker's refusal is the outcome, as for any other batch
		// that used up its attempts.
		err = retry.cause
	}
	pw.idem.finish(b, err)
	return res, err
}

// writerRetriable says whether sending the same batch again may succeed.
func writerRetriable(err error) bool {
	return isTemporary(err) || isTransientNetworkError(err) || errors.Is(err, protocol.ErrNoLeader)
}

func leadershipChanged(err error) bool {
	return errors.Is(err, NotLeaderForPartition) ||
		errors.Is(err, LeaderNotAvailable) ||
		errors.Is(err, UnknownTopicOrPartition) ||
		errors.Is(err, protocol.ErrNoLeader)
}

// produce sends b once. With RequireNone the broker does not answer, and
// the result is nil (the messages then get no offsets, as before).
func (pw *partitionWriter) produce(b *writeBatch) (*produceResult, error) {
	w := pw.w
	timeout := w.writeTimeout()
	records, err := pw.records(b)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	req := &produceAPI.Request{
		Acks: int16(w.requiredAcks()),
		// Half of our own deadline, so that the broker's answer to a
		// timed-out request still reaches us before we give up on it.
		Timeout: int32(timeout / 2 / time.Millisecond),
		Topics: []produceAPI.RequestTopic{{
			Topic: pw.key.topic,
			Partitions: []produceAPI.RequestPartition{{
				Partition: pw.key.partition,
				RecordSet: protocol.RecordSet{
					Attributes: protocol.Attributes(w.Compression) & 7,
					Records:    records,
				},
			}},
		}},
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
	for i := range r.Topics {
		t := &r.Topics[i]
		if t.Topic != pw.key.topic {
			continue
		}
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if p.Partition != pw.key.partition {
				continue
			}
			return &produceResult{
				err:           makeError(p.ErrorCode, p.ErrorMessage),
				baseOffset:    p.BaseOffset,
				logAppendTime: makeTime(p.LogAppendTime),
				throttle:      makeDuration(r.ThrottleTimeMs),
			}, nil
		}
	}
	return nil, protocol.NewErrNoPartition(pw.key.topic, pw.key.partition)
}

// batchRecords presents a batch's messages as records. The key and value
// readers are reused from record to record: the encoder consumes a record
// before asking for the next one.
type batchRecords struct {
	msgs       []Message
	next       int
	rec        protocol.Record
	key, value recordBytes
	// size is the batch's accounted bytes (writeBatch.bytes), about what
	// its records take encoded; 0 when unknown.
	size int64
}

// SizeHint lets the record batch encoder allocate its buffer once.
func (r *batchRecords) SizeHint() int { return int(r.size) }

func (r *batchRecords) ReadRecord() (*protocol.Record, error) {
	if r.next >= len(r.msgs) {
		return nil, io.EOF
	}
	m := &r.msgs[r.next]
	r.next++
	r.rec = protocol.Record{Time: m.Time, Headers: m.Headers}
	if m.Key != nil {
		r.key.Reset(m.Key)
		r.rec.Key = &r.key
	}
	if m.Value != nil {
		r.value.Reset(m.Value)
		r.rec.Value = &r.value
	}
	return &r.rec, nil
}

// recordBytes is a reusable protocol.Bytes over a byte slice.
type recordBytes struct{ bytes.Reader }

func (*recordBytes) Close() error { return nil }
