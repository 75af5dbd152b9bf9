package fetchcursor

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/fetch"
)

const producerA, producerB = 1, 2

func records(from, to int64) protocol.RecordReader {
	var recs []protocol.Record
	for o := from; o <= to; o++ {
		recs = append(recs, protocol.Record{Offset: o})
	}
	return protocol.NewRecordReader(recs...)
}

// batch covers base..last and holds the records of offsets from..to
// (none when from > to): compaction may have removed the others.
func batch(pid int64, txn bool, base, last, from, to int64) *protocol.RecordBatch {
	b := &protocol.RecordBatch{BaseOffset: base, LastOffsetDelta: int32(last - base), ProducerID: pid, Records: records(from, to)}
	if txn {
		b.Attributes = protocol.Transactional
	}
	return b
}

func marker(pid, offset int64, commit bool) *protocol.ControlBatch {
	typ := int16(0)
	if commit {
		typ = 1
	}
	b := protocol.NewControlBatch(protocol.ControlRecord{Offset: offset, Type: typ})
	b.Attributes, b.ProducerID, b.BaseOffset = protocol.Control|protocol.Transactional, pid, offset
	return b
}

// consume goes through batches as a reader does and returns the offsets
// delivered, and the offset to fetch next.
func consume(c *Cursor, batches ...protocol.RecordReader) ([]int64, int64) {
	var got []int64
	for _, b := range batches {
		deliver := c.Begin(b)
		for {
			rec, err := b.ReadRecord()
			if errors.Is(err, io.EOF) {
				break
			}
			if deliver && c.Wants(rec.Offset) {
				got = append(got, rec.Offset)
				c.Delivered(rec.Offset)
			}
		}
		c.End(b)
	}
	return got, c.Next()
}

// The log of the issue: 0 A "a1" (aborted), 1 B "p1", 2 A's abort marker,
// 3-4 A's committed "c1" "c2", 5 its commit marker, 6 B "p2". From the
// abort marker, A's next transaction is committed.
func TestAbortMarkerFirst(t *testing.T) {
	log := func() []protocol.RecordReader {
		return []protocol.RecordReader{
			batch(producerA, true, 0, 0, 0, 0), batch(producerB, false, 1, 1, 1, 1), marker(producerA, 2, false),
			batch(producerA, true, 3, 4, 3, 4), marker(producerA, 5, true), batch(producerB, false, 6, 6, 6, 6),
		}
	}
	aborted := []fetch.ResponseTransaction{{ProducerID: producerA, FirstOffset: 0}}
	for _, tc := range []struct {
		from      int64
		committed bool
		want      string
	}{
		{2, true, "[3 4 6] 7"},
		{0, true, "[1 3 4 6] 7"},
		{2, false, "[3 4 6] 7"},
		{0, false, "[0 1 3 4 6] 7"},
	} {
		c := New(tc.from, tc.committed, aborted)
		var batches []protocol.RecordReader
		for _, b := range log() {
			if LastOffset(b) >= tc.from {
				batches = append(batches, b)
			}
		}
		got, next := consume(&c, batches...)
		if s := fmt.Sprint(got, next); s != tc.want {
			t.Errorf("from %d, committed %v: %s, want %s", tc.from, tc.committed, s, tc.want)
		}
	}
}

// A batch whose tail compaction removed, and one it emptied: the position
// moves past both, records or not.
func TestCompactedBatchesEnd(t *testing.T) {
	c := New(7, false, nil)
	got, next := consume(&c, batch(-1, false, 5, 9, 5, 6))
	if fmt.Sprint(got, next) != "[] 10" {
		t.Fatalf("compacted tail: %v %d", got, next)
	}
	got, next = consume(&c, batch(-1, false, 10, 12, 1, 0))
	if fmt.Sprint(got, next) != "[] 13" {
		t.Fatalf("empty batch: %v %d", got, next)
	}
	// A batch that ends before the position (no broker should send one)
	// does not move it back.
	got, next = consume(&c, batch(-1, false, 0, 4, 0, 4))
	if fmt.Sprint(got, next) != "[] 13" {
		t.Fatalf("batch before the position: %v %d", got, next)
	}
}

// The aborted list is taken in order of first offset whatever its order
// in the response (Kafka's is the order of the markers), and is not
// changed; a producer's batches outside transactions are delivered even
// inside its aborted transaction's span; a batch without a producer takes
// nothing off the list.
func TestAbortedListRules(t *testing.T) {
	aborted := []fetch.ResponseTransaction{{ProducerID: producerB, FirstOffset: 4}, {ProducerID: producerA, FirstOffset: 0}}
	c := New(0, true, aborted)
	got, next := consume(&c,
		batch(-1, false, 0, 0, 0, 0),        // delivered
		batch(producerA, true, 1, 2, 1, 2),  // aborted (A from 0)
		batch(producerA, false, 3, 3, 3, 3), // not transactional: delivered
		batch(producerB, true, 4, 5, 4, 5),  // aborted (B from 4)
		marker(producerA, 6, false),         // ends A's
		batch(producerA, true, 7, 7, 7, 7),  // A's next: delivered
		marker(producerB, 8, false),         // ends B's
		batch(producerB, true, 9, 9, 9, 9),  // B's next: delivered
	)
	if fmt.Sprint(got, next) != "[0 3 7 9] 10" {
		t.Fatalf("got %v %d", got, next)
	}
	if aborted[0].ProducerID != producerB {
		t.Fatal("the response's list was reordered")
	}
}

// Legacy message sets have no header last offset: the position follows the
// records delivered.
func TestLegacySet(t *testing.T) {
	c := New(2, true, nil)
	got, next := consume(&c, &protocol.MessageSet{BaseOffset: 0, Records: records(0, 4)})
	if fmt.Sprint(got, next) != "[2 3 4] 5" {
		t.Fatalf("got %v %d", got, next)
	}
}
