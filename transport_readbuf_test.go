package kafka

import (
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/stretchr/testify/require"
)

// An idle connection costs little heap: its read buffer is small (frames
// larger than it are read straight from the socket into their own
// buffer), since a consumer keeps a connection per broker it talks to and
// every byte held doubles in the heap the collector lets grow.
func TestBrokerConnIdleHeap(t *testing.T) {
	fc := fakebroker.New(t, 1)
	d := &net.Dialer{}
	cfg := &dialConfig{dial: d.DialContext, dialTimeout: 10 * time.Second, clientID: "test"}
	const n = 32
	conns := make([]*brokerConn, 0, n)
	defer func() {
		for _, c := range conns {
			c.close(errConnClosed)
		}
	}()
	// The first connection warms up what all share (codecs, pools).
	c, err := dialBroker(testContext(t), cfg, "tcp", fc.Addr().String(), fc.Addr().String(), false)
	require.NoError(t, err)
	conns = append(conns, c)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 1; i < n; i++ {
		c, err := dialBroker(testContext(t), cfg, "tcp", fc.Addr().String(), fc.Addr().String(), false)
		require.NoError(t, err)
		conns = append(conns, c)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perConn := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / (n - 1)
	t.Logf("%d bytes of heap per idle connection", perConn)
	require.Less(t, perConn, int64(32<<10), "heap per idle connection")
}
