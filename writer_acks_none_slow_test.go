package kafka

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/protocol"
	produceAPI "github.com/segmentio/kafka-go/protocol/produce"
)

// A broker slower than the Writer's WriteTimeout still appends a
// partition's acks=0 batches in order: a lane whose barrier times out, or
// whose write is cut mid-request, ends its connection with a half close
// and sends nothing more to the broker, on any connection, before the
// broker has closed its side, which it does after the requests it read.
// In each test the broker holds the requests of one connection behind a
// gate until the Writer reports that it is waiting for them ("still
// working through"); a message that goes out on another connection
// instead (as it must not) is let through to the log first, and
// checkOrder then sees it ahead of the gated ones. Without the half close
// and the wait, each test fails every time.

// gatedBroker is an appendLog whose broker holds the requests of the
// first connection a Produce request came on until gate is closed.
type gatedBroker struct {
	*appendLog
	gate  chan struct{}
	gated atomic.Value // the client address of that connection
}

func newGatedBroker(t *testing.T, fc *fakebroker.Cluster, prefix string) *gatedBroker {
	g := &gatedBroker{appendLog: newAppendLog(t, fc, prefix, 0), gate: make(chan struct{})}
	fc.SetHandler(func(r *fakebroker.Request) {
		addr := r.Conn.NC.RemoteAddr().String()
		if r.Msg.ApiKey() == protocol.Produce {
			g.gated.CompareAndSwap(nil, addr)
		}
		if g.gated.Load() == addr {
			nc := r.Conn.NC
			if tc, ok := nc.(interface{ NetConn() net.Conn }); ok {
				nc = tc.NetConn()
			}
			if tc, ok := nc.(*net.TCPConn); ok {
				// Its socket buffer stops growing: a Writer's writes
				// soon block (WriteCut).
				tc.SetReadBuffer(256 << 10)
			}
			<-g.gate
		}
		if r.Msg.ApiKey() == protocol.Produce {
			g.handle(r)
		}
	})
	return g
}

// laneOn says whether a lane of w writes on the connection from addr.
func laneOn(w *Writer, addr any) bool {
	ls := &w.state().noAck
	ls.mu.Lock()
	var lanes []*noAckLane
	for _, l := range ls.byPool {
		lanes = append(lanes, l)
	}
	ls.mu.Unlock()
	for _, l := range lanes {
		l.turn <- struct{}{}
		on := l.lease != nil && l.lease.c.nc.LocalAddr().String() == addr
		<-l.turn
		if on {
			return true
		}
	}
	return false
}

