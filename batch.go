package kafka

import (
	"errors"
	"io"
	"sync"
	"time"

	"github.com/segmentio/kafka-go/internal/eof"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/fetch"
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
// response, the one being read, and the highest offset met so far (-1
// before any), which lets the offset move past records that were removed by
// compaction or skipped.
type batchState struct {
	batches []protocol.RecordReader
	next    int
	current protocol.RecordReader
	start   int64 // the fetch offset
	last    int64
	empty   bool // the fetch started at the high watermark
	aborted *abortedFilter
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
		batchState:    &batchState{start: offset, last: -1},
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
	if len(res.aborted) != 0 {
		b.aborted = &abortedFilter{pending: res.aborted}
	}
	return b
}

// Throttle is how long the broker throttled the request.
func (batch *Batch) Throttle() time.Duration { return batch.throttle }

// HighWaterMark is the partition's high watermark when it was fetched.
func (batch *Batch) HighWaterMark() int64 { return batch.highWaterMark }

// Partition is the partition the batch was read from.
func (batch *Batch) Partition() int { return batch.partition }

// Offset is the offset of the next message of the batch.
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
	batch.offset = rec.Offset + 1
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
	batch.offset = rec.Offset + 1
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
	for {
		if batch.current == nil {
			if batch.next >= len(batch.batches) {
				batch.finish()
				return nil, batch.err
			}
			r := batch.batches[batch.next]
			batch.next++
			if batch.skipBatch(r) {
				continue
			}
			if end := batchEnd(r); end >= 0 && end < batch.offset {
				// Its header says every record is below the offset: no
				// need to go through them.
				batch.last = max(batch.last, end)
				continue
			}
			batch.current = r
		}
		rec, err := batch.current.ReadRecord()
		if err != nil {
			if errors.Is(err, io.EOF) {
				// Records compacted away at the batch's end still count
				// as read: its header says where it ends.
				batch.last = max(batch.last, batchEnd(batch.current))
				batch.current = nil
				continue
			}
			batch.current = nil
			batch.err = eof.Unexpected(err)
			return nil, batch.err
		}
		batch.last = max(batch.last, rec.Offset)
		if rec.Offset < batch.offset {
			closeRecord(rec)
			continue
		}
		return rec, nil
	}
}

// skipBatch consumes r and reports true if its records are not for the
// application: control batches (transaction markers), and batches of
// aborted transactions when reading committed records only.
func (batch *Batch) skipBatch(r protocol.RecordReader) bool {
	switch b := r.(type) {
	case *protocol.ControlBatch:
		for {
			cr, err := b.ReadControlRecord()
			if err != nil {
				break
			}
			batch.last = max(batch.last, cr.Offset)
			if batch.aborted != nil && cr.Type == controlAbort {
				batch.aborted.end(b.ProducerID)
			}
		}
		batch.last = max(batch.last, b.LastOffset())
		return true
	case *protocol.RecordBatch:
		if batch.aborted == nil || !b.Attributes.Transactional() || !batch.aborted.isAborted(b.ProducerID, b.BaseOffset) {
			return false
		}
		for {
			rec, err := b.ReadRecord()
			if err != nil {
				break
			}
			batch.last = max(batch.last, rec.Offset)
			closeRecord(rec)
		}
		batch.last = max(batch.last, b.LastOffset())
		return true
	}
	return false
}

// batchEnd is the offset of the last record a v2 batch was written with,
// from its header, or -1 for other record readers.
func batchEnd(r protocol.RecordReader) int64 {
	switch b := r.(type) {
	case *protocol.RecordBatch:
		return b.LastOffset()
	case *protocol.ControlBatch:
		return b.LastOffset()
	}
	return -1
}

// finish sets the error of a batch read to its end: io.EOF, or
// RequestTimedOut when the deadline passed meanwhile (the response may have
// been cut short by it). The offset moves past every record met and past
// the end of every v2 batch gone through, so that records removed by
// compaction at the end of a batch, transaction markers and aborted records
// are not fetched again.
func (batch *Batch) finish() {
	if !batch.deadline.IsZero() && time.Now().After(batch.deadline) {
		batch.err = RequestTimedOut
	} else {
		batch.err = io.EOF
	}
	switch {
	case batch.last >= batch.offset:
		batch.offset = batch.last + 1
	case len(batch.batches) != 0 && batch.last < batch.start:
		// Brokers return the batches that end at or after the fetch
		// offset. Batches whose records all come before it lost their
		// later records to compaction, so the fetch offset itself is gone:
		// step over it rather than fetch the same batches again.
		batch.offset++
	}
}

// Type of the control record that ends an aborted transaction.
const controlAbort = 0

// abortedFilter tracks the transactions a read-committed fetch reported as
// aborted: a transactional batch of a producer is aborted from the first
// offset of its transaction until the producer's abort marker.
type abortedFilter struct {
	pending []fetch.ResponseTransaction // by first offset, not reached yet
	active  map[int64]struct{}          // producer IDs with an open aborted transaction
}

func (f *abortedFilter) isAborted(producerID, offset int64) bool {
	for len(f.pending) != 0 && f.pending[0].FirstOffset <= offset {
		if f.active == nil {
			f.active = make(map[int64]struct{})
		}
		f.active[f.pending[0].ProducerID] = struct{}{}
		f.pending = f.pending[1:]
	}
	_, ok := f.active[producerID]
	return ok
}

func (f *abortedFilter) end(producerID int64) { delete(f.active, producerID) }
