package kafka

import (
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/protocol"
	produceAPI "github.com/segmentio/kafka-go/protocol/produce"
	"github.com/segmentio/kafka-go/protocol/saslauthenticate"
	"github.com/segmentio/kafka-go/protocol/saslhandshake"
	"github.com/segmentio/kafka-go/sasl/plain"
)

// leasedConns counts the connections of tr's pools that are checked out.
func leasedConns(tr *Transport) int {
	tr.mutex.Lock()
	clusters := make([]*cluster, 0, len(tr.clusters))
	for _, cl := range tr.clusters {
		clusters = append(clusters, cl)
	}
	tr.mutex.Unlock()
	n := 0
	for _, cl := range clusters {
		cl.mu.Lock()
		pools := []*connPool{cl.seed}
		for _, p := range cl.brokers {
			pools = append(pools, p)
		}
		cl.mu.Unlock()
		for _, p := range pools {
			p.mu.Lock()
			for _, c := range p.conns {
				if c.own && c.inflight > 0 {
					n++
				}
			}
			p.mu.Unlock()
		}
	}
	return n
}

// noAckLaneCount is how many lanes w holds.
func noAckLaneCount(w *Writer) int {
	ls := &w.state().noAck
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return len(ls.byPool)
}

// After Close, a Writer with RequireNone holds no connection: the ones its
// sinks wrote on go back to the pool, and CloseIdleConnections closes them
// all; its goroutines are gone. Close comes while callers write, some of
// them flushing, and while the brokers drop connections now and then.
func TestWriterRequireNoneCloseReleasesConnections(t *testing.T) {
	fc := fakebroker.New(t, 2)
	for p := int32(0); p < 4; p++ {
		fc.SetLeader(p, 1+p%2)
	}
	var reqs atomic.Int64
	fc.SetHandler(func(r *fakebroker.Request) {
		if req, ok := r.Msg.(*produceAPI.Request); !ok || req.Acks != 0 {
			t.Errorf("unexpected request %T", r.Msg)
		}
		if reqs.Add(1)%37 == 0 {
			r.CloseConn()
		}
	})
	before := runtime.NumGoroutine()
	tr := &Transport{MetadataTTL: time.Hour, ClientID: "test"}

	w := &Writer{
		Addr: fc.Addr(), Topic: "t", Transport: tr, RequiredAcks: RequireNone,
		BatchSize: 2, BatchTimeout: time.Millisecond, WriteBackoffMin: time.Millisecond, WriteBackoffMax: 5 * time.Millisecond,
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for n := 0; ; n++ {
				var err error
				if g == 0 && n%10 == 0 {
					err = w.Flush(context.Background())
				} else {
					err = w.WriteMessages(context.Background(), Message{Value: []byte(strconv.Itoa(n))})
				}
				if errors.Is(err, io.ErrClosedPipe) {
					return
				}
				var we WriteErrors
				if err != nil && !errors.As(err, &we) {
					t.Errorf("writer %d: %v", g, err)
					return
				}
			}
		}(g)
	}
	tpWaitFor(t, "requests", func() bool { return reqs.Load() > 200 })
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if n := leasedConns(tr); n != 0 {
		t.Fatalf("%d connections still leased after Close", n)
	}
	if n := noAckLaneCount(w); n != 0 {
		t.Fatalf("%d lanes left after Close", n)
	}
	tr.CloseIdleConnections()
	for _, b := range fc.Brokers {
		tpWaitFor(t, "the connections to close", func() bool { return b.NumClosed() == b.NumConns() })
	}
	tpWaitFor(t, "the goroutines to exit", func() bool { return runtime.NumGoroutine() <= before })
}

