// Package logshape is a test fixture: the log of one partition shaped the
// way Apache Kafka shapes it, which the embedded cluster (kfake) never
// does, the Fetch answers a Kafka broker gives from it, and what Kafka's
// own consumer returns from it.
//
// A Log holds record batches of several producers: plain, idempotent and
// transactional, committed and aborted transactions with their control
// batches (markers), compressed batches, LogAppendTime batches, and what
// the log cleaner leaves behind: batches whose records were removed but
// whose header keeps the last offset, batches left empty, and gaps where
// whole batches went. Fetch cuts responses at MaxBytes (the last batch
// partial, the first one always whole) and at segment ends, and lists the
// aborted transactions as Kafka computes them. Consume states the Java
// consumer's rules over the same log, independently of the code under
// test, so that tests can compare what a client returns with it.
//
// Batches are encoded with the protocol package's own record encoder
// (protocol.RecordSet.WriteTo), then given their header fields.
package logshape

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/segmentio/kafka-go/compress"
	"github.com/segmentio/kafka-go/protocol"
)

// Record is one record of a batch.
type Record struct {
	Offset  int64
	Time    time.Time // create time, in milliseconds
	Key     []byte    // nil is a null key
	Value   []byte    // nil is a null value
	Headers []protocol.Header
}

// Marker says whether a batch is a control batch, and which marker it
// holds.
type Marker int8

const (
	NoMarker Marker = iota // a batch of records
	Commit                 // a control batch ending a committed transaction
	Abort                  // a control batch ending an aborted transaction
)

// NoProducer is the producer ID of a batch written without one.
const NoProducer = -1

// Batch is a record batch as the broker stores it.
type Batch struct {
	// Base and Last are the offsets the header covers: records removed by
	// compaction leave Last unchanged.
	Base, Last    int64
	ProducerID    int64 // NoProducer, or a producer's ID
	ProducerEpoch int16
	Transactional bool
	Marker        Marker
	// AppendTime, when set, makes the batch a LogAppendTime batch: every
	// record's time is this one.
	AppendTime time.Time
	Codec      compress.Compression
	// Records are the records left, in offset order, between Base and
	// Last. A control batch holds one, at Base.
	Records []Record
}

// Txn is an aborted transaction as the broker indexes it.
type Txn struct {
	ProducerID   int64
	FirstOffset  int64 // of the transaction's first batch
	MarkerOffset int64 // of its abort marker
}

// Log is the log of one partition. Build it with Append and EndTxn, then
// compact it by editing Batches (removing records or whole batches, never
// markers). Once Fetch was called it must not change.
type Log struct {
	Batches     []Batch
	StartOffset int64
	// SegmentStarts are the offsets at which a new segment begins; a Fetch
	// answer never holds batches of two segments.
	SegmentStarts []int64
	// Aborted is the transaction index: the aborted transactions, in the
	// order of their markers, as they were written (compaction does not
	// change it).
	Aborted []Txn

	open map[int64]int64 // producer -> first offset of its open transaction

	once sync.Once
	enc  [][]byte // encoded batches, by index
	err  error
}

// End is the log end offset, which is also the high watermark here.
func (l *Log) End() int64 {
	if len(l.Batches) == 0 {
		return l.StartOffset
	}
	return l.Batches[len(l.Batches)-1].Last + 1
}

// LastStable is the last stable offset: the first offset of the earliest
// transaction still open, or the end of the log.
func (l *Log) LastStable() int64 {
	lso := l.End()
	for _, first := range l.open {
		lso = min(lso, first)
	}
	return lso
}

// baseTime is where record times start: times are derived from offsets,
// so that the log is the same whenever it is built.
var baseTime = time.UnixMilli(1_700_000_000_000)

