package kafka

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The messages one WriteMessages call sends to a partition land in the same
// batch when they fit in it, whatever BatchTimeout does meanwhile: a
// BatchTimeout of a nanosecond fires while the call is still adding, and
// must not cut the call into several produce requests. (Idempotent tests
// rely on this: their expected sequence numbers follow the calls.)
func TestWriterCallNotSplitByBatchTimeout(t *testing.T) {
	for _, c := range []struct {
		name           string
		batches, bytes int64
		async          bool
	}{
		{"unbounded", 0, 0, false},
		{"MaxBufferedBatches", 2, 0, false},
		{"MaxBufferedBytes", 0, 1 << 20, false},
		{"both", 2, 1 << 20, false},
		{"both async", 2, 1 << 20, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			stub := newStubBroker(map[string]int{"t": 1})
			w := &Writer{
				Addr: TCP("stub"), Topic: "t", Transport: stub, Async: c.async,
				BatchSize: 1000, BatchTimeout: time.Nanosecond, RequiredAcks: RequireOne,
				MaxBufferedBatches: int(c.batches), MaxBufferedBytes: c.bytes,
			}
			defer shutdown(w, stub)
			ctx := context.Background()
			const calls, each = 20, 200
			for n := 0; n < calls; n++ {
				msgs := make([]Message, each)
				for i := range msgs {
					msgs[i] = Message{Value: []byte(fmt.Sprintf("%d-%d", n, i))}
				}
				require.NoError(t, w.WriteMessages(ctx, msgs...))
				if c.async {
					require.NoError(t, w.Flush(ctx))
				}
			}
			sizes := stub.batchSizes(topicPartition{"t", 0})
			require.Len(t, sizes, calls, "produce requests per call: %v", sizes)
			for i, n := range sizes {
				require.Equal(t, each, n, "request %d", i)
			}
			recs := stub.records(topicPartition{"t", 0})
			require.Len(t, recs, calls*each)
			for i, r := range recs {
				require.Equal(t, fmt.Sprintf("%d-%d", i/each, i%each), r.value)
			}
		})
	}
}
