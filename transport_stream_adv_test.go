package kafka

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/apiversions"
	"github.com/segmentio/kafka-go/protocol/fetch"
	"github.com/stretchr/testify/require"
)

// gateCtx is a context whose second Done call (the wait for the response
// in brokerConn.roundTrip; the first is the wait for the write slot)
// waits until the response was handed over, then reports the context
// ended: roundTrip then finds both its response and the end of its
// context ready, and takes either.
type gateCtx struct {
	context.Context // Value
	answered        <-chan struct{}

	mu    sync.Mutex
	calls int
	done  chan struct{}
}

func (g *gateCtx) Deadline() (time.Time, bool) { return time.Time{}, false }

func (g *gateCtx) Done() <-chan struct{} {
	g.mu.Lock()
	g.calls++
	second := g.calls == 2
	g.mu.Unlock()
	if second {
		<-g.answered
		time.Sleep(50 * time.Millisecond) // the read loop hands the body over
		close(g.done)
	}
	return g.done
}

func (g *gateCtx) Err() error {
	select {
	case <-g.done:
		return context.Canceled
	default:
		return nil
	}
}

// A streamed request whose context ends just as its response was handed
// over releases the body it never read: the connection's read loop skips
// it and answers the next request on the connection.
func TestBrokerConnStreamAbandonedAfterHandOver(t *testing.T) {
	fc := tpNewFakeCluster(t, 1)
	b := fc.brokers[0]
	b.mu.Lock()
	b.apiKeys = append([]apiversions.ApiKeyResponse(nil), b.apiKeys...)
	for i, k := range b.apiKeys {
		if protocol.ApiKey(k.ApiKey) == protocol.Fetch {
			b.apiKeys[i].MaxVersion = 11 // fetchFrameV11
		}
	}
	b.mu.Unlock()
	answered := make(chan struct{}, 1)
	fc.setHandler(func(r *tpFakeRequest) {
		if _, ok := r.Msg.(*fetch.Request); ok {
			writeRaw(r, fetchFrameV11(r.ID, 6, streamBatch(t, 0, 3), streamBatch(t, 3, 6))...)
			select {
			case answered <- struct{}{}:
			default:
			}
		}
	})
	cfg := &dialConfig{dial: defaultDialer.DialContext, dialTimeout: 10 * time.Second, clientID: "test"}
	c, err := dialBroker(testContext(t), cfg, "tcp", fc.addr().String())
	require.NoError(t, err)
	defer c.close(errConnClosed)

	var abandoned, read int
	newFetch := func(records *int) *streamedFetch {
		return &streamedFetch{
			Request: &fetch.Request{ReplicaID: -1, MaxBytes: 1 << 20, Topics: []fetch.RequestTopic{{
				Topic: "t", Partitions: []fetch.RequestPartition{{PartitionMaxBytes: 1 << 20}},
			}}},
			ctx: testContext(t),
			each: func(topic string, p *fetch.ResponsePartition, bs *protocol.BatchStream) error {
				for {
					b, err := bs.Next()
					if err != nil {
						return ignoreFetchEOF(err)
					}
					for {
						if _, err := b.ReadRecord(); err != nil {
							break
						}
						*records++
					}
				}
			},
		}
	}
	for i := 0; i < 40; i++ {
		select {
		case <-answered: // the previous round trip's
		default:
		}
		var records int
		sf := newFetch(&records)
		ctx := &gateCtx{Context: context.Background(), answered: answered, done: make(chan struct{})}
		// A read loop that kept waiting for the body would never answer
		// again: the round trip would hang.
		res := make(chan error, 1)
		go func() {
			_, err := c.roundTrip(ctx, sf)
			res <- err
		}()
		select {
		case err = <-res:
		case <-time.After(10 * time.Second):
			t.Fatalf("round trip %d hangs (after %d abandoned)", i, abandoned)
		}
		switch {
		case err == context.Canceled:
			abandoned++
		case err == nil:
			require.Equal(t, 6, records)
			read++
		default:
			t.Fatalf("round trip %d: %v", i, err)
		}
		require.NoError(t, c.broken())

		// The connection answers the next request.
		records = 0
		ctx2, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err = c.roundTrip(ctx2, newFetch(&records))
		cancel()
		require.NoError(t, err, "the request after round trip %d", i)
		require.Equal(t, 6, records)
	}
	t.Logf("%d responses abandoned after their hand-over, %d read", abandoned, read)
	require.NotZero(t, abandoned)
	require.NotZero(t, read)
}
