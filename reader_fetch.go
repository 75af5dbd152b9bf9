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

// readerMessage is what partition readers send to FetchMessage: a message
// or an error, tagged with the version of the reader that produced it.
type readerMessage struct {
	version   int64
	message   Message
	watermark int64
	error     error
}

// partitionReader fetches one partition and queues its messages on the
// Reader's channel. It holds at most one fetch response at a time, so the
// memory of a Reader is bounded by QueueCapacity messages plus one
// response (MaxBytes) per partition.
type partitionReader struct {
	reader    *Reader
	topic     string
	partition int
	version   int64
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
				p.stats().errors.observe(1)
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
			p.stats().rebalances.observe(1)
			return true

		case errors.Is(err, RequestTimedOut):
			errcount = 0
			p.stats().timeouts.observe(1)
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

		default:
			var kerr Error
			if errors.As(err, &kerr) {
				p.sendError(ctx, err)
			} else {
				p.logError(func(l Logger) {
					l.Printf("the kafka reader got an unknown error reading partition %d of %s at offset %d: %s", p.partition, p.topic, toHumanOffset(*offset), err)
				})
				p.stats().errors.observe(1)
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
	p.stats().dials.observe(1)
	p.stats().dialTime.observeDuration(time.Since(t0))
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
	st.fetches.observe(1)
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

	t0 := time.Now()
	rctx, cancel := context.WithTimeout(ctx, cfg.MaxWait+cfg.ReadBatchTimeout)
	defer cancel()

	var count, size int64
	var hwm int64
	send := func(msg Message) error {
		n := int64(len(msg.Key) + len(msg.Value))
		st.messages.observe(1)
		st.bytes.observe(n)
		if err := p.sendMessage(ctx, msg, hwm); err != nil {
			return err
		}
		st.offset.observe(msg.Offset + 1)
		st.lag.observe(hwm - (msg.Offset + 1))
		count++
		size += n
		return nil
	}

	// With the Reader's own transport, records are read off the socket as
	// they arrive (streamedFetch); with any other RoundTripper (tests),
	// from a response read whole.
	var m Response
	var err error
	var sf *streamedFetch
	if _, ok := p.reader.client.Transport.(*Transport); ok {
		sf = &streamedFetch{Request: req, ctx: ctx, timeout: cfg.ReadBatchTimeout}
		sf.each = func(topic string, part *fetch.ResponsePartition, bs *protocol.BatchStream) error {
			if topic != p.topic || part.Partition != int32(p.partition) || part.ErrorCode != 0 || sf.delivered {
				return nil
			}
			sf.delivered = true
			hwm = part.HighWatermark
			sf.next, sf.err = p.deliver(ctx, part, offset, bs.Next, send)
			sf.batches = bs.Batches()
			return sf.err
		}
		m, err = p.reader.client.roundTrip(rctx, nil, sf)
	} else {
		m, err = p.reader.client.roundTrip(rctx, nil, req)
	}
	t1 := time.Now()
	if sf != nil && !sf.headerAt.IsZero() {
		t1 = sf.headerAt
	}
	st.waitTime.observeDuration(t1.Sub(t0))
	if sf != nil && sf.delivered {
		// Whatever happened after the records were read, those delivered
		// are delivered: the next fetch starts after them.
		st.readTime.observeDuration(time.Since(t1))
		st.fetchSize.observe(count)
		st.fetchBytes.observe(size)
		next := max(sf.next, offset)
		switch {
		case sf.err != nil:
			return next, sf.err
		case err != nil && ctx.Err() != nil:
			return next, ctx.Err()
		case err != nil:
			return next, err
		case next == offset && sf.batches > 0:
			return next, errFetchNoProgress
		}
		return next, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return offset, ctx.Err()
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return offset, RequestTimedOut
		}
		return offset, err
	}
	res := m.(*fetch.Response)
	if err := makeError(res.ErrorCode, ""); err != nil {
		return offset, err
	}
	var part *fetch.ResponsePartition
	for i := range res.Topics {
		if res.Topics[i].Topic != p.topic {
			continue
		}
		for j := range res.Topics[i].Partitions {
			if res.Topics[i].Partitions[j].Partition == int32(p.partition) {
				part = &res.Topics[i].Partitions[j]
			}
		}
	}
	if part == nil {
		return offset, fmt.Errorf("fetch response without partition %d of %s", p.partition, p.topic)
	}
	if err := makeError(part.ErrorCode, ""); err != nil {
		closeFetchedRecordSet(&part.RecordSet)
		return offset, err
	}
	if sf != nil {
		return offset, nil // no records for the partition
	}

	stream, _ := part.RecordSet.Records.(*protocol.RecordStream)
	if stream == nil {
		return offset, nil
	}
	defer closeFetchedRecordSet(&part.RecordSet)
	hwm = part.HighWatermark
	i := 0
	next, err := p.deliver(ctx, part, offset, func() (protocol.RecordReader, error) {
		if i == len(stream.Records) {
			return nil, io.EOF
		}
		i++
		return stream.Records[i-1], nil
	}, send)
	st.readTime.observeDuration(time.Since(t1))
	st.fetchSize.observe(count)
	st.fetchBytes.observe(size)
	if err == nil && next == offset && len(stream.Records) > 0 {
		// Batches came back but every one ends before the fetch offset:
		// Kafka never answers so (it starts at the batch holding the
		// offset, and a batch read to its end moves the offset past it),
		// but a broker that did would give the same answer again, so pace
		// the retries.
		err = errFetchNoProgress
	}
	return next, err
}

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
func (p *partitionReader) deliver(ctx context.Context, part *fetch.ResponsePartition, offset int64, nextBatch func() (protocol.RecordReader, error), send func(Message) error) (int64, error) {
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
			return ignoreFetchEOF(err)
		}
		closeFetchedRecord(rec)
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
			return ignoreFetchEOF(err)
		}
		if !cur.Wants(rec.Offset) {
			// A compressed batch comes whole, including the records before
			// the fetch offset.
			closeFetchedRecord(rec)
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
// Bytes or a reference count per record.
func (p *partitionReader) readRecordFields(batch protocol.RecordFieldsReader, hwm int64, cur *fetchcursor.Cursor, send func(Message) error) error {
	var rec protocol.RecordFields
	for {
		if err := batch.ReadRecordFields(&rec); err != nil {
			return ignoreFetchEOF(err)
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
		msg.Key, msg.Value = copyKeyValue(rec.Key, rec.Value)
		if err := send(msg); err != nil {
			return err
		}
		cur.Delivered(rec.Offset)
	}
}

// copyKeyValue copies a key and a value into one allocation; nil (null)
// stays nil and empty stays empty. The key's capacity ends where the value
// starts, so appending to it cannot overwrite the value.
func copyKeyValue(k, v []byte) (key, value []byte) {
	if k == nil && v == nil {
		return nil, nil
	}
	buf := make([]byte, len(k)+len(v))
	if k != nil {
		key = buf[:len(k):len(k)]
		copy(key, k)
	}
	if v != nil {
		value = buf[len(k):]
		copy(value, v)
	}
	return key, value
}

func (p *partitionReader) sendMessage(ctx context.Context, msg Message, watermark int64) error {
	// Most sends find room: a one-case select is a plain channel send,
	// without the cost of selecting over two channels per message.
	select {
	case p.reader.queue <- readerMessage{version: p.version, message: msg, watermark: watermark}:
		return nil
	default:
	}
	select {
	case p.reader.queue <- readerMessage{version: p.version, message: msg, watermark: watermark}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
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

func ignoreFetchEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// readAndClose copies b out of the decoder's buffers and releases them;
// nil (a null key or value) stays nil.
func readFetchedBytes(b protocol.Bytes) ([]byte, error) {
	if b == nil {
		return nil, nil
	}
	defer b.Close()
	return protocol.ReadAll(b)
}

func closeFetchedRecord(rec *protocol.Record) {
	if rec.Key != nil {
		rec.Key.Close()
	}
	if rec.Value != nil {
		rec.Value.Close()
	}
}

// closeRecordSet releases the records of rs that were not read, so that
// their buffers can be recycled.
func closeFetchedRecordSet(rs *protocol.RecordSet) {
	if rs.Records == nil {
		return
	}
	for {
		rec, err := rs.Records.ReadRecord()
		if err != nil {
			return
		}
		closeFetchedRecord(rec)
	}
}
