package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/segmentio/kafka-go/internal/fetchcursor"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/fetch"
	"github.com/segmentio/kafka-go/protocol/listoffsets"
	"github.com/segmentio/kafka-go/protocol/metadata"
)

// readerMessage is what partition readers send to FetchMessage: a batch of
// messages of one partition, in order, or an error, tagged with the version
// of the reader that produced it. Messages travel in batches so that the
// hand-off between goroutines costs one channel operation per batch, not
// per message.
type readerMessage struct {
	version   int64
	messages  []Message
	watermark int64
	error     error
}

// readerBatchSize is how many messages a partition reader gathers before
// queuing them for a Reader of the given QueueCapacity: half of it (up to
// 64), so that the queue holds about QueueCapacity messages in two
// batches. Each batch queued can cost a partition reader and FetchMessage
// a park and a wake-up when the queue is full, the usual state of a Reader
// whose program is slower than the brokers: at the default 100, batches of
// 50 rather than 25 cut the Reader's CPU per message by about a tenth
// (docs/bench/consumer/PROFILE.md).
func readerBatchSize(queueCapacity int) int {
	return min(max(queueCapacity/2, 1), 64)
}

// readerQueueBatches is the capacity, in batches, of the Reader's queue:
// as many whole batches as QueueCapacity holds, at least one.
func readerQueueBatches(queueCapacity int) int {
	return max(queueCapacity/readerBatchSize(queueCapacity), 1)
}

// partitionReader fetches one partition and queues its messages on the
// Reader's channel. It reads each fetch response off a connection leased
// for it, record by record, as the response arrives (see fetch), so the
// memory of a Reader is bounded by QueueCapacity messages plus one record
// (or one compressed batch) per partition.
type partitionReader struct {
	reader    *Reader
	topic     string
	partition int
	version   int64

	// keyValues holds the copies of the keys and values of small
	// messages; only this partition reader's goroutine uses it.
	keyValues keyValueSlab
}

func (p *partitionReader) config() *ReaderConfig { return &p.reader.config }

func (p *partitionReader) stats() *readerStats { return p.reader.stats }

// run reads the partition from offset until ctx ends. It never gives up:
// errors are retried with a backoff, and reported to FetchMessage once
// MaxAttempts setups in a row failed, so that a program blocked reading
// learns about them.
func (p *partitionReader) run(ctx context.Context, offset int64) {
	cfg := p.config()
	for attempt := 0; ; attempt++ {
		if !sleep(ctx, backoff(attempt, cfg.ReadBackoffMin, cfg.ReadBackoffMax)) {
			return
		}
		p.log(func(l Logger) {
			l.Printf("initializing kafka reader for partition %d of %s starting at offset %d", p.partition, p.topic, toHumanOffset(offset))
		})
		start, err := p.initialize(ctx, offset)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, OffsetOutOfRange) {
				if cfg.OffsetOutOfRangeError {
					p.sendError(ctx, err)
					return
				}
				// Past the end of the partition: wait for it to grow.
				p.logError(func(l Logger) {
					l.Printf("error initializing the kafka reader for partition %d of %s: %s", p.partition, p.topic, err)
				})
				continue
			}
			if attempt >= cfg.MaxAttempts {
				p.sendError(ctx, err)
			} else {
				p.stats().errors.add(1)
				p.logError(func(l Logger) {
					l.Printf("error initializing the kafka reader for partition %d of %s: %s", p.partition, p.topic, err)
				})
			}
			continue
		}
		attempt = 0
		offset = start

		if !p.readLoop(ctx, &offset) {
			return
		}
	}
}

