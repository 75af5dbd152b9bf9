// Package fetchcursor follows a consumer through the record batches of one
// fetched partition the way Kafka's own consumer does: which batches hold
// records for the application, which records of those are wanted, and the
// offset to fetch next. The Reader, Conn's Batch and Client.Fetch read
// batches through it, so that they agree on every log a broker can serve.
//
// The rules, as the Java consumer applies them:
//
//   - A Fetch response lists the aborted transactions whose abort marker is
//     at or after the fetch offset (and perhaps some beyond the records it
//     returns). Reading committed records, every batch that has a producer
//     ID takes off that list the transactions that begin at or before the
//     batch's last offset: their producers are then inside an aborted
//     transaction. Control batches (transaction markers) count as batches
//     here: an ABORT marker reached first takes its transaction off the list
//     before it ends it, so that the transaction cannot be applied to the
//     producer's next one.
//   - An ABORT marker ends its producer's aborted transaction; the records
//     of a transactional batch whose producer is inside one are skipped.
//   - Control records are never delivered.
//   - Records before the fetch offset are not delivered (a compressed batch
//     comes whole, and so does the batch holding the fetch offset).
//   - After a v2 batch read to its end, the next offset is the one after
//     its last offset, records or not: compaction keeps a batch's last
//     offset when it removes its last records, and keeps batches it
//     emptied.
package fetchcursor

import (
	"sort"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/fetch"
)

// noProducer is the producer ID of a batch written without one.
const noProducer = -1

// markerAbort is the type of the control record that ends an aborted
// transaction (a commit marker is 1).
const markerAbort = 0

// Cursor is the position of a consumer in the batches of one fetch
// response, in the order they come. It is used by one goroutine.
type Cursor struct {
	next      int64
	committed bool
	pending   []fetch.ResponseTransaction // not reached yet, by first offset
	aborted   map[int64]struct{}          // producers inside an aborted transaction
}

// New returns a cursor at the fetch offset. With readCommitted, aborted is
// the response's list of aborted transactions (copied, not modified);
// otherwise it is ignored, as every record is delivered.
func New(offset int64, readCommitted bool, aborted []fetch.ResponseTransaction) Cursor {
	c := Cursor{next: offset, committed: readCommitted}
	if readCommitted && len(aborted) != 0 {
		c.pending = append([]fetch.ResponseTransaction(nil), aborted...)
		sort.SliceStable(c.pending, func(i, j int) bool { return c.pending[i].FirstOffset < c.pending[j].FirstOffset })
	}
	return c
}

// Next is the offset to fetch next: past every record delivered and every
// batch ended.
func (c *Cursor) Next() int64 { return c.next }

// Begin is called when a batch is reached, before any of its records is
// read. It reports whether the records of the batch may go to the
// application: false for a control batch, whose records (markers) it
// reads, and, reading committed records, for a batch of an aborted
// transaction, whose records the caller skips. Either way the caller calls
// End once it read the batch to its end.
func (c *Cursor) Begin(b protocol.RecordReader) bool {
	switch b := b.(type) {
	case *protocol.ControlBatch:
		abort := firstMarkerAborts(b)
		if c.committed && b.ProducerID != noProducer {
			c.reach(b.LastOffset())
			if abort {
				delete(c.aborted, b.ProducerID)
			}
		}
		return false
	case *protocol.RecordBatch:
		if !c.committed || b.ProducerID == noProducer {
			return true
		}
		c.reach(b.LastOffset())
		if !b.Attributes.Transactional() {
			return true
		}
		_, aborted := c.aborted[b.ProducerID]
		return !aborted
	}
	// Legacy message sets have no producers, transactions or markers.
	return true
}

// reach takes off the pending list the aborted transactions that begin at
// or before offset.
func (c *Cursor) reach(offset int64) {
	for len(c.pending) != 0 && c.pending[0].FirstOffset <= offset {
		if c.aborted == nil {
			c.aborted = make(map[int64]struct{})
		}
		c.aborted[c.pending[0].ProducerID] = struct{}{}
		c.pending = c.pending[1:]
	}
}

// Wants reports whether the record at offset is for the application, in a
// batch Begin let through: records before the position are not.
func (c *Cursor) Wants(offset int64) bool { return offset >= c.next }

// Delivered moves the position past a record handed to the application.
func (c *Cursor) Delivered(offset int64) {
	if offset >= c.next {
		c.next = offset + 1
	}
}

// End moves the position past a batch that was read to its end: a v2
// batch ends at its last offset, whatever records compaction left in it.
// A legacy message set has no such header; the records read moved the
// position already.
func (c *Cursor) End(b protocol.RecordReader) {
	if last := LastOffset(b); last >= c.next {
		c.next = last + 1
	}
}

// LastOffset is the last offset a v2 batch covers, from its header (records
// compacted away included), or -1 for a legacy message set.
func LastOffset(b protocol.RecordReader) int64 {
	switch b := b.(type) {
	case *protocol.RecordBatch:
		return b.LastOffset()
	case *protocol.ControlBatch:
		return b.LastOffset()
	}
	return -1
}

// firstMarkerAborts reads the records of a control batch and reports
// whether the first is an ABORT marker (a batch holds one marker; Kafka's
// consumer, too, looks at the first).
func firstMarkerAborts(b *protocol.ControlBatch) bool {
	abort := false
	for i := 0; ; i++ {
		rec, err := b.ReadRecord()
		if err != nil {
			return abort
		}
		// ReadControlRecord releases the record's key and value.
		cr, err := protocol.ReadControlRecord(rec)
		if i == 0 && err == nil {
			abort = cr.Type == markerAbort
		}
	}
}