// openWhenHeld opens the gate once w reports waiting, or once done
// delivers: then, unless the message went on the gated connection itself
// (a sink took the lane up again before it was given up), once it has
// been appended, so that it is seen to overtake the gated ones. It fails
// the test if the call failed.
func (g *gatedBroker) openWhenHeld(t *testing.T, w *Writer, waiting <-chan struct{}, done <-chan error) {
	t.Helper()
	var err error
	select {
	case <-waiting:
		close(g.gate)
		err = <-done
	case err = <-done:
		if !laneOn(w, g.gated.Load()) {
			tpWaitFor(t, "the message sent past the gate to be appended", func() bool { return g.count() > 0 })
		}
		close(g.gate)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// slowBrokerWriter is a Writer with RequireNone, a WriteTimeout far
// shorter than the gate holds, and one attempt per batch: a batch held back
// is not sent, and that is not an attempt. waiting is closed when it first
// reports holding a batch back.
func slowBrokerWriter(fc *fakebroker.Cluster, tr *Transport) (w *Writer, waiting chan struct{}) {
	waiting = make(chan struct{})
	var once sync.Once
	w = &Writer{
		Addr: fc.Addr(), Topic: "t", Transport: tr, RequiredAcks: RequireNone, BatchSize: 1,
		Balancer:     BalancerFunc(func(Message, ...int) int { return 0 }),
		WriteTimeout: 50 * time.Millisecond, MaxAttempts: 1,
		WriteBackoffMin: time.Millisecond, WriteBackoffMax: 5 * time.Millisecond,
		ErrorLogger: LoggerFunc(func(msg string, args ...interface{}) {
			if strings.Contains(fmt.Sprintf(msg, args...), "still working through") {
				once.Do(func() { close(waiting) })
			}
		}),
	}
	return w, waiting
}

// The lane's barrier, at the end of its linger, times out behind the gated
// requests; the next message must wait for them.
func TestWriterRequireNoneSlowBrokerLingerEnd(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.SetLeader(0, 1)
	g := newGatedBroker(t, fc, "m")
	w, waiting := slowBrokerWriter(fc, tpNewTransport(t))
	defer w.Close()
	for n := 0; n < 10; n++ {
		if err := w.WriteMessages(context.Background(), Message{Value: []byte("m" + strconv.Itoa(n))}); err != nil {
			t.Fatal(err)
		}
	}
	tpWaitFor(t, "the sink to let go of its lane", func() bool { return !sinksHoldLane(w) })
	done := make(chan error, 1)
	go func() { done <- w.WriteMessages(context.Background(), Message{Value: []byte("m10")}) }()
	g.openWhenHeld(t, w, waiting, done)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	g.checkOrder(11)
}

// The partition's leader moves away from the gated broker: its next batch
// goes to the new leader only once the old one is done with the previous.
func TestWriterRequireNoneSlowBrokerLeaderMoves(t *testing.T) {
	fc := fakebroker.New(t, 2)
	fc.SetLeader(0, 1)
	g := newGatedBroker(t, fc, "m")
	tr := &Transport{MetadataTTL: time.Millisecond, ClientID: "test"}
	t.Cleanup(tr.CloseIdleConnections)
	w, waiting := slowBrokerWriter(fc, tr)
	defer w.Close()
	for n := 0; n < 5; n++ {
		if err := w.WriteMessages(context.Background(), Message{Value: []byte("m" + strconv.Itoa(n))}); err != nil {
			t.Fatal(err)
		}
	}
	fc.SetLeader(0, 2)
	req := &produceAPI.Request{Topics: []produceAPI.RequestTopic{{Topic: "t", Partitions: []produceAPI.RequestPartition{{Partition: 0}}}}}
	tpWaitFor(t, "the transport to route partition 0 to broker 2", func() bool {
		cl, pool, err := tr.route(context.Background(), fc.Addr(), req)
		if err != nil {
			return false
		}
		defer cl.leave()
		return pool.broker.ID == 2
	})
	done := make(chan error, 1)
	go func() { done <- w.WriteMessages(context.Background(), Message{Value: []byte("m5")}) }()
	g.openWhenHeld(t, w, waiting, done)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	g.checkOrder(6)
}

// The gated connection's socket buffers fill up, and a write stops
// mid-request at WriteTimeout: that request goes out again only after the
// broker has worked through the complete ones before it (and dropped the
// cut one). Under TLS too, where the cut leaves half a record on the wire.
func TestWriterRequireNoneSlowBrokerWriteCut(t *testing.T) {
	t.Run("tcp", func(t *testing.T) { writeCutUnderGate(t, fakebroker.New(t, 1), tpNewTransport(t)) })
	t.Run("tls", func(t *testing.T) {
		serverConf, clientConf := tpSelfSignedTLS(t)
		tr := &Transport{TLS: clientConf, MetadataTTL: time.Hour, ClientID: "test"}
		t.Cleanup(tr.CloseIdleConnections)
		writeCutUnderGate(t, fakebroker.NewTLS(t, 1, serverConf), tr)
	})
}

func writeCutUnderGate(t *testing.T, fc *fakebroker.Cluster, tr *Transport) {
	const total, size = 64, 256 << 10 // far more than the sockets' buffers hold (4 MiB at most for the client's; see newGatedBroker for the broker's)
	fc.SetLeader(0, 1)
	pad := strings.Repeat("x", size)
	g := newGatedBroker(t, fc, pad)
	w, waiting := slowBrokerWriter(fc, tr)
	// The cut attempt counts; and no other is cut, on a slow machine too.
	w.MaxAttempts, w.WriteTimeout = 2, 500*time.Millisecond
	defer w.Close()
	done := make(chan error, 1)
	go func() {
		for n := 0; n < total; n++ {
			v := []byte(pad + strconv.Itoa(n))
			if err := w.WriteMessages(context.Background(), Message{Value: v}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	g.openWhenHeld(t, w, waiting, done)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	g.checkOrder(total)
}

// A partition that leaves the gated broker is held back; another one in
// the same request, always led by the new broker, is not.
func TestWriterRequireNoneSlowBrokerHoldsBackOnlyTheMoved(t *testing.T) {
	fc := fakebroker.New(t, 2)
	fc.SetLeader(0, 1)
	fc.SetLeader(1, 2)
	g := newGatedBroker(t, fc, "")
	tr := &Transport{MetadataTTL: time.Millisecond, ClientID: "test"}
	t.Cleanup(tr.CloseIdleConnections)
	w, waiting := slowBrokerWriter(fc, tr)
	w.Balancer = BalancerFunc(func(m Message, _ ...int) int { return int(m.Key[0] - '0') })
	w.BatchSize, w.BatchTimeout = 10, 20*time.Millisecond
	defer w.Close()
	for n := 0; n < 5; n++ {
		if err := w.WriteMessages(context.Background(), Message{Key: []byte("0"), Value: []byte(strconv.Itoa(n))}); err != nil {
			t.Fatal(err)
		}
	}
	fc.SetLeader(0, 2)
	req := &produceAPI.Request{Topics: []produceAPI.RequestTopic{{Topic: "t", Partitions: []produceAPI.RequestPartition{{Partition: 0}}}}}
	tpWaitFor(t, "the transport to route partition 0 to broker 2", func() bool {
		cl, pool, err := tr.route(context.Background(), fc.Addr(), req)
		if err != nil {
			return false
		}
		defer cl.leave()
		return pool.broker.ID == 2
	})
	// The Writer's own view too, so that both partitions' batches go to
	// broker 2's sink, in one request.
	w.state().meta.invalidate("t")
	if _, err := w.partitions(context.Background(), "t", nil); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- w.WriteMessages(context.Background(), Message{Key: []byte("0"), Value: []byte("5")}, Message{Key: []byte("1"), Value: []byte("100")})
	}()
	<-waiting
	tpWaitFor(t, "partition 1's message to be appended while partition 0's is held back", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(g.log[1]) == 1
	})
	close(g.gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	g.checkOrder(7)
}

// A sink whose broker lost its partitions leaves that broker's lane with a
// barrier, which behind the gated requests takes the whole WriteTimeout,
// out of the time of the request it was about to send. The request's
// partition never went on that lane (its first batch): it is not written,
// and that is not an attempt. With MaxAttempts 1 it must not fail.
func TestWriterRequireNoneSlowBrokerLeavingLaneIsNotAnAttempt(t *testing.T) {
	fc := fakebroker.New(t, 2)
	fc.SetLeader(0, 1)
	fc.SetLeader(1, 1)
	g := newGatedBroker(t, fc, "")
	tr := &Transport{MetadataTTL: time.Millisecond, ClientID: "test"}
	t.Cleanup(tr.CloseIdleConnections)
	w, _ := slowBrokerWriter(fc, tr)
	w.Balancer = BalancerFunc(func(m Message, _ ...int) int { return int(m.Key[0] - '0') })
	defer w.Close()
	if err := w.WriteMessages(context.Background(), Message{Key: []byte("0"), Value: []byte("0")}); err != nil {
		t.Fatal(err)
	}
	fc.SetLeader(0, 2)
	fc.SetLeader(1, 2)
	req := &produceAPI.Request{Topics: []produceAPI.RequestTopic{{Topic: "t", Partitions: []produceAPI.RequestPartition{{Partition: 1}}}}}
	tpWaitFor(t, "the transport to route partition 1 to broker 2", func() bool {
		cl, pool, err := tr.route(context.Background(), fc.Addr(), req)
		if err != nil {
			return false
		}
		defer cl.leave()
		return pool.broker.ID == 2
	})
	// The Writer's view still has broker 1 lead both: its sink for broker
	// 1 takes partition 1's batch, and the Transport sends it to broker 2.
	if err := w.WriteMessages(context.Background(), Message{Key: []byte("1"), Value: []byte("1")}); err != nil {
		t.Fatalf("partition 1, never sent before: %v", err)
	}
	close(g.gate)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	g.checkOrder(2)
}

// Close ends the drain of a connection the broker has not closed yet: no
// goroutine stays behind for it.
func TestWriterRequireNoneCloseEndsDrain(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.SetLeader(0, 1)
	g := newGatedBroker(t, fc, "m")
	defer close(g.gate)
	w, _ := slowBrokerWriter(fc, tpNewTransport(t))
	for n := 0; n < 3; n++ {
		if err := w.WriteMessages(context.Background(), Message{Value: []byte("m" + strconv.Itoa(n))}); err != nil {
			t.Fatal(err)
		}
	}
	tpWaitFor(t, "the sink to let go of its lane", func() bool { return !sinksHoldLane(w) })
	tpWaitFor(t, "a drain to start", func() bool { return drainGoroutines() > 0 })
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tpWaitFor(t, "the drain to end", func() bool { return drainGoroutines() == 0 })
}

// drainGoroutines counts the goroutines draining a connection.
func drainGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "(*brokerConn).shutDrained(")
		}
		buf = make([]byte, 2*len(buf))
	}
}