// readLoop fetches from *offset until an error calls for a new setup
// (returning true) or ctx ends (returning false).
func (p *partitionReader) readLoop(ctx context.Context, offset *int64) bool {
	cfg := p.config()
	errcount := 0
	for {
		if !sleep(ctx, backoff(errcount, cfg.ReadBackoffMin, cfg.ReadBackoffMax)) {
			return false
		}
		next, err := p.fetch(ctx, *offset)
		*offset = next
		switch {
		case err == nil:
			errcount = 0
			continue

		case ctx.Err() != nil:
			return false

		case errors.Is(err, errFetchNoProgress):
			// Retried after the backoff (errcount grows below).

		case errors.Is(err, UnknownTopicOrPartition), errors.Is(err, NotLeaderForPartition),
			errors.Is(err, LeaderNotAvailable), errors.Is(err, FencedLeaderEpoch),
			errors.Is(err, UnknownLeaderEpoch), errors.Is(err, BrokerNotAvailable):
			// The partition moved or went away: set up again, which finds
			// the new leader or reports the error.
			p.logError(func(l Logger) {
				l.Printf("failed to read from current broker %v for partition %d of %s at offset %d: %v", cfg.Brokers, p.partition, p.topic, toHumanOffset(*offset), err)
			})
			p.stats().rebalances.add(1)
			return true

		case errors.Is(err, RequestTimedOut):
			errcount = 0
			p.stats().timeouts.add(1)
			p.log(func(l Logger) {
				l.Printf("no messages received from kafka within the allocated time for partition %d of %s at offset %d: %v", p.partition, p.topic, toHumanOffset(*offset), err)
			})
			continue

		case errors.Is(err, OffsetOutOfRange):
			first, last, lerr := p.reader.listFirstLast(ctx, p.topic, p.partition)
			if lerr != nil {
				p.logError(func(l Logger) {
					l.Printf("the kafka reader got an error while attempting to determine whether it was reading before the first offset or after the last offset of partition %d of %s: %s", p.partition, p.topic, lerr)
				})
				return true
			}
			switch {
			case *offset < first:
				p.logError(func(l Logger) {
					l.Printf("the kafka reader is reading before the first offset for partition %d of %s, skipping from offset %d to %d (%d messages)", p.partition, p.topic, toHumanOffset(*offset), first, first-*offset)
				})
				*offset, errcount = first, 0
				continue
			case *offset < last:
				errcount = 0
				continue
			default:
				p.logError(func(l Logger) {
					l.Printf("the kafka reader is reading passed the last offset for partition %d of %s at offset %d", p.partition, p.topic, toHumanOffset(*offset))
				})
			}

		case errors.Is(err, errUnknownCodec):
			p.sendError(ctx, err)
			return true

		case isTransientNetworkError(err):
			// A connection lost, possibly while it was being set up (a
			// SASL exchange cut short wraps SASLAuthenticationFailed too):
			// set up again. A login the broker really refuses fails the
			// setup's own requests too, which report it after MaxAttempts.
			p.logError(func(l Logger) {
				l.Printf("the kafka reader lost its connection reading partition %d of %s at offset %d: %s", p.partition, p.topic, toHumanOffset(*offset), err)
			})
			p.stats().errors.add(1)
			return true

		default:
			var kerr Error
			if errors.As(err, &kerr) {
				p.sendError(ctx, err)
			} else {
				p.logError(func(l Logger) {
					l.Printf("the kafka reader got an unknown error reading partition %d of %s at offset %d: %s", p.partition, p.topic, toHumanOffset(*offset), err)
				})
				p.stats().errors.add(1)
				return true
			}
		}
		errcount++
	}
}

// initialize turns offset into an absolute offset: FirstOffset and
// LastOffset are resolved, and an offset before the start of the
// partition (deleted by retention) moves to the start.
func (p *partitionReader) initialize(ctx context.Context, offset int64) (int64, error) {
	t0 := time.Now()
	first, last, err := p.reader.listFirstLast(ctx, p.topic, p.partition)
	if errors.Is(err, UnknownTopicOrPartition) && p.reader.createTopic(ctx, p.topic) {
		first, last, err = p.reader.listFirstLast(ctx, p.topic, p.partition)
	}
	p.stats().dials.add(1)
	p.stats().dialTime.observeSince(t0)
	if err != nil {
		return 0, err
	}
	switch offset {
	case FirstOffset:
		offset = first
	case LastOffset:
		offset = last
	}
	switch {
	case offset < first:
		offset = first // deleted by retention meanwhile
	case offset > last:
		// Nothing there yet: run retries later, or reports it when
		// OffsetOutOfRangeError is set.
		return 0, OffsetOutOfRange
	}
	p.log(func(l Logger) {
		l.Printf("the kafka reader for partition %d of %s is seeking to offset %d", p.partition, p.topic, toHumanOffset(offset))
	})
	return offset, nil
}

