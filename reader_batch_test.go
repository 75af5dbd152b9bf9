package kafka

import (
	"context"
	"fmt"
	"testing"

	"github.com/segmentio/kafka-go/protocol/fetch"
)

// batchStub answers every fetch with records from the fetch offset to end,
// in batches of 100, so that each delivered batch of the Reader holds many
// messages.
func batchStub(end int64) *stubPartition {
	stub := &stubPartition{first: 0, last: end}
	for i := 0; i < 50; i++ {
		stub.answers = append(stub.answers, func(offset int64) *fetch.ResponsePartition {
			to := min(offset+100, end)
			return &fetch.ResponsePartition{HighWatermark: end, RecordSet: stubSet(stubBatch(1, false, offset, to))}
		})
	}
	return stub
}

// SetOffset in the middle of a batch FetchMessage took from the queue: the
// rest of that batch, and what was queued behind it, is not returned; the
// next message is the one at the new offset, then the following ones,
// once each. Offset and Lag follow each message returned, mid-batch too.
func TestReaderBatchSetOffsetMidBatch(t *testing.T) {
	for _, capacity := range []int{1, 7, 100, 1000} {
		t.Run(fmt.Sprint(capacity), func(t *testing.T) {
			const end = 1000
			r := newStubReader(t, batchStub(end), func(c *ReaderConfig) { c.QueueCapacity = capacity })
			got := fetchOffsets(t, r, 10)
			if fmt.Sprint(got) != fmt.Sprint(offsetList(0, 10)) {
				t.Fatalf("offsets %v", got)
			}
			if o, l := r.Offset(), r.Lag(); o != 10 || l != end-10 {
				t.Fatalf("mid-batch: offset %d, lag %d", o, l)
			}
			if err := r.SetOffset(500); err != nil {
				t.Fatal(err)
			}
			if o := r.Offset(); o != 500 {
				t.Fatalf("offset after SetOffset %d", o)
			}
			got = fetchOffsets(t, r, 30)
			if fmt.Sprint(got) != fmt.Sprint(offsetList(500, 530)) {
				t.Fatalf("offsets after SetOffset(500) %v", got)
			}
			if o, l := r.Offset(), r.Lag(); o != 530 || l != end-530 {
				t.Fatalf("offset %d, lag %d", o, l)
			}
			// Back to an offset the Reader already returned: returned again,
			// in order, once.
			if err := r.SetOffset(5); err != nil {
				t.Fatal(err)
			}
			got = fetchOffsets(t, r, 200)
			if fmt.Sprint(got) != fmt.Sprint(offsetList(5, 205)) {
				t.Fatalf("offsets after SetOffset(5) %v", got)
			}
		})
	}
}

// Close in the middle of a batch: FetchMessage then returns the messages
// already in hand in order or io.EOF, never a duplicate or a gap, and the
// partition reader's goroutines end (Close waits for them).
func TestReaderBatchCloseMidBatch(t *testing.T) {
	r := newStubReader(t, batchStub(1000), func(c *ReaderConfig) { c.QueueCapacity = 100 })
	got := fetchOffsets(t, r, 3)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	next := got[len(got)-1] + 1
	for {
		m, err := r.FetchMessage(context.Background())
		if err != nil {
			break
		}
		if m.Offset != next {
			t.Fatalf("after Close: offset %d, want %d", m.Offset, next)
		}
		next++
	}
	if st := r.Stats(); st.QueueLength < 0 {
		t.Fatalf("queue length %d", st.QueueLength)
	}
}

// The queue length Stats reports counts messages, those of the batch in
// hand included, and never more than were fetched and not returned.
func TestReaderBatchQueueLength(t *testing.T) {
	const end = 1000
	r := newStubReader(t, batchStub(end), func(c *ReaderConfig) { c.QueueCapacity = 100 })
	fetchOffsets(t, r, 1)
	st := r.Stats()
	if st.QueueLength < 0 || st.QueueLength > end-1 || st.QueueCapacity != 100 {
		t.Fatalf("queue %d/%d", st.QueueLength, st.QueueCapacity)
	}
	if st.Messages < 1+st.QueueLength {
		t.Fatalf("%d messages fetched, %d queued after one returned", st.Messages, st.QueueLength)
	}
}

func offsetList(from, to int64) []int64 {
	var l []int64
	for o := from; o < to; o++ {
		l = append(l, o)
	}
	return l
}
