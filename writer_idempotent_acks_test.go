package kafka

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Writer literal with Idempotent set and RequiredAcks left at zero works:
// its requests ask every in-sync replica (the fake broker refuses an
// idempotent batch with any other acks, as Kafka does), in sync and async
// mode, and Stats reports the acks actually asked for.
func TestIdempotentWriterZeroAcksMeansAll(t *testing.T) {
	for _, async := range []bool{false, true} {
		b := newIdemBroker(map[string]int{"t": 1})
		w := newIdemWriter(b)
		w.RequiredAcks = 0
		w.Async = async
		var failed error
		w.Completion = func(_ []Message, err error) {
			if err != nil {
				failed = err
			}
		}
		require.NoError(t, w.WriteMessages(context.Background(), msgsFor(0, "a", 3)...), "async=%v", async)
		require.NoError(t, w.Close())
		require.NoError(t, failed, "async=%v", async)
		assert.Equal(t, values("a", 3), b.logOf(tp0), "async=%v", async)
		assert.Equal(t, int64(RequireAll), w.Stats().RequiredAcks)
	}
}

// NewWriter refuses an idempotent configuration that asks for the leader's
// acknowledgement only, at construction rather than at the first write;
// zero (which WriterConfig has always read as all replicas) and -1 pass.
func TestIdempotentWriterConfigAcks(t *testing.T) {
	for acks, ok := range map[int]bool{0: true, -1: true, 1: false, 2: false} {
		cfg := WriterConfig{Brokers: []string{"127.0.0.1:1"}, Topic: "t", Idempotent: true, RequiredAcks: acks}
		err := cfg.Validate()
		if ok {
			require.NoError(t, err, "acks %d", acks)
			continue
		}
		require.Error(t, err, "acks %d", acks)
		require.Contains(t, err.Error(), "set RequiredAcks to RequireAll")
		require.Panics(t, func() { NewWriter(cfg) }, "acks %d", acks)
	}
}