// fetch sends one Fetch request from offset, queues the messages of the
// response and returns the offset to fetch next.
func (p *partitionReader) fetch(ctx context.Context, offset int64) (int64, error) {
	cfg := p.config()
	st := p.stats()
	st.fetches.add(1)
	st.offset.observe(offset)

	req := &fetch.Request{
		ReplicaID:      -1,
		MaxWaitTime:    int32(cfg.MaxWait / time.Millisecond),
		MinBytes:       int32(cfg.MinBytes),
		MaxBytes:       int32(cfg.MaxBytes),
		IsolationLevel: int8(cfg.IsolationLevel),
		SessionEpoch:   -1, // no fetch session: every request is complete
		Topics: []fetch.RequestTopic{{
			Topic: p.topic,
			Partitions: []fetch.RequestPartition{{
				Partition:          int32(p.partition),
				CurrentLeaderEpoch: -1,
				FetchOffset:        offset,
				LogStartOffset:     -1,
				PartitionMaxBytes:  int32(cfg.MaxBytes),
			}},
		}},
	}

	var count, size, hwm int64
	// Messages are gathered in out and queued together: when out is full,
	// at the end of each record batch (so that a response still arriving
	// never holds back what was read), and before fetch returns.
	limit := readerBatchSize(cfg.QueueCapacity)
	var out []Message
	var outBytes int64
	flush := func() error {
		if len(out) == 0 {
			return nil
		}
		last := out[len(out)-1].Offset
		st.messages.add(int64(len(out)))
		st.bytes.add(outBytes)
		batch := out
		out, outBytes = nil, 0
		if err := p.sendMessages(ctx, batch, hwm); err != nil {
			return err
		}
		st.offset.observe(last + 1)
		st.lag.observe(hwm - (last + 1))
		return nil
	}
	send := func(msg Message) error {
		if out == nil {
			out = p.batchBuffer(limit)
		}
		n := int64(len(msg.Key) + len(msg.Value))
		out = append(out, msg)
		outBytes += n
		count++
		size += n
		if len(out) == limit {
			return flush()
		}
		return nil
	}
	// Whatever was gathered is queued before fetch returns, error or not:
	// the next fetch starts after it.
	defer flush()

	// The request goes out on a connection leased for it, and the
	// response is read off the socket here, partition by partition,
	// record by record, as it arrives: a partition reader holds one
	// record at a time, not a response.
	t0 := time.Now()
	rs, lease, err := p.send(ctx, req)
	if err != nil {
		return offset, err
	}
	defer lease.release()
	defer rs.Close()
	t1 := time.Now()
	st.waitTime.observeDuration(t1.Sub(t0))

	next, batches, seen := offset, 0, false
	for {
		topic, part, records, err := rs.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			// Whatever happened after records were read, those delivered
			// are delivered: the next fetch starts after them.
			return next, p.fetchError(ctx, err)
		}
		if topic != p.topic || part.Partition != int32(p.partition) || seen {
			continue
		}
		seen = true
		if err := makeError(part.ErrorCode, ""); err != nil {
			if leaderErrorCodes[part.ErrorCode] {
				lease.invalidate() // the next lease goes to the new leader
			}
			return offset, err
		}
		if records == nil {
			continue
		}
		hwm = part.HighWatermark
		next, err = p.deliver(ctx, part, offset, records.Next, send, flush)
		next = max(next, offset)
		batches = records.Batches()
		st.readTime.observeSince(t1)
		st.fetchSize.observe(count)
		st.fetchBytes.observe(size)
		if err != nil {
			return next, p.fetchError(ctx, err)
		}
	}
	if err := makeError(rs.Response().ErrorCode, ""); err != nil {
		return offset, err
	}
	if !seen {
		return offset, fmt.Errorf("fetch response without partition %d of %s", p.partition, p.topic)
	}
	if batches == 0 {
		// The broker held the fetch for MaxWait and had nothing: v0.4.51
		// counts that as a timeout (its batch read ends past the deadline),
		// and dashboards read ReaderStats.Timeouts as idle polls.
		st.timeouts.add(1)
		p.log(func(l Logger) {
			l.Printf("no messages received from kafka within the allocated time for partition %d of %s at offset %d", p.partition, p.topic, toHumanOffset(offset))
		})
		return next, nil
	}
	if next == offset {
		// Batches came back but every one ends before the fetch offset:
		// Kafka never answers so (it starts at the batch holding the
		// offset, and a batch read to its end moves the offset past it),
		// but a broker that did would give the same answer again, so pace
		// the retries.
		return next, errFetchNoProgress
	}
	return next, nil
}

