package kafka

import (
	"errors"
	"io"
	"sync"
	"time"

	"github.com/segmentio/kafka-go/internal/eof"
	"github.com/segmentio/kafka-go/internal/fetchcursor"
	"github.com/segmentio/kafka-go/protocol"
)

// A Batch iterates over the messages of one fetch response, returned by
// (*Conn).ReadBatch. The response is held in memory, decoded lazily as
// messages are read; the connection is free for other requests meanwhile.
// Close the batch to move the connection's offset past what was read.
//
// Batches are safe for concurrent use.
type Batch struct {
	mutex         sync.Mutex
	conn          *Conn
	topic         string
	partition     int
	offset        int64 // of the next message to return
	highWaterMark int64
	throttle      time.Duration
	deadline      time.Time
	err           error

	// The decoding state lives behind a pointer, keeping Batch comparable
	// as it always was.
	*batchState
}

// batchState is the decoding state of a Batch: the record batches of the
// response, the one being read, and the consumer's position in them
// (internal/fetchcursor), which moves past records removed by compaction,
// transaction markers and aborted transactions as Kafka's consumer does.
type batchState struct {
	batches []protocol.RecordReader
	next    int
	current protocol.RecordReader
	cursor  fetchcursor.Cursor
	empty   bool // the fetch started at the high watermark
}

func newBatch(c *Conn, offset int64, deadline time.Time, res fetchResult) *Batch {
	b := &Batch{
		conn:          c,
		topic:         c.topic,
		partition:     int(c.partition),
		offset:        offset,
		highWaterMark: res.highWaterMark,
		throttle:      res.throttle,
		deadline:      deadline,
		err:           res.err,
		batchState:    &batchState{cursor: fetchcursor.New(offset, res.isolation == ReadCommitted, res.aborted)},
	}
	if b.err != nil {
		return b
	}
	switch r := res.records.(type) {
	case nil:
	case *protocol.RecordStream:
		b.batches = r.Records
	default:
		b.batches = []protocol.RecordReader{r}
	}
	b.empty = len(b.batches) == 0 && res.highWaterMark == offset
	return b
}

// Throttle is how long the broker throttled the request.
func (batch *Batch) Throttle() time.Duration { return batch.throttle }

// HighWaterMark is the partition's high watermark when it was fetched.
func (batch *Batch) HighWaterMark() int64 { return batch.highWaterMark }

// Partition is the partition the batch was read from.
func (batch *Batch) Partition() int { return batch.partition }

// Offset tells where reading the batch has got to: the offset that the
// next message read from it will have.
func (batch *Batch) Offset() int64 {
	batch.mutex.Lock()
	defer batch.mutex.Unlock()
	return batch.offset
}

// Err returns the error that broke the batch, if any: the one Read,
// ReadMessage and Close (except io.EOF) return. Checking it is optional.
func (batch *Batch) Err() error {
	batch.mutex.Lock()
	defer batch.mutex.Unlock()
	return batch.err
}

// Close releases the batch, moves the connection's offset past the messages
// read, and returns the error that broke the batch (never io.EOF).
func (batch *Batch) Close() error {
	batch.mutex.Lock()
	defer batch.mutex.Unlock()
	if conn := batch.conn; conn != nil {
		batch.conn = nil
		conn.setOffset(batch.offset)
	}
	if batch.batchState != nil {
		batch.batches, batch.current = nil, nil
	}
	if errors.Is(batch.err, io.EOF) {
		return nil
	}
	return batch.err
}

// Read copies the value of the next message into b (up to cap(b)) and
// returns its length. When the value does not fit, it returns
// io.ErrShortBuffer, which also breaks the batch without consuming the
// message. io.EOF marks the end of the batch.
func (batch *Batch) Read(b []byte) (int, error) {
	batch.mutex.Lock()
	defer batch.mutex.Unlock()
	rec, err := batch.nextRecord()
	if err != nil {
		return 0, err
	}
	defer closeRecord(rec)
	b = b[:cap(b)]
	n := 0
	if rec.Value != nil {
		n = rec.Value.Len()
		if n > len(b) {
			k, _ := io.ReadFull(rec.Value, b)
			batch.err = io.ErrShortBuffer
			return k, io.ErrShortBuffer
		}
		if _, err := io.ReadFull(rec.Value, b[:n]); err != nil {
			batch.err = eof.Unexpected(err)
			return 0, batch.err
		}
	}
	batch.delivered(rec.Offset)
	return n, nil
}

