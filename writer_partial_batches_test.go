package kafka

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Partial batches sent while callers wait for bytes that only they hold
// (docs/backpressure.md, question 5).

// paddedMessages returns messages whose values are "i" padded with spaces
// to size bytes, so that their order can be checked.
func paddedMessages(key string, from, to, size int) []Message {
	msgs := make([]Message, 0, to-from)
	for i := from; i < to; i++ {
		v := []byte(strconv.Itoa(i))
		for len(v) < size {
			v = append(v, ' ')
		}
		msgs = append(msgs, Message{Key: []byte(key), Value: v})
	}
	return msgs
}

// assertEachKeyInOrder checks that, within one partition's records, the
// padded sequence numbers of every key appear exactly once each, from 0 up,
// with no gap, repeat or reordering.
func assertEachKeyInOrder(t *testing.T, recs []stubRecord) map[string]int {
	t.Helper()
	next := map[string]int{}
	for i, r := range recs {
		n, err := strconv.Atoi(strings.TrimRight(r.value, " "))
		require.NoError(t, err, "record %d", i)
		require.Equal(t, next[r.key], n, "record %d of key %q: order broken, duplicate or gap", i, r.key)
		next[r.key]++
	}
	return next
}

// While a caller waits for bytes, the partial batches holding them are sent
// at once instead of at BatchTimeout: 80 messages of 1 KiB through a
// 16 KiB budget over 8 partitions go through in rounds of one broker round
// trip. BatchTimeout is an hour: before, each round waited for it, and the
// deadline below fails the test.
func TestWriterWaitingCallerSendsPartialBatches(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 8})
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, Async: true,
		BatchTimeout: time.Hour, MaxBufferedBytes: 16 << 10, RequiredAcks: RequireOne,
	}
	defer shutdown(w, stub)
	msgs := paddedMessages("k", 0, 80, 1000)
	size := int64(msgs[0].totalSize())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range msgs {
		require.NoError(t, w.WriteMessages(ctx, msgs[i]), "message %d", i)
	}
	// All but what fits in the budget went out without Flush or timeout.
	sent := stub.totalRecords()
	require.GreaterOrEqual(t, int64(sent), int64(len(msgs))-(16<<10)/size)
	require.NoError(t, w.Flush(ctx))
	total := 0
	for p := 0; p < 8; p++ {
		recs := stub.records(topicPartition{"t", int32(p)})
		total += len(recs)
		for i := 1; i < len(recs); i++ {
			a, _ := strconv.Atoi(strings.TrimRight(recs[i-1].value, " "))
			b, _ := strconv.Atoi(strings.TrimRight(recs[i].value, " "))
			require.Less(t, a, b, "partition %d out of order", p)
		}
	}
	require.Equal(t, len(msgs), total)
	s := w.Stats()
	t.Logf("%d produce requests for %d messages, %d waits for space", s.Writes, len(msgs), s.BufferWaits)
}

// The same with the default BatchTimeout (1 s). Before, the 80 calls took
// about 4 s, one BatchTimeout per round; the time is logged, not asserted
// (the machine may be loaded), and the round count is bounded by a budget
// that must run out for the test to mean anything.
func TestWriterWaitingCallerDefaultBatchTimeout(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 8})
	w := &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, Async: true,
		MaxBufferedBytes: 16 << 10, RequiredAcks: RequireOne,
	}
	defer shutdown(w, stub)
	start := time.Now()
	for _, m := range paddedMessages("k", 0, 80, 1000) {
		require.NoError(t, w.WriteMessages(context.Background(), m))
	}
	elapsed := time.Since(start)
	s := w.Stats()
	require.Positive(t, s.BufferWaits, "the budget never ran out: the test tests nothing")
	require.NoError(t, w.Flush(context.Background()))
	require.Equal(t, 80, stub.totalRecords())
	t.Logf("80 calls in %v, longest batch wait %v, %d produce requests", elapsed, s.BatchTime.Max, s.Writes)
}

// The liveness argument behind sending partial batches: with many callers
// queued for a budget of a few messages, spread over many partitions, and a
// BatchTimeout that never fires, every message still gets through (a
// partial batch is sent whenever nothing else would give bytes back).
func TestWriterWaitingCallersNeverWaitForBatchTimeout(t *testing.T) {
	for _, c := range []struct {
		name       string
		completion bool
	}{{"no Completion", false}, {"slow Completion", true}} {
		t.Run(c.name, func(t *testing.T) {
			stub := newStubBroker(map[string]int{"t": 8})
			stub.produceDelay = 100 * time.Microsecond
			w := &Writer{
				Addr: TCP("stub"), Topic: "t", Transport: stub, Async: true,
				BatchTimeout: time.Hour, MaxBufferedBytes: 4 << 10, RequiredAcks: RequireOne,
				Balancer: &Hash{},
			}
			if c.completion {
				w.Completion = func([]Message, error) { time.Sleep(200 * time.Microsecond) }
			}
			defer shutdown(w, stub)
			const producers, each = 16, 40
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			for p := 0; p < producers; p++ {
				wg.Add(1)
				go func(p int) {
					defer wg.Done()
					for _, m := range paddedMessages("k"+strconv.Itoa(p), 0, each, 1000) {
						if err := w.WriteMessages(ctx, m); err != nil {
							t.Errorf("producer %d: %v", p, err)
							return
						}
					}
				}(p)
			}
			wg.Wait()
			require.NoError(t, w.Flush(ctx))
			require.Equal(t, producers*each, stub.totalRecords())
			// Hash keeps each producer on one partition: its messages are
			// there once each and in the order it wrote them.
			seen := map[string]int{}
			for p := 0; p < 8; p++ {
				for k, n := range assertEachKeyInOrder(t, stub.records(topicPartition{"t", int32(p)})) {
					seen[k] += n
				}
			}
			require.Len(t, seen, producers)
			for k, n := range seen {
				require.Equal(t, each, n, "key %s", k)
			}
		})
	}
}