// send leases a connection to the partition's leader, writes req on it and
// waits for the response to start: getting the connection and the first
// bytes of the response take at most MaxWait + ReadBatchTimeout, every
// later wait for the broker ReadBatchTimeout. The lease is the caller's to
// release, after the stream.
func (p *partitionReader) send(ctx context.Context, req *fetch.Request) (*fetch.ResponseStream, *connLease, error) {
	cfg := p.config()
	tr, ok := p.reader.client.Transport.(*Transport)
	if !ok {
		return nil, nil, errReaderTransport
	}
	wait := cfg.MaxWait + cfg.ReadBatchTimeout
	sctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	lease, err := tr.lease(sctx, p.reader.client.Addr, req)
	if err != nil {
		return nil, nil, p.fetchError(ctx, err)
	}
	version, id, err := lease.send(sctx, req)
	if err != nil {
		lease.release()
		return nil, nil, p.fetchError(ctx, err)
	}
	headerWait := time.Until(time.Now().Add(wait)) // at least what is left of sctx
	if d, ok := sctx.Deadline(); ok {
		headerWait = time.Until(d)
	}
	body, err := lease.response(ctx, id, max(headerWait, time.Millisecond), cfg.ReadBatchTimeout)
	if err != nil {
		lease.release()
		return nil, nil, p.fetchError(ctx, err)
	}
	rs, err := fetch.NewResponseStream(body, body.Len(), version)
	if err != nil {
		lease.release()
		return nil, nil, err
	}
	return rs, lease, nil
}

// fetchError is what a fetch that failed with err reports: the end of the
// reader's context, RequestTimedOut for a broker that did not answer in
// time (the connection is then dropped), else err.
func (p *partitionReader) fetchError(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return RequestTimedOut
	}
	return err
}

// errReaderTransport is the error of a Reader whose transport is not a
// *Transport: its fetches need connections of their own, read as the
// response arrives.
var errReaderTransport = errors.New("kafka: the Reader's transport must be a *kafka.Transport")

// errFetchNoProgress reports a fetch whose batches all end before the
// fetch offset.
var errFetchNoProgress = errors.New("kafka: fetched batches all end before the fetch offset")

// deliver passes the messages of the batches of a fetched partition (from
// nextBatch, until io.EOF) at or after offset to send, in order, and
// returns the offset to fetch next. Which records are delivered and where
// reading goes on follow Kafka's consumer (internal/fetchcursor): with
// ReadCommitted, records of aborted transactions are left out; control
// records are never delivered; a batch read to its end moves the offset
// past its last offset, even when compaction left nothing of its tail.
//
// flush is called at the end of each batch, before the next one is read.
func (p *partitionReader) deliver(ctx context.Context, part *fetch.ResponsePartition, offset int64, nextBatch func() (protocol.RecordReader, error), send func(Message) error, flush func() error) (int64, error) {
	cur := fetchcursor.New(offset, p.config().IsolationLevel == ReadCommitted, part.AbortedTransactions)
	for {
		b, err := nextBatch()
		if errors.Is(err, io.EOF) {
			return cur.Next(), nil
		}
		if err != nil {
			return cur.Next(), err
		}
		if cur.Begin(b) {
			err = p.readRecords(b, part.HighWatermark, &cur, send)
		} else {
			err = skipRecords(b)
		}
		if err != nil {
			return cur.Next(), err
		}
		cur.End(b)
		if err := flush(); err != nil {
			return cur.Next(), err
		}
		if ctx.Err() != nil {
			return cur.Next(), ctx.Err()
		}
	}
}

// skipRecords reads a batch whose records are not delivered to its end
// (which checks a streamed batch's CRC), releasing them.
func skipRecords(batch protocol.RecordReader) error {
	for {
		rec, err := batch.ReadRecord()
		if err != nil {
			return silentEOF(err)
		}
		closeRecord(rec)
	}
}

func (p *partitionReader) readRecords(batch protocol.RecordReader, hwm int64, cur *fetchcursor.Cursor, send func(Message) error) error {
	if rb, ok := batch.(*protocol.RecordBatch); ok {
		if fr, ok := rb.Records.(protocol.RecordFieldsReader); ok {
			return p.readRecordFields(fr, hwm, cur, send)
		}
	}
	for {
		rec, err := batch.ReadRecord()
		if err != nil {
			return silentEOF(err)
		}
		if !cur.Wants(rec.Offset) {
			// A compressed batch comes whole, including the records before
			// the fetch offset.
			closeRecord(rec)
			continue
		}
		msg := Message{
			Topic:         p.topic,
			Partition:     p.partition,
			Offset:        rec.Offset,
			HighWaterMark: hwm,
			Time:          rec.Time,
			Headers:       rec.Headers,
		}
		var kerr, verr error
		msg.Key, kerr = readFetchedBytes(rec.Key)
		msg.Value, verr = readFetchedBytes(rec.Value)
		if kerr != nil {
			return kerr
		}
		if verr != nil {
			return verr
		}
		if err := send(msg); err != nil {
			return err
		}
		cur.Delivered(rec.Offset)
	}
}