// ReadMessage returns the next message of the batch, with its own copies of
// key and value. io.EOF marks the end of the batch.
func (batch *Batch) ReadMessage() (Message, error) {
	batch.mutex.Lock()
	defer batch.mutex.Unlock()
	msg := Message{Topic: batch.topic, Partition: batch.partition, HighWaterMark: batch.highWaterMark}
	rec, err := batch.nextRecord()
	if err != nil {
		return msg, err
	}
	defer closeRecord(rec)
	if msg.Key, err = protocol.ReadAll(rec.Key); err == nil {
		msg.Value, err = protocol.ReadAll(rec.Value)
	}
	if err != nil {
		batch.err = eof.Unexpected(err)
		return msg, batch.err
	}
	msg.Offset = rec.Offset
	msg.Time = recordTime(rec)
	msg.Headers = rec.Headers
	batch.delivered(rec.Offset)
	return msg, nil
}

// recordTime converts a record's timestamp; records without one (legacy
// magic 0, or -1) have the zero time.
func recordTime(rec *protocol.Record) time.Time {
	if rec.Time.IsZero() {
		return time.Time{}
	}
	return makeTime(rec.Time.UnixMilli())
}

func closeRecord(rec *protocol.Record) {
	if rec.Key != nil {
		rec.Key.Close()
	}
	if rec.Value != nil {
		rec.Value.Close()
	}
}

// delivered moves the batch's offset past a record handed out.
func (batch *Batch) delivered(offset int64) {
	batch.cursor.Delivered(offset)
	batch.offset = batch.cursor.Next()
}

// nextRecord returns the next record to hand out: at or after the batch's
// offset (compressed sets start before the requested offset), not in a
// control batch, not in an aborted transaction. The caller closes it. At
// the end it records and returns the batch's final error.
func (batch *Batch) nextRecord() (*protocol.Record, error) {
	if batch.err != nil {
		return nil, batch.err
	}
	if batch.batchState == nil {
		batch.err = io.ErrUnexpectedEOF // a Batch not made by ReadBatch
		return nil, batch.err
	}
	if batch.empty {
		// Nothing came back because there was nothing to read: the wait
		// the broker was given ran out.
		batch.err = RequestTimedOut
		return nil, batch.err
	}
	cur := &batch.cursor
	for {
		if batch.current == nil {
			if batch.next >= len(batch.batches) {
				batch.finish()
				return nil, batch.err
			}
			r := batch.batches[batch.next]
			batch.next++
			if !cur.Begin(r) {
				// A marker, or an aborted transaction: read past it.
				if err := skipRecords(r); err != nil {
					batch.err = eof.Unexpected(err)
					return nil, batch.err
				}
				batch.endBatch(r)
				continue
			}
			if last := fetchcursor.LastOffset(r); last >= 0 && last < cur.Next() {
				// Its header says every record is before the offset: no
				// need to go through them.
				continue
			}
			batch.current = r
		}
		rec, err := batch.current.ReadRecord()
		if err != nil {
			if errors.Is(err, io.EOF) {
				batch.endBatch(batch.current)
				batch.current = nil
				continue
			}
			batch.current = nil
			batch.err = eof.Unexpected(err)
			return nil, batch.err
		}
		if !cur.Wants(rec.Offset) {
			closeRecord(rec)
			continue
		}
		return rec, nil
	}
}

// endBatch moves the offset past a batch read to its end: past its last
// offset for a v2 batch, records compacted away at its end included.
func (batch *Batch) endBatch(r protocol.RecordReader) {
	batch.cursor.End(r)
	batch.offset = batch.cursor.Next()
}

// finish sets the error of a batch read to its end: io.EOF, or
// RequestTimedOut when the deadline passed meanwhile (the response may have
// been cut short by it). The offset is already past every batch read.
func (batch *Batch) finish() {
	if !batch.deadline.IsZero() && time.Now().After(batch.deadline) {
		batch.err = RequestTimedOut
	} else {
		batch.err = io.EOF
	}
}