// A broker that goes down while a Writer with RequireNone writes to it:
// the batches fail after their attempts, Close returns, and no connection
// stays leased (none to the broker that is down, nor to the other).
func TestWriterRequireNoneBrokerDownAtClose(t *testing.T) {
	fc := fakebroker.New(t, 2)
	fc.SetLeader(0, 1)
	fc.SetLeader(1, 2)
	var reqs atomic.Int64
	fc.SetHandler(func(r *fakebroker.Request) { reqs.Add(1) })
	tr := tpNewTransport(t)
	var failed atomic.Int64
	w := &Writer{
		Addr: fc.Addr(), Topic: "t", Transport: tr, RequiredAcks: RequireNone, Async: true,
		BatchSize: 1, BatchTimeout: time.Millisecond, MaxAttempts: 3, MaxBufferedBatches: 4,
		WriteBackoffMin: time.Millisecond, WriteBackoffMax: 2 * time.Millisecond,
		Completion: func(_ []Message, err error) {
			if err != nil {
				failed.Add(1)
			}
		},
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := w.WriteMessages(context.Background(), Message{Value: []byte(strconv.Itoa(n))}); err != nil {
				if !errors.Is(err, io.ErrClosedPipe) {
					t.Error(err)
				}
				return
			}
		}
	}()
	tpWaitFor(t, "requests", func() bool { return reqs.Load() > 100 })
	fc.Brokers[1].Stop()
	tpWaitFor(t, "a batch to fail", func() bool { return failed.Load() > 0 })
	close(stop)
	<-done
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := leasedConns(tr); n != 0 {
		t.Fatalf("%d connections still leased after Close", n)
	}
}