// readRecordFields is readRecords for v2 batches: keys and values are
// copied straight from the batch, both into one allocation, without a
// Bytes or a reference count per record (see keyValueSlab).
func (p *partitionReader) readRecordFields(batch protocol.RecordFieldsReader, hwm int64, cur *fetchcursor.Cursor, send func(Message) error) error {
	var rec protocol.RecordFields
	for {
		if err := batch.ReadRecordFields(&rec); err != nil {
			return silentEOF(err)
		}
		if !cur.Wants(rec.Offset) {
			continue // a compressed batch comes whole
		}
		msg := Message{
			Topic:         p.topic,
			Partition:     p.partition,
			Offset:        rec.Offset,
			HighWaterMark: hwm,
			Time:          rec.Time,
			Headers:       rec.Headers,
		}
		msg.Key, msg.Value = p.keyValues.copy(rec.Key, rec.Value)
		if err := send(msg); err != nil {
			return err
		}
		cur.Delivered(rec.Offset)
	}
}

// sendMessages queues a batch of messages for FetchMessage.
func (p *partitionReader) sendMessages(ctx context.Context, msgs []Message, watermark int64) error {
	item := readerMessage{version: p.version, messages: msgs, watermark: watermark}
	select {
	case p.reader.queue <- item:
		p.reader.queued.Add(int64(len(msgs)))
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// batchBuffer returns an empty slice for a batch of up to limit messages,
// one that FetchMessage emptied if there is one.
func (p *partitionReader) batchBuffer(limit int) []Message {
	select {
	case b := <-p.reader.spare:
		if cap(b) >= limit {
			return b
		}
	default:
	}
	return make([]Message, 0, limit)
}

func (p *partitionReader) sendError(ctx context.Context, err error) error {
	select {
	case p.reader.queue <- readerMessage{version: p.version, error: err}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *partitionReader) log(do func(Logger)) { p.reader.withLogger(do) }

func (p *partitionReader) logError(do func(Logger)) { p.reader.withErrorLogger(do) }

// listOffset asks the leader of a partition for the offset of timestamp
// ts (or -1 for the end, -2 for the start).
func (r *Reader) listOffset(ctx context.Context, topic string, partition int, ts int64) (int64, error) {
	m, err := r.client.roundTrip(ctx, nil, &listoffsets.Request{
		ReplicaID:      -1,
		IsolationLevel: int8(r.config.IsolationLevel),
		Topics: []listoffsets.RequestTopic{{
			Topic: topic,
			Partitions: []listoffsets.RequestPartition{{
				Partition:          int32(partition),
				CurrentLeaderEpoch: -1,
				Timestamp:          ts,
			}},
		}},
	})
	if err != nil {
		return 0, err
	}
	for _, t := range m.(*listoffsets.Response).Topics {
		if t.Topic != topic {
			continue
		}
		for _, p := range t.Partitions {
			if p.Partition == int32(partition) {
				if err := makeError(p.ErrorCode, ""); err != nil {
					return 0, err
				}
				return p.Offset, nil
			}
		}
	}
	return 0, UnknownTopicOrPartition
}

// listFirstLast returns the first and the end offsets of a partition, with
// a 10s bound like the other setup requests.
func (r *Reader) listFirstLast(ctx context.Context, topic string, partition int) (first, last int64, err error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if first, err = r.listOffset(ctx, topic, partition, FirstOffset); err != nil {
		return 0, 0, err
	}
	if last, err = r.listOffset(ctx, topic, partition, LastOffset); err != nil {
		return 0, 0, err
	}
	return first, last, nil
}

// createTopic asks for the metadata of topic allowing its creation, as
// the original reader does when it looks for a partition leader: brokers
// with auto.create.topics.enable create the topic of a reader this way.
// It reports whether the topic exists afterwards.
func (r *Reader) createTopic(ctx context.Context, topic string) bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	m, err := r.client.roundTrip(ctx, nil, &metadata.Request{
		TopicNames:             []string{topic},
		Topics:                 []metadata.RequestTopic{{Name: topic}},
		AllowAutoTopicCreation: true,
	})
	if err != nil {
		return false
	}
	for _, t := range m.(*metadata.Response).Topics {
		if t.Name == topic && t.ErrorCode == 0 && len(t.Partitions) > 0 {
			return true
		}
	}
	return false
}

// readFetchedBytes copies b out of the decoder's buffers and releases them;
// nil (a null key or value) stays nil.
func readFetchedBytes(b protocol.Bytes) ([]byte, error) {
	if b == nil {
		return nil, nil
	}
	defer b.Close()
	return protocol.ReadAll(b)
}
