package kafka

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	metadataAPI "github.com/segmentio/kafka-go/protocol/metadata"
	"github.com/stretchr/testify/require"
)

// A count dropped by invalidate (after a leadership error) is asked for
// again at the next call, even while it would still be fresh, and the
// count of one topic never answers for another.
func TestWriterPartitionCountInvalidatedAndPerTopic(t *testing.T) {
	stub := newStubBroker(map[string]int{"a": 2, "b": 5})
	w := &Writer{Addr: TCP("stub"), Transport: stub, RequiredAcks: RequireOne}
	defer w.Close()
	ctx := context.Background()
	count := func(topic string) int {
		t.Helper()
		n, err := w.partitions(ctx, topic, nil)
		require.NoError(t, err)
		return n
	}
	for i := 0; i < 3; i++ {
		require.Equal(t, 2, count("a"))
		require.Equal(t, 5, count("b"))
	}
	stub.mu.Lock()
	stub.partitions["a"] = 7
	asked := stub.metaRequests
	stub.mu.Unlock()
	require.Equal(t, 2, count("a"), "the count is cached within writerMetadataTTL")

	w.state().meta.invalidate("a")
	require.Equal(t, 7, count("a"), "an invalidated count is asked for again")
	require.Equal(t, 5, count("b"))
	require.Equal(t, 7, count("a"))
	stub.mu.Lock()
	defer stub.mu.Unlock()
	require.Equal(t, asked+1, stub.metaRequests, "one new request, for the invalidated topic")
}

// The lock-free count of the last topic, under concurrent lookups of two
// topics and invalidations: a lookup never answers with another topic's
// count, and once a topic is invalidated (with no lookup of it in flight)
// its next lookup gets the new count, whatever the other topic's callers
// publish meanwhile.
func TestWriterPartitionCountConcurrentInvalidate(t *testing.T) {
	stub := newStubBroker(map[string]int{"a": 1, "b": 1000})
	w := &Writer{Addr: TCP("stub"), Transport: stub, RequiredAcks: RequireOne}
	defer w.Close()
	ctx := context.Background()
	var stop atomic.Bool
	var wg sync.WaitGroup
	bad := make(chan int, 1)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				n, err := w.partitions(ctx, "b", nil)
				if err != nil || n != 1000 {
					select {
					case bad <- n:
					default:
					}
					return
				}
				if g%2 == 0 {
					w.state().meta.invalidate("b")
				}
			}
		}()
	}
	for round := 1; round <= 200; round++ {
		stub.mu.Lock()
		stub.partitions["a"] = round
		stub.mu.Unlock()
		w.state().meta.invalidate("a")
		for i := 0; i < 3; i++ {
			n, err := w.partitions(ctx, "a", nil)
			require.NoError(t, err)
			require.Equal(t, round, n, "round %d, lookup %d", round, i)
		}
	}
	stop.Store(true)
	wg.Wait()
	select {
	case n := <-bad:
		t.Fatalf("topic b answered %d", n)
	default:
	}
}

// The lookup every WriteMessages call makes, from concurrent callers.
func BenchmarkWriterPartitionCount(b *testing.B) {
	stub := newStubBroker(map[string]int{"t": 3})
	w := &Writer{Addr: TCP("stub"), Transport: stub, RequiredAcks: RequireOne}
	defer w.Close()
	ctx := context.Background()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := w.partitions(ctx, "t", nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// heldMetadata answers Metadata from its stub, then waits for release
// before returning the answer, as a slow broker does.
type heldMetadata struct {
	*stubBroker
	answered chan struct{}
	release  chan struct{}
}

func (h *heldMetadata) RoundTrip(ctx context.Context, addr net.Addr, req Request) (Response, error) {
	res, err := h.stubBroker.RoundTrip(ctx, addr, req)
	if _, ok := req.(*metadataAPI.Request); ok && h.release != nil {
		close(h.answered)
		<-h.release
	}
	return res, err
}

// An invalidation that arrives while a lookup is in flight is not undone
// by that lookup's answer (which may predate the change the invalidation
// reports): the next call asks again instead of trusting it for
// writerMetadataTTL.
func TestWriterPartitionCountInvalidatedDuringLookup(t *testing.T) {
	stub := newStubBroker(map[string]int{"a": 2})
	held := &heldMetadata{stubBroker: stub, answered: make(chan struct{}), release: make(chan struct{})}
	w := &Writer{Addr: TCP("stub"), Transport: held, RequiredAcks: RequireOne}
	defer w.Close()
	ctx := context.Background()
	first := make(chan int)
	go func() {
		n, _ := w.partitions(ctx, "a", nil)
		first <- n
	}()
	<-held.answered // the answer says 2
	stub.mu.Lock()
	stub.partitions["a"] = 7
	stub.mu.Unlock()
	w.state().meta.invalidate("a") // e.g. a produce error after the change
	close(held.release)
	require.Equal(t, 2, <-first, "the lookup in flight returns what it got")
	held.release = nil
	n, err := w.partitions(ctx, "a", nil)
	require.NoError(t, err)
	require.Equal(t, 7, n, "the count fetched before the invalidation is not trusted after it")
}