// Writers sharing a Transport do not wait for each other's connections:
// while the broker does not read the connection a Writer with RequireNone
// writes on, other Writers (acks=0 and acks=1) still get their messages
// through.
func TestWriterRequireNoneDoesNotHoldOthersUp(t *testing.T) {
	fc := fakebroker.New(t, 1)
	stuck := make(chan struct{})
	var stuckConn atomic.Int64
	fc.SetHandler(func(r *fakebroker.Request) {
		req := r.Msg.(*produceAPI.Request)
		v := firstValue(t, req)
		if v == "stuck" {
			stuckConn.Store(int64(r.Conn.Num))
			<-stuck // the broker stops reading this connection
		}
		if req.Acks != 0 {
			tpProduceReply(r, 0)
		}
	})
	tr := tpNewTransport(t)
	a := &Writer{Addr: fc.Addr(), Topic: "t", Transport: tr, RequiredAcks: RequireNone, Async: true, BatchSize: 1}
	defer func() {
		close(stuck)
		a.Close()
	}()
	if err := a.WriteMessages(context.Background(), Message{Value: []byte("stuck")}, Message{Value: []byte("behind")}); err != nil {
		t.Fatal(err)
	}
	tpWaitFor(t, "the stuck request", func() bool { return stuckConn.Load() != 0 })

	for _, acks := range []RequiredAcks{RequireNone, RequireOne} {
		b := &Writer{Addr: fc.Addr(), Topic: "t", Transport: tr, RequiredAcks: acks, BatchSize: 1}
		if err := b.WriteMessages(testContext(t), Message{Value: []byte("other")}); err != nil {
			t.Fatal(err)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func firstValue(t *testing.T, req *produceAPI.Request) string {
	if len(req.Topics) == 0 || len(req.Topics[0].Partitions) == 0 {
		t.Error("empty produce request")
		return ""
	}
	p := req.Topics[0].Partitions[0]
	rec, err := p.RecordSet.Records.ReadRecord()
	if err != nil {
		t.Errorf("partition %d: %v", p.Partition, err)
		return ""
	}
	v, _ := protocol.ReadAll(rec.Value)
	return string(v)
}

// With RequireNone and a RoundTripper that is not a *Transport, the
// requests go through it, with Acks 0, and every message gets there.
func TestWriterRequireNoneCustomRoundTripper(t *testing.T) {
	fc := fakebroker.New(t, 2)
	fc.SetLeader(1, 2)
	var got atomic.Int64
	fc.SetHandler(func(r *fakebroker.Request) {
		req := r.Msg.(*produceAPI.Request)
		if req.Acks != 0 {
			t.Errorf("request with acks=%d", req.Acks)
		}
		for _, tp := range req.Topics {
			for _, p := range tp.Partitions {
				for {
					if _, err := p.RecordSet.Records.ReadRecord(); err != nil {
						break
					}
					got.Add(1)
				}
			}
		}
	})
	tr := tpNewTransport(t)
	var calls atomic.Int64
	rt := acksNoneRoundTripper(func(ctx context.Context, addr net.Addr, req Request) (Response, error) {
		calls.Add(1)
		return tr.RoundTrip(ctx, addr, req)
	})
	w := &Writer{Addr: fc.Addr(), Topic: "t", Transport: rt, RequiredAcks: RequireNone, BatchSize: 5}
	const total = 200
	for n := 0; n < total; n += 10 {
		msgs := make([]Message, 10)
		for i := range msgs {
			msgs[i].Value = []byte(strconv.Itoa(n + i))
		}
		if err := w.WriteMessages(testContext(t), msgs...); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tpWaitFor(t, "every message", func() bool { return got.Load() == total })
	if calls.Load() == 0 {
		t.Fatal("the RoundTripper was not used")
	}
}

type acksNoneRoundTripper func(ctx context.Context, addr net.Addr, req Request) (Response, error)

func (f acksNoneRoundTripper) RoundTrip(ctx context.Context, addr net.Addr, req Request) (Response, error) {
	return f(ctx, addr, req)
}

// A produce request that cannot be encoded for the broker (no version in
// common) is reported to the caller with RequireNone, not retried forever,
// and leaves no connection leased.
func TestWriterRequireNoneRequestErrorReported(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.Brokers[0].SetApiKey(protocol.Produce, 100, 200)
	fc.SetHandler(func(r *fakebroker.Request) { t.Errorf("unexpected request %T", r.Msg) })
	tr := tpNewTransport(t)
	w := &Writer{Addr: fc.Addr(), Topic: "t", Transport: tr, RequiredAcks: RequireNone, WriteBackoffMin: time.Millisecond, WriteBackoffMax: time.Millisecond}
	err := w.WriteMessages(testContext(t), Message{Value: []byte("x")})
	var we WriteErrors
	if !errors.As(err, &we) || len(we) != 1 || !errors.Is(we[0], protocol.ErrNoVersionOverlap) {
		t.Fatalf("got %v, want an error with %v", err, protocol.ErrNoVersionOverlap)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := leasedConns(tr); n != 0 {
		t.Fatalf("%d connections still leased after Close", n)
	}
}

// An idle Writer with RequireNone gives its connection back without being
// closed, after the linger and its barrier: one writing one message at a
// time sends all its Produce requests on one connection, and that
// connection also carries an ApiVersions request beyond the one it opened
// with. (What the linger saves per call, BenchmarkWriterRequireNoneSync
// shows.)
func TestWriterRequireNoneIdleGivesConnectionBack(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.SetLeader(0, 1)
	fc.SetHandler(func(r *fakebroker.Request) {})
	tr := tpNewTransport(t)
	w := &Writer{Addr: fc.Addr(), Topic: "t", Transport: tr, RequiredAcks: RequireNone, BatchSize: 1}
	defer w.Close()
	for n := 0; n < 50; n++ {
		if err := w.WriteMessages(context.Background(), Message{Value: []byte(strconv.Itoa(n))}); err != nil {
			t.Fatal(err)
		}
	}
	tpWaitFor(t, "the idle Writer to give its connection back", func() bool {
		return leasedConns(tr) == 0 && noAckLaneCount(w) == 0
	})
	conns := map[int]bool{}
	lastProduce, barrier := -1, -1
	for i, s := range fc.Requests(protocol.Produce) {
		conns[s.Conn] = true
		lastProduce = i
	}
	if len(conns) != 1 || lastProduce != 49 {
		t.Fatalf("50 produce requests on %d connections (last at %d), want one connection", len(conns), lastProduce)
	}
	fc.Mu.Lock()
	for _, s := range fc.Seen {
		if s.Key == protocol.ApiVersions && conns[s.Conn] {
			barrier++
		}
	}
	fc.Mu.Unlock()
	if barrier < 1 { // one when the connection opened, one barrier
		t.Fatalf("no barrier on the produce connection")
	}
}

// BenchmarkWriterRequireNoneSync: one-message synchronous writes with
// RequireNone, through the Transport to a fake broker on loopback.
func BenchmarkWriterRequireNoneSync(b *testing.B) {
	fc := fakebroker.New(b, 1)
	fc.SetLeader(0, 1)
	fc.SetHandler(func(r *fakebroker.Request) {})
	tr := &Transport{MetadataTTL: time.Hour}
	defer tr.CloseIdleConnections()
	w := &Writer{Addr: fc.Addr(), Topic: "t", Transport: tr, RequiredAcks: RequireNone, BatchSize: 1}
	defer w.Close()
	msg := Message{Value: []byte("x")}
	if err := w.WriteMessages(context.Background(), msg); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := w.WriteMessages(context.Background(), msg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriterRequireNoneAsync: asynchronous writes with RequireNone
// to three partitions of one broker, through the Transport to a fake
// broker on loopback: the lane's one request at a time per broker.
func BenchmarkWriterRequireNoneAsync(b *testing.B) {
	fc := fakebroker.New(b, 1)
	for p := int32(0); p < 3; p++ {
		fc.SetLeader(p, 1)
	}
	fc.SetHandler(func(r *fakebroker.Request) {})
	tr := &Transport{MetadataTTL: time.Hour}
	defer tr.CloseIdleConnections()
	w := &Writer{
		Addr: fc.Addr(), Topic: "t", Transport: tr, Async: true, RequiredAcks: RequireNone,
		BatchSize: 100, BatchTimeout: time.Millisecond, MaxBufferedBatches: 4,
	}
	msg := Message{Value: make([]byte, 100)}
	if err := w.WriteMessages(context.Background(), msg); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(100)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := w.WriteMessages(context.Background(), msg); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// sinksHoldLane says whether a sink of w holds an acks=0 lane.
func sinksHoldLane(w *Writer) bool {
	st := w.state()
	st.sinksMu.Lock()
	defer st.sinksMu.Unlock()
	for _, s := range st.sinks {
		s.mu.Lock()
		held := s.lane != nil
		s.mu.Unlock()
		if held {
			return true
		}
	}
	return false
}

// A lane is given up only once the broker has worked through what was
// written on it. The broker holds the requests of the lane's connection
// (behind a gate) while the Writer's linger ends and other holders take
// the idle connections of the pool, the lane's among them were it given
// up already; the next message then goes out on another connection, and
// must not be appended before the gated ones.
func TestWriterRequireNoneLaneBarrier(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.SetLeader(0, 1)
	a := newGatedBroker(t, fc, "m") // the barrier too waits behind the gated Produce requests
	tr := tpNewTransport(t)
	w := &Writer{Addr: fc.Addr(), Topic: "t", Transport: tr, RequiredAcks: RequireNone, BatchSize: 1}
	defer w.Close()
	for n := 0; n < 10; n++ {
		if err := w.WriteMessages(context.Background(), Message{Value: []byte("m" + strconv.Itoa(n))}); err != nil {
			t.Fatal(err)
		}
	}
	// The linger ends: the sink lets go of the lane, whose barrier waits
	// behind the gated requests.
	tpWaitFor(t, "the sink to let go of its lane", func() bool { return !sinksHoldLane(w) })
	// Other holders take the broker's idle connections, until they hold
	// the lane's (never, while its barrier waits) or a few new ones.
	req := &produceAPI.Request{Topics: []produceAPI.RequestTopic{{Topic: "t", Partitions: []produceAPI.RequestPartition{{Partition: 0}}}}}
	for i := 0; i < 5; i++ {
		other, err := tr.lease(context.Background(), fc.Addr(), req)
		if err != nil {
			t.Fatal(err)
		}
		defer other.release()
		if other.c.nc.LocalAddr().String() == a.gated.Load() {
			break
		}
	}
	done := make(chan error, 1)
	go func() { done <- w.WriteMessages(context.Background(), Message{Value: []byte("m10")}) }()
	select {
	case err := <-done: // written on another connection: it must not be appended first
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(200 * time.Millisecond): // waiting for the barrier, as it should
	}
	close(a.gate)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	a.checkOrder(11)
}

// A broker ends a connection's authenticated session when its lifetime is
// over (KIP-368): a request that comes after it is dropped, and the
// connection closed. With acks=0 nobody would hear of it, so a lane must
// not write past the point where the pool retires a connection: it hands
// its connection back and leases a new one, authenticated again.
func TestWriterRequireNoneSASLSessionEnd(t *testing.T) {
	const lifetime = time.Second
	fc := fakebroker.New(t, 1)
	fc.SetLeader(0, 1)
	a := newAppendLog(t, fc, "m", 0)
	var mu sync.Mutex
	authAt := map[*fakebroker.Conn]time.Time{}
	var dropped, auths atomic.Int64
	fc.Brokers[0].Intercept = func(c *fakebroker.Conn, r *fakebroker.Request) bool {
		switch r.Msg.ApiKey() {
		case protocol.SaslHandshake:
			r.Reply(&saslhandshake.Response{Mechanisms: []string{"PLAIN"}})
			return true
		case protocol.SaslAuthenticate:
			mu.Lock()
			authAt[c] = time.Now()
			mu.Unlock()
			auths.Add(1)
			r.Reply(&saslauthenticate.Response{SessionLifetimeMs: lifetime.Milliseconds()})
			return true
		}
		mu.Lock()
		at, ok := authAt[c]
		mu.Unlock()
		if ok && time.Since(at) > lifetime {
			if r.Msg.ApiKey() == protocol.Produce {
				dropped.Add(1)
			}
			r.CloseConn()
			return true
		}
		return false
	}
	tr := &Transport{SASL: plain.Mechanism{Username: "u", Password: "p"}, MetadataTTL: time.Hour, ClientID: "test"}
	t.Cleanup(tr.CloseIdleConnections)
	w := &Writer{Addr: fc.Addr(), Topic: "t", Transport: tr, RequiredAcks: RequireNone, BatchSize: 1}
	defer w.Close()
	n := 0
	for start := time.Now(); time.Since(start) < 3*lifetime || auths.Load() < 3; n++ {
		if err := w.WriteMessages(context.Background(), Message{Value: []byte("m" + strconv.Itoa(n))}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if d := dropped.Load(); d != 0 {
		t.Fatalf("%d produce requests written after their connection's session ended (%d messages written)", d, n)
	}
	a.checkOrder(n)
}

// A request whose time is always gone before it is written (a WriteTimeout
// shorter than any write) fails its attempts: it is not held back without
// end, and neither WriteMessages nor Close waits forever.
func TestWriterRequireNoneTimeGoneEnds(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.SetLeader(0, 1)
	newAppendLog(t, fc, "m", 0)
	tr := tpNewTransport(t)
	w := &Writer{
		Addr: fc.Addr(), Topic: "t", Transport: tr, RequiredAcks: RequireNone,
		WriteTimeout: time.Nanosecond, MaxAttempts: 2,
		WriteBackoffMin: time.Millisecond, WriteBackoffMax: 2 * time.Millisecond,
	}
	if _, err := w.partitions(context.Background(), "t", nil); err != nil { // the metadata, looked up without WriteTimeout
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		err := w.WriteMessages(context.Background(), Message{Value: []byte("m0")})
		w.Close()
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Log("written within a nanosecond")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("WriteMessages or Close still waiting after 20s")
	}
}