// Append adds b at the end of the log: its records are numbered from the
// end offset, and those without a time get one. A transactional batch
// begins a transaction of its producer if none is open. It returns the
// batch as stored.
func (l *Log) Append(b Batch) Batch {
	if len(b.Records) == 0 {
		panic("logshape: Append needs records (compact the log to empty a batch)")
	}
	b.Marker = NoMarker
	b.Base = l.End()
	b.Last = b.Base + int64(len(b.Records)) - 1
	recs := make([]Record, len(b.Records))
	for i, r := range b.Records {
		r.Offset = b.Base + int64(i)
		if r.Time.IsZero() {
			r.Time = baseTime.Add(time.Duration(r.Offset) * time.Millisecond)
		}
		recs[i] = r
	}
	b.Records = recs
	if b.Transactional {
		if b.ProducerID == NoProducer {
			panic("logshape: a transactional batch needs a producer")
		}
		if _, ok := l.open[b.ProducerID]; !ok {
			if l.open == nil {
				l.open = make(map[int64]int64)
			}
			l.open[b.ProducerID] = b.Base
		}
	}
	l.Batches = append(l.Batches, b)
	return b
}

// EndTxn writes the marker that commits or aborts the open transaction of
// a producer (a marker without a transaction is written too, as a broker
// does for a transaction that wrote nothing to this partition).
func (l *Log) EndTxn(producerID int64, epoch int16, commit bool) Batch {
	offset := l.End()
	b := Batch{
		Base: offset, Last: offset,
		ProducerID: producerID, ProducerEpoch: epoch, Transactional: true,
		Marker:  Commit,
		Records: []Record{{Offset: offset, Time: baseTime.Add(time.Duration(offset) * time.Millisecond)}},
	}
	if !commit {
		b.Marker = Abort
		if first, ok := l.open[producerID]; ok {
			l.Aborted = append(l.Aborted, Txn{ProducerID: producerID, FirstOffset: first, MarkerOffset: offset})
		}
	}
	delete(l.open, producerID)
	l.Batches = append(l.Batches, b)
	return b
}

// Open reports whether a producer has a transaction open.
func (l *Log) Open(producerID int64) bool {
	_, ok := l.open[producerID]
	return ok
}

// Values returns records with the given values, and keys "k-" + value.
func Values(values ...string) []Record {
	recs := make([]Record, len(values))
	for i, v := range values {
		recs[i] = Record{Key: []byte("k-" + v), Value: []byte(v)}
	}
	return recs
}

// check reports a log that Kafka could not hold.
func (l *Log) check() error {
	next := l.StartOffset
	for i, b := range l.Batches {
		if b.Base < next || b.Last < b.Base {
			return fmt.Errorf("logshape: batch %d covers %d..%d after offset %d", i, b.Base, b.Last, next)
		}
		prev := b.Base - 1
		for _, r := range b.Records {
			if r.Offset <= prev || r.Offset > b.Last {
				return fmt.Errorf("logshape: batch %d (%d..%d) holds offset %d after %d", i, b.Base, b.Last, r.Offset, prev)
			}
			prev = r.Offset
		}
		if b.Marker != NoMarker && (len(b.Records) != 1 || b.Last != b.Base || b.ProducerID == NoProducer) {
			return fmt.Errorf("logshape: control batch %d at %d is not one marker of a producer", i, b.Base)
		}
		next = b.Last + 1
	}
	if !sort.SliceIsSorted(l.SegmentStarts, func(i, j int) bool { return l.SegmentStarts[i] < l.SegmentStarts[j] }) {
		return fmt.Errorf("logshape: segment starts out of order")
	}
	return nil
}

// segment is the index of the segment holding offset.
func (l *Log) segment(offset int64) int {
	return sort.Search(len(l.SegmentStarts), func(i int) bool { return l.SegmentStarts[i] > offset })
}

// segmentEnd is the offset at which the segment of index seg ends.
func (l *Log) segmentEnd(seg int) int64 {
	if seg < len(l.SegmentStarts) {
		return l.SegmentStarts[seg]
	}
	return l.End()
}
