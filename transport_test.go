package kafka

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/apiversions"
	"github.com/segmentio/kafka-go/protocol/createtopics"
	"github.com/segmentio/kafka-go/protocol/endtxn"
	"github.com/segmentio/kafka-go/protocol/fetch"
	"github.com/segmentio/kafka-go/protocol/findcoordinator"
	"github.com/segmentio/kafka-go/protocol/heartbeat"
	"github.com/segmentio/kafka-go/protocol/initproducerid"
	"github.com/segmentio/kafka-go/protocol/metadata"
	"github.com/segmentio/kafka-go/protocol/produce"
	"github.com/segmentio/kafka-go/protocol/saslauthenticate"
	"github.com/segmentio/kafka-go/protocol/saslhandshake"
	"github.com/segmentio/kafka-go/sasl/plain"
)

// tpWaitFor polls cond until it holds, failing the test after a generous
// delay (a hang, not a slow machine).
func tpWaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func tpProduceRequest(partition int32, acks int16) *produce.Request {
	return &produce.Request{
		Acks:    acks,
		Timeout: 1000,
		Topics: []produce.RequestTopic{{
			Topic: "t",
			Partitions: []produce.RequestPartition{{
				Partition: partition,
				RecordSet: protocol.RecordSet{Records: NewRecordReader(Record{Value: NewBytes([]byte("x"))})},
			}},
		}},
	}
}

func tpProduceReply(r *fakebroker.Request, code int16) {
	req := r.Msg.(*produce.Request)
	r.Reply(&produce.Response{Topics: []produce.ResponseTopic{{
		Topic: req.Topics[0].Topic,
		Partitions: []produce.ResponsePartition{{
			Partition: req.Topics[0].Partitions[0].Partition, ErrorCode: code, BaseOffset: 42,
		}},
	}}})
}

func tpNewTransport(t *testing.T) *Transport {
	tr := &Transport{MetadataTTL: time.Hour, ClientID: "test"}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

func TestTransportNegotiatesHighestCommonVersion(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.Brokers[0].SetApiKey(protocol.Produce, 0, 5)
	fc.Brokers[0].SetApiKey(protocol.Metadata, 0, 7)
	fc.SetHandler(func(r *fakebroker.Request) { tpProduceReply(r, 0) })
	tr := tpNewTransport(t)

	m, err := tr.RoundTrip(testContext(t), fc.Addr(), tpProduceRequest(0, -1))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.(*produce.Response).Topics[0].Partitions[0].BaseOffset; got != 42 {
		t.Fatalf("base offset %d, want 42", got)
	}
	if v := fc.Requests(protocol.Produce)[0].Version; v != 5 {
		t.Fatalf("produce sent in v%d, want v5", v)
	}
	if v := fc.Requests(protocol.Metadata)[0].Version; v != 7 {
		t.Fatalf("metadata sent in v%d, want v7", v)
	}
	if v := fc.Requests(protocol.ApiVersions)[0].Version; v != protocol.ApiVersions.MaxVersion() {
		t.Fatalf("ApiVersions sent in v%d, want our highest v%d", v, protocol.ApiVersions.MaxVersion())
	}
}

func TestTransportApiVersionsFallback(t *testing.T) {
	fc := fakebroker.New(t, 1)
	b := fc.Brokers[0]
	b.SetApiKey(protocol.ApiVersions, 0, 2)
	// A broker that does not know the version asked answers in v0 with
	// UNSUPPORTED_VERSION and its own range for ApiVersions.
	b.Intercept = func(c *fakebroker.Conn, r *fakebroker.Request) bool {
		if r.Msg.ApiKey() != protocol.ApiVersions || r.Version <= 2 {
			return false
		}
		r.Version = 0
		r.Reply(&apiversions.Response{
			ErrorCode: int16(UnsupportedVersion),
			ApiKeys:   []apiversions.ApiKeyResponse{{ApiKey: int16(protocol.ApiVersions), MinVersion: 0, MaxVersion: 2}},
		})
		return true
	}
	fc.SetHandler(func(r *fakebroker.Request) { tpProduceReply(r, 0) })
	tr := tpNewTransport(t)

	if _, err := tr.RoundTrip(testContext(t), fc.Addr(), tpProduceRequest(0, -1)); err != nil {
		t.Fatal(err)
	}
	var versions []int16
	for _, s := range fc.Requests(protocol.ApiVersions) {
		if s.Conn == 1 {
			versions = append(versions, s.Version)
		}
	}
	if len(versions) != 2 || versions[0] != protocol.ApiVersions.MaxVersion() || versions[1] != 2 {
		t.Fatalf("ApiVersions versions sent on the first connection: %v, want [%d 2]", versions, protocol.ApiVersions.MaxVersion())
	}
}

func TestTransportNoCommonVersion(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.Brokers[0].SetApiKey(protocol.Produce, 0, 2) // below our floor of v3
	fc.SetHandler(func(r *fakebroker.Request) { tpProduceReply(r, 0) })
	tr := tpNewTransport(t)

	_, err := tr.RoundTrip(testContext(t), fc.Addr(), tpProduceRequest(0, -1))
	if !errors.Is(err, protocol.ErrNoVersionOverlap) {
		t.Fatalf("error %v does not wrap ErrNoVersionOverlap", err)
	}
	if !strings.Contains(err.Error(), "Produce") {
		t.Fatalf("error does not name the API: %v", err)
	}
	if n := fc.Count(protocol.Produce, 0); n != 0 {
		t.Fatalf("%d produce requests reached the broker", n)
	}
}

func tpCoordKey(r *findcoordinator.Request) string {
	return r.Key
}

func tpCoordinatorReply(r *fakebroker.Request, node int32, host string, code int16) {
	r.Reply(&findcoordinator.Response{NodeID: node, Host: host, Port: 1, ErrorCode: code})
}

func TestTransportPipelinesAndMatchesOutOfOrderResponses(t *testing.T) {
	const n = 8
	fc := fakebroker.New(t, 1)
	var mu sync.Mutex
	var held []*fakebroker.Request
	fc.SetHandler(func(r *fakebroker.Request) {
		if r.Msg.ApiKey() != protocol.FindCoordinator {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		held = append(held, r)
		if len(held) < n {
			return
		}
		// All requests are in flight on the connection: answer them last
		// first, each with its own key as host.
		for i := len(held) - 1; i >= 0; i-- {
			req := held[i]
			tpCoordinatorReply(req, 1, tpCoordKey(req.Msg.(*findcoordinator.Request)), 0)
		}
	})
	tr := tpNewTransport(t)
	ctx := testContext(t)
	// Warm up: metadata and the connection.
	if _, err := tr.RoundTrip(ctx, fc.Addr(), &apiversions.Request{}); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			key := fmt.Sprintf("group-%d", i)
			m, err := tr.RoundTrip(ctx, fc.Addr(), &findcoordinator.Request{Key: key})
			if err != nil {
				errs <- err
				return
			}
			c, _ := m.(*findcoordinator.Response).Coordinator(key)
			if c.Host != key {
				errs <- fmt.Errorf("request for %s got the response for %s", key, c.Host)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	conns := map[int]bool{}
	for _, s := range fc.Requests(protocol.FindCoordinator) {
		conns[s.Conn] = true
	}
	if len(conns) != 1 {
		t.Fatalf("requests were spread over %d connections, want 1", len(conns))
	}
	if c := fc.Brokers[0].NumConns(); c != 1 {
		t.Fatalf("the transport opened %d connections, want 1", c)
	}
}

func TestTransportCancelWhileWaitingForResponse(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.SetHandler(func(r *fakebroker.Request) {}) // never answers
	tr := tpNewTransport(t)
	ctx, cancel := context.WithCancel(testContext(t))
	done := make(chan error, 1)
	go func() {
		_, err := tr.RoundTrip(ctx, fc.Addr(), &findcoordinator.Request{Key: "g"})
		done <- err
	}()
	tpWaitFor(t, "the request to reach the broker", func() bool { return fc.Count(protocol.FindCoordinator, 0) == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	// The connection with a request that will never be answered is
	// retired, so it does not take new requests.
	tpWaitFor(t, "the connection to be closed", func() bool { return fc.Brokers[0].NumClosed() == 1 })
	fc.SetHandler(func(r *fakebroker.Request) { tpCoordinatorReply(r, 1, "h", 0) })
	if _, err := tr.RoundTrip(testContext(t), fc.Addr(), &findcoordinator.Request{Key: "g"}); err != nil {
		t.Fatal(err)
	}
}

func TestTransportCancelWhileWaitingForMetadata(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.MetaHold = make(chan struct{})
	defer close(fc.MetaHold)
	tr := tpNewTransport(t)
	ctx, cancel := context.WithCancel(testContext(t))
	done := make(chan error, 1)
	go func() {
		_, err := tr.RoundTrip(ctx, fc.Addr(), tpProduceRequest(0, -1))
		done <- err
	}()
	tpWaitFor(t, "the metadata request", func() bool { return fc.Count(protocol.Metadata, 0) == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestTransportContextEndUnblocksRequests(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.SetHandler(func(r *fakebroker.Request) {}) // never answers
	tctx, stop := context.WithCancel(context.Background())
	tr := &Transport{Context: tctx}
	done := make(chan error, 1)
	go func() {
		_, err := tr.RoundTrip(context.Background(), fc.Addr(), &findcoordinator.Request{Key: "g"})
		done <- err
	}()
	tpWaitFor(t, "the request to reach the broker", func() bool { return fc.Count(protocol.FindCoordinator, 0) == 1 })
	stop()
	if err := <-done; err == nil {
		t.Fatal("request succeeded after the transport's context ended")
	}
	tpWaitFor(t, "the connection to be closed", func() bool { return fc.Brokers[0].NumClosed() == 1 })
	if _, err := tr.RoundTrip(context.Background(), fc.Addr(), &findcoordinator.Request{Key: "g"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("request on a stopped transport: %v", err)
	}
}

func TestTransportConcurrentRefreshesCollapse(t *testing.T) {
	const n = 20
	fc := fakebroker.New(t, 1)
	hold := make(chan struct{})
	fc.MetaHold = hold
	fc.SetHandler(func(r *fakebroker.Request) { tpProduceReply(r, 0) })
	tr := tpNewTransport(t)
	ctx := testContext(t)

	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := tr.RoundTrip(ctx, fc.Addr(), tpProduceRequest(0, -1)); err != nil {
				errs <- err
			}
		}()
	}
	tpWaitFor(t, "the metadata request", func() bool { return fc.Count(protocol.Metadata, 0) >= 1 })
	time.Sleep(20 * time.Millisecond) // let the other requests queue up
	close(hold)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if m := fc.Count(protocol.Metadata, 0); m != 1 {
		t.Fatalf("%d metadata requests for %d concurrent requests, want 1", m, n)
	}
	if p := fc.Count(protocol.Produce, 1); p != n {
		t.Fatalf("broker received %d produce requests, want %d", p, n)
	}
}

func TestTransportNotLeaderRefreshesMetadata(t *testing.T) {
	fc := fakebroker.New(t, 2)
	fc.SetHandler(func(r *fakebroker.Request) {
		if r.Msg.ApiKey() != protocol.Produce {
			return
		}
		if r.Broker == 1 {
			// Leadership moved to broker 2.
			fc.SetLeader(0, 2)
			tpProduceReply(r, int16(NotLeaderForPartition))
			return
		}
		tpProduceReply(r, 0)
	})
	tr := tpNewTransport(t)
	client := &Client{Addr: fc.Addr(), Transport: tr}
	ctx := testContext(t)
	records := func() RecordReader { return NewRecordReader(Record{Value: NewBytes([]byte("v"))}) }

	res, err := client.Produce(ctx, &ProduceRequest{Topic: "t", Partition: 0, RequiredAcks: RequireAll, Records: records()})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res.Error, NotLeaderForPartition) {
		t.Fatalf("first produce: error %v, want NotLeaderForPartition", res.Error)
	}
	res, err = client.Produce(ctx, &ProduceRequest{Topic: "t", Partition: 0, RequiredAcks: RequireAll, Records: records()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Error != nil || res.BaseOffset != 42 {
		t.Fatalf("second produce: %+v", res)
	}
	if n := fc.Count(protocol.Produce, 2); n != 1 {
		t.Fatalf("the new leader received %d produce requests, want 1", n)
	}
	if n := fc.Count(protocol.Metadata, 0); n != 2 {
		t.Fatalf("%d metadata requests, want 2 (bootstrap and after NOT_LEADER)", n)
	}
}

func TestTransportDisconnectRefreshesMetadata(t *testing.T) {
	fc := fakebroker.New(t, 2)
	fc.SetHandler(func(r *fakebroker.Request) {
		if r.Msg.ApiKey() != protocol.Produce {
			return
		}
		if r.Broker == 1 {
			fc.SetLeader(0, 2)
			r.CloseConn()
			return
		}
		tpProduceReply(r, 0)
	})
	tr := tpNewTransport(t)
	ctx := testContext(t)
	if _, err := tr.RoundTrip(ctx, fc.Addr(), tpProduceRequest(0, -1)); err == nil {
		t.Fatal("produce on a connection closed by the broker succeeded")
	} else if err != io.ErrUnexpectedEOF {
		// Upstream returns io.ErrUnexpectedEOF itself, and the Writer
		// retries only on that.
		t.Fatalf("disconnect reported as %v, want io.ErrUnexpectedEOF", err)
	}
	if _, err := tr.RoundTrip(ctx, fc.Addr(), tpProduceRequest(0, -1)); err != nil {
		t.Fatal(err)
	}
	if n := fc.Count(protocol.Produce, 2); n != 1 {
		t.Fatalf("the new leader received %d produce requests, want 1", n)
	}
}

func TestTransportAcksNone(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.SetHandler(func(r *fakebroker.Request) {}) // a broker sends nothing back for acks=0
	tr := tpNewTransport(t)
	m, err := tr.RoundTrip(testContext(t), fc.Addr(), tpProduceRequest(0, 0))
	if err != nil || m != nil {
		t.Fatalf("acks=0 produce: %v, %v; want nil, nil", m, err)
	}
	tpWaitFor(t, "the produce request", func() bool { return fc.Count(protocol.Produce, 1) == 1 })
}

func TestTransportIdleConnectionsAreClosed(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.SetHandler(func(r *fakebroker.Request) { tpProduceReply(r, 0) })
	tr := &Transport{IdleTimeout: 20 * time.Millisecond, MetadataTTL: time.Hour}
	if _, err := tr.RoundTrip(testContext(t), fc.Addr(), tpProduceRequest(0, -1)); err != nil {
		t.Fatal(err)
	}
	b := fc.Brokers[0]
	tpWaitFor(t, "idle connections to be closed", func() bool { return b.NumConns() > 0 && b.NumClosed() == b.NumConns() })
}

func TestTransportCloseIdleConnections(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.SetHandler(func(r *fakebroker.Request) { tpProduceReply(r, 0) })
	tr := &Transport{MetadataTTL: time.Hour}
	ctx := testContext(t)
	if _, err := tr.RoundTrip(ctx, fc.Addr(), tpProduceRequest(0, -1)); err != nil {
		t.Fatal(err)
	}
	b := fc.Brokers[0]
	if b.NumClosed() != 0 {
		t.Fatal("connections closed before CloseIdleConnections")
	}
	tr.CloseIdleConnections()
	tpWaitFor(t, "connections to be closed", func() bool { return b.NumClosed() == b.NumConns() })
	// The transport still works, with new connections.
	if _, err := tr.RoundTrip(ctx, fc.Addr(), tpProduceRequest(0, -1)); err != nil {
		t.Fatal(err)
	}
}

func TestTransportCachesGroupCoordinator(t *testing.T) {
	fc := fakebroker.New(t, 2)
	var mu sync.Mutex
	notCoordinator := false
	fc.SetHandler(func(r *fakebroker.Request) {
		switch r.Msg.ApiKey() {
		case protocol.FindCoordinator:
			tpCoordinatorReply(r, 2, fc.Brokers[1].Host, 0)
		case protocol.Heartbeat:
			mu.Lock()
			code := int16(0)
			if notCoordinator {
				code = int16(NotCoordinatorForGroup)
				notCoordinator = false
			}
			mu.Unlock()
			r.Reply(&heartbeat.Response{ErrorCode: code})
		}
	})
	tr := tpNewTransport(t)
	ctx := testContext(t)
	hb := func() int16 {
		m, err := tr.RoundTrip(ctx, fc.Addr(), &heartbeat.Request{GroupID: "g", MemberID: "m"})
		if err != nil {
			t.Fatal(err)
		}
		return m.(*heartbeat.Response).ErrorCode
	}
	hb()
	hb()
	if n := fc.Count(protocol.FindCoordinator, 0); n != 1 {
		t.Fatalf("%d FindCoordinator requests for two heartbeats, want 1", n)
	}
	if n := fc.Count(protocol.Heartbeat, 2); n != 2 {
		t.Fatalf("the coordinator received %d heartbeats, want 2", n)
	}
	mu.Lock()
	notCoordinator = true
	mu.Unlock()
	if code := hb(); code != int16(NotCoordinatorForGroup) {
		t.Fatalf("heartbeat error %d, want NOT_COORDINATOR", code)
	}
	hb()
	if n := fc.Count(protocol.FindCoordinator, 0); n != 2 {
		t.Fatalf("%d FindCoordinator requests, want 2 (the coordinator moved)", n)
	}
}

// tpPlainV0Auth makes a broker speak SaslHandshake v0 only, followed by a
// raw PLAIN token, as brokers before Kafka 1.0 do.
func tpPlainV0Auth(b *fakebroker.Broker, user, pass string) {
	b.SetApiKey(protocol.SaslHandshake, 0, 0)
	b.Mu.Lock()
	var keys []apiversions.ApiKeyResponse
	for _, k := range b.ApiKeys {
		if k.ApiKey != int16(protocol.SaslAuthenticate) {
			keys = append(keys, k)
		}
	}
	b.ApiKeys = keys
	b.Mu.Unlock()
	b.Intercept = func(c *fakebroker.Conn, r *fakebroker.Request) bool {
		if r.Msg.ApiKey() != protocol.SaslHandshake {
			return false
		}
		r.Reply(&saslhandshake.Response{Mechanisms: []string{"PLAIN"}})
		var size [4]byte
		if _, err := io.ReadFull(c.NC, size[:]); err != nil {
			return true
		}
		token := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(c.NC, token); err != nil {
			return true
		}
		if string(token) != "\x00"+user+"\x00"+pass {
			c.NC.Close()
			return true
		}
		c.NC.Write([]byte{0, 0, 0, 0})
		return true
	}
}

func TestTransportSASLHandshakeV0(t *testing.T) {
	fc := fakebroker.New(t, 1)
	tpPlainV0Auth(fc.Brokers[0], "u", "p")
	fc.SetHandler(func(r *fakebroker.Request) { tpProduceReply(r, 0) })

	tr := &Transport{SASL: plain.Mechanism{Username: "u", Password: "p"}, MetadataTTL: time.Hour}
	defer tr.CloseIdleConnections()
	if _, err := tr.RoundTrip(testContext(t), fc.Addr(), tpProduceRequest(0, -1)); err != nil {
		t.Fatal(err)
	}
	if n := fc.Count(protocol.SaslAuthenticate, 0); n != 0 {
		t.Fatalf("%d framed SaslAuthenticate requests sent to a v0 broker", n)
	}

	bad := &Transport{SASL: plain.Mechanism{Username: "u", Password: "wrong"}, MetadataTTL: time.Hour}
	defer bad.CloseIdleConnections()
	_, err := bad.RoundTrip(testContext(t), fc.Addr(), tpProduceRequest(0, -1))
	if !errors.Is(err, SASLAuthenticationFailed) {
		t.Fatalf("wrong password: %v, want SASLAuthenticationFailed", err)
	}
}

func TestTransportSASLAuthenticateError(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.Brokers[0].Intercept = func(c *fakebroker.Conn, r *fakebroker.Request) bool {
		switch r.Msg.ApiKey() {
		case protocol.SaslHandshake:
			r.Reply(&saslhandshake.Response{Mechanisms: []string{"PLAIN"}})
			return true
		case protocol.SaslAuthenticate:
			r.Reply(&saslauthenticate.Response{ErrorCode: int16(SASLAuthenticationFailed), ErrorMessage: "bad password for u"})
			return true
		}
		return false
	}
	tr := &Transport{SASL: plain.Mechanism{Username: "u", Password: "p"}}
	defer tr.CloseIdleConnections()
	_, err := tr.RoundTrip(testContext(t), fc.Addr(), tpProduceRequest(0, -1))
	if !errors.Is(err, SASLAuthenticationFailed) || !strings.Contains(err.Error(), "bad password for u") {
		t.Fatalf("got %v, want SASLAuthenticationFailed with the broker's message", err)
	}
	if n := fc.Count(protocol.Metadata, 0); n != 0 {
		t.Fatalf("%d metadata requests sent on an unauthenticated connection", n)
	}
}

func TestTransportFallsBackToKnownBrokers(t *testing.T) {
	fc := fakebroker.New(t, 2)
	fc.SetHandler(func(r *fakebroker.Request) {
		if r.Msg.ApiKey() == protocol.FindCoordinator {
			tpCoordinatorReply(r, r.Broker, "h", 0)
		}
	})
	tr := tpNewTransport(t)
	ctx := testContext(t)
	if _, err := tr.RoundTrip(ctx, fc.Addr(), &findcoordinator.Request{Key: "a"}); err != nil {
		t.Fatal(err)
	}
	// The bootstrap broker goes away; the other one can answer.
	fc.Brokers[0].Stop()
	tpWaitFor(t, "the connection to drop", func() bool { return fc.Brokers[0].NumClosed() == fc.Brokers[0].NumConns() })
	var err error
	for i := 0; i < 3; i++ {
		// A request already queued on the dying connection may fail;
		// the next ones must reach broker 2.
		if _, err = tr.RoundTrip(ctx, fc.Addr(), &findcoordinator.Request{Key: "b"}); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if n := fc.Count(protocol.FindCoordinator, 2); n != 1 {
		t.Fatalf("broker 2 received %d requests, want 1", n)
	}
}

func TestTransportReleasesGoroutines(t *testing.T) {
	fc := fakebroker.New(t, 2)
	fc.SetLeader(1, 2)
	fc.SetHandler(func(r *fakebroker.Request) { tpProduceReply(r, 0) })
	before := runtime.NumGoroutine()

	tr := &Transport{MetadataTTL: time.Hour}
	ctx := testContext(t)
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if _, err := tr.RoundTrip(ctx, fc.Addr(), tpProduceRequest(int32(i%2), -1)); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	if fc.Brokers[1].NumConns() == 0 {
		t.Fatal("no connection to broker 2")
	}
	tr.CloseIdleConnections()
	// Connection readers (ours) and connection handlers (the fake
	// broker's) all end once the connections are closed.
	tpWaitFor(t, "goroutines to exit", func() bool { return runtime.NumGoroutine() <= before })
}

func TestTransportRefreshesExpiredMetadata(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.SetHandler(func(r *fakebroker.Request) { tpProduceReply(r, 0) })
	tr := &Transport{MetadataTTL: 5 * time.Millisecond}
	defer tr.CloseIdleConnections()
	ctx := testContext(t)
	tpWaitFor(t, "a second metadata request", func() bool {
		if _, err := tr.RoundTrip(ctx, fc.Addr(), tpProduceRequest(0, -1)); err != nil {
			t.Fatal(err)
		}
		return fc.Count(protocol.Metadata, 0) >= 2
	})

	// With a long TTL, requests keep using the cache.
	fc2 := fakebroker.New(t, 1)
	fc2.SetHandler(func(r *fakebroker.Request) { tpProduceReply(r, 0) })
	tr2 := tpNewTransport(t)
	for i := 0; i < 5; i++ {
		if _, err := tr2.RoundTrip(ctx, fc2.Addr(), tpProduceRequest(0, -1)); err != nil {
			t.Fatal(err)
		}
	}
	if n := fc2.Count(protocol.Metadata, 0); n != 1 {
		t.Fatalf("%d metadata requests within the TTL, want 1", n)
	}
}

func TestTransportMetadataFromCache(t *testing.T) {
	fc := fakebroker.New(t, 2)
	client := &Client{Addr: fc.Addr(), Transport: tpNewTransport(t)}
	ctx := testContext(t)
	res, err := client.Metadata(ctx, &MetadataRequest{Topics: []string{"t", "missing"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Brokers) != 2 || res.ClusterID != "fake" || res.Controller.ID != 1 {
		t.Fatalf("brokers %+v, cluster %q, controller %+v", res.Brokers, res.ClusterID, res.Controller)
	}
	if len(res.Topics) != 2 || res.Topics[0].Name != "t" || res.Topics[1].Name != "missing" {
		t.Fatalf("topics %+v", res.Topics)
	}
	if p := res.Topics[0].Partitions; len(p) != 1 || p[0].Leader.ID != 1 || p[0].Leader.Port == 0 {
		t.Fatalf("partitions %+v", p)
	}
	if !errors.Is(res.Topics[1].Error, UnknownTopicOrPartition) {
		t.Fatalf("missing topic error %v", res.Topics[1].Error)
	}
	before := fc.Count(protocol.Metadata, 0)
	if _, err := client.Metadata(ctx, &MetadataRequest{Topics: []string{"t"}}); err != nil {
		t.Fatal(err)
	}
	if fc.Count(protocol.Metadata, 0) != before {
		t.Fatal("a metadata request for a cached topic reached the broker")
	}
}

// setupConn is the one connection setup: run on a connection dialed by
// hand, it negotiates versions and authenticates (raw v0 SASL here), and
// leaves nothing buffered, so the connection is usable at once.
func TestSetupConn(t *testing.T) {
	fc := fakebroker.New(t, 1)
	tpPlainV0Auth(fc.Brokers[0], "u", "p")
	fc.Brokers[0].SetApiKey(protocol.Fetch, 0, 8)
	fc.SetHandler(func(r *fakebroker.Request) { tpProduceReply(r, 0) })
	addr := fc.Brokers[0].Ln.Addr().String()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	cfg := &dialConfig{clientID: "conn-test", sasl: plain.Mechanism{Username: "u", Password: "p"}}
	s, err := setupConn(testContext(t), cfg, nc, addr)
	if err != nil {
		t.Fatal(err)
	}
	if s.versions[protocol.Fetch] != 8 || s.ranges[protocol.Fetch] != [2]int16{0, 8} {
		t.Fatalf("fetch version %d, range %v", s.versions[protocol.Fetch], s.ranges[protocol.Fetch])
	}
	if s.versions[protocol.Produce] != protocol.Produce.MaxVersion() {
		t.Fatalf("produce version %d", s.versions[protocol.Produce])
	}
	if s.br.Buffered() != 0 {
		t.Fatalf("%d bytes left buffered after the setup", s.br.Buffered())
	}
	res, err := protocol.RoundTrip(nc, s.versions[protocol.Produce], 100, "conn-test", tpProduceRequest(0, -1))
	if err != nil {
		t.Fatal(err)
	}
	if res.(*produce.Response).Topics[0].Partitions[0].BaseOffset != 42 {
		t.Fatalf("unexpected response %+v", res)
	}
}

// A Dialer sets its connections up as the Transport does: the same
// negotiated versions (the broker caps Fetch at v8) and the same SASL
// exchange (raw tokens after a v0 handshake), and the Conn it returns is
// usable at once.
func TestDialerSetsUpAsTheTransport(t *testing.T) {
	fc := fakebroker.New(t, 1)
	tpPlainV0Auth(fc.Brokers[0], "u", "p")
	fc.Brokers[0].SetApiKey(protocol.Fetch, 0, 8)
	fc.SetHandler(func(r *fakebroker.Request) { tpProduceReply(r, 0) })
	d := &Dialer{ClientID: "conn-test", SASLMechanism: plain.Mechanism{Username: "u", Password: "p"}}
	c, err := d.DialContext(testContext(t), "tcp", fc.Brokers[0].Ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if v, err := c.negotiateVersion(protocol.Fetch); err != nil || v != 8 {
		t.Fatalf("Conn's fetch version %d (%v), want 8", v, err)
	}
	msg, err := c.request(tpProduceRequest(0, -1))
	if err != nil {
		t.Fatal(err)
	}
	if msg.(*produce.Response).Topics[0].Partitions[0].BaseOffset != 42 {
		t.Fatalf("unexpected response %+v", msg)
	}

	bad := &Dialer{SASLMechanism: plain.Mechanism{Username: "u", Password: "wrong"}}
	if _, err := bad.DialContext(testContext(t), "tcp", fc.Brokers[0].Ln.Addr().String()); !errors.Is(err, SASLAuthenticationFailed) {
		t.Fatalf("wrong password: %v, want SASLAuthenticationFailed", err)
	}
}

func TestTransportLongPollsGetTheirOwnConnections(t *testing.T) {
	const n = 4
	fc := fakebroker.New(t, 1)
	fc.SetHandler(func(r *fakebroker.Request) {
		if r.Msg.ApiKey() == protocol.Produce {
			tpProduceReply(r, 0)
		}
		// Fetch requests are held until the client gives up.
	})
	tr := tpNewTransport(t)
	ctx, cancel := context.WithCancel(testContext(t))
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := tr.RoundTrip(ctx, fc.Addr(), &fetch.Request{
				ReplicaID: -1, MaxWaitTime: 60000, MinBytes: 1, MaxBytes: 1 << 20,
				Topics: []fetch.RequestTopic{{Topic: "t", Partitions: []fetch.RequestPartition{{Partition: 0, PartitionMaxBytes: 1 << 20}}}},
			})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("held fetch: %v", err)
			}
		}()
	}
	tpWaitFor(t, "the fetch requests", func() bool { return fc.Count(protocol.Fetch, 1) == n })
	// Other requests to the same broker are not stuck behind the fetches.
	if _, err := tr.RoundTrip(testContext(t), fc.Addr(), tpProduceRequest(0, -1)); err != nil {
		t.Fatal(err)
	}
	conns := map[int]bool{}
	for _, s := range fc.Requests(protocol.Fetch) {
		conns[s.Conn] = true
	}
	produces := fc.Requests(protocol.Produce)
	if len(conns) != n || conns[produces[len(produces)-1].Conn] {
		t.Fatalf("fetches on connections %v, produce on %d: each fetch needs its own connection", conns, produces[len(produces)-1].Conn)
	}
	cancel()
	wg.Wait()
}

// Produce requests to one broker go out side by side, each on a connection
// of its own: a broker works on one request per connection at a time, so
// pipelined produces of different partitions would wait for each other.
func TestTransportProducesGetTheirOwnConnections(t *testing.T) {
	const n = 4
	fc := fakebroker.New(t, 1)
	var mu sync.Mutex
	var held []*fakebroker.Request
	fc.SetHandler(func(r *fakebroker.Request) {
		if r.Msg.ApiKey() != protocol.Produce {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		// Answer once all n are in flight at the same time.
		if held = append(held, r); len(held) == n {
			for _, h := range held {
				tpProduceReply(h, 0)
			}
		}
	})
	tr := tpNewTransport(t)
	ctx := testContext(t)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := tr.RoundTrip(ctx, fc.Addr(), tpProduceRequest(0, -1)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	conns := map[int]bool{}
	for _, s := range fc.Requests(protocol.Produce) {
		conns[s.Conn] = true
	}
	if len(conns) != n {
		t.Fatalf("%d produce requests in flight together used %d connections, want %d", n, len(conns), n)
	}
	// Once answered, the connections are reused rather than dialled again.
	before := fc.Brokers[0].NumConns()
	mu.Lock()
	held = nil
	mu.Unlock()
	fc.SetHandler(func(r *fakebroker.Request) {
		if r.Msg.ApiKey() == protocol.Produce {
			tpProduceReply(r, 0)
		}
	})
	for i := 0; i < 3; i++ {
		if _, err := tr.RoundTrip(ctx, fc.Addr(), tpProduceRequest(0, -1)); err != nil {
			t.Fatal(err)
		}
	}
	if after := fc.Brokers[0].NumConns(); after != before {
		t.Fatalf("sequential produces opened connections: %d before, %d after", before, after)
	}
}

func TestTransportAutoCreateAndCreateTopicsRefresh(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.SetHandler(func(r *fakebroker.Request) {
		switch m := r.Msg.(type) {
		case *produce.Request:
			tpProduceReply(r, 0)
		case *createtopics.Request:
			res := &createtopics.Response{}
			for _, topic := range m.Topics {
				fc.AddTopics(topic.Name)
				res.Topics = append(res.Topics, createtopics.ResponseTopic{Name: topic.Name})
			}
			r.Reply(res)
		}
	})
	tr := tpNewTransport(t)
	ctx := testContext(t)
	produceTo := func(topic string) {
		t.Helper()
		req := tpProduceRequest(0, -1)
		req.Topics[0].Topic = topic
		if _, err := tr.RoundTrip(ctx, fc.Addr(), req); err != nil {
			t.Fatalf("produce to %s: %v", topic, err)
		}
	}
	produceTo("t")

	// A cached answer cannot create topics: the request goes to a broker.
	m, err := tr.RoundTrip(ctx, fc.Addr(), &metadata.Request{TopicNames: []string{"auto"}, AllowAutoTopicCreation: true})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, topic := range m.(*metadata.Response).Topics {
		found = found || (topic.Name == "auto" && topic.ErrorCode == 0)
	}
	if !found {
		t.Fatalf("no auto-created topic in %+v", m.(*metadata.Response).Topics)
	}
	n := fc.Count(protocol.Metadata, 0)
	produceTo("auto")
	if fc.Count(protocol.Metadata, 0) != n {
		t.Fatal("the cache did not learn the auto-created topic")
	}

	client := &Client{Addr: fc.Addr(), Transport: tr}
	res, err := client.CreateTopics(ctx, &CreateTopicsRequest{Topics: []TopicConfig{{Topic: "created", NumPartitions: 1, ReplicationFactor: 1}}})
	if err != nil || res.Errors["created"] != nil {
		t.Fatalf("CreateTopics: %v, %+v", err, res)
	}
	n = fc.Count(protocol.Metadata, 0)
	produceTo("created")
	if fc.Count(protocol.Metadata, 0) != n {
		t.Fatal("the cache did not learn the created topic")
	}
}

// tpSelfSignedTLS returns a server configuration with a certificate for
// 127.0.0.1 and a client configuration trusting it.
func tpSelfSignedTLS(t *testing.T) (server, client *tls.Config) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "fake kafka"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	server = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	client = &tls.Config{RootCAs: pool}
	return server, client
}

func TestTransportTLS(t *testing.T) {
	serverConf, clientConf := tpSelfSignedTLS(t)
	fc := fakebroker.NewTLS(t, 2, serverConf)
	fc.SetLeader(1, 2)
	fc.SetHandler(func(r *fakebroker.Request) { tpProduceReply(r, 0) })
	tr := &Transport{TLS: clientConf, MetadataTTL: time.Hour}
	defer tr.CloseIdleConnections()
	ctx := testContext(t)
	for p := int32(0); p < 2; p++ {
		if _, err := tr.RoundTrip(ctx, fc.Addr(), tpProduceRequest(p, -1)); err != nil {
			t.Fatalf("produce over TLS to partition %d: %v", p, err)
		}
	}
	if fc.Count(protocol.Produce, 1) != 1 || fc.Count(protocol.Produce, 2) != 1 {
		t.Fatal("each broker should have received one produce request over TLS")
	}

	// A client without TLS gets an error, not a hang.
	plainTr := &Transport{DialTimeout: 5 * time.Second}
	defer plainTr.CloseIdleConnections()
	if _, err := plainTr.RoundTrip(ctx, fc.Addr(), tpProduceRequest(0, -1)); err == nil {
		t.Fatal("a plaintext client talked to a TLS broker")
	}
	// Nor does a client that does not trust the certificate.
	untrusting := &Transport{TLS: &tls.Config{}}
	defer untrusting.CloseIdleConnections()
	if _, err := untrusting.RoundTrip(ctx, fc.Addr(), tpProduceRequest(0, -1)); err == nil {
		t.Fatal("an unknown certificate was accepted")
	}
}

type tpMapResolver struct {
	mu     sync.Mutex
	ips    map[string]string
	lookup []string
}

func (r *tpMapResolver) LookupBrokerIPAddr(ctx context.Context, b Broker) ([]net.IPAddr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lookup = append(r.lookup, b.Host)
	ip, ok := r.ips[b.Host]
	if !ok {
		return nil, fmt.Errorf("no such host %q", b.Host)
	}
	return []net.IPAddr{{IP: net.ParseIP(ip)}}, nil
}

func TestTransportResolver(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.SetHandler(func(r *fakebroker.Request) { tpProduceReply(r, 0) })
	rslv := &tpMapResolver{ips: map[string]string{"kafka.invalid": "127.0.0.1", "127.0.0.1": "127.0.0.1"}}
	var dialed []string
	var mu sync.Mutex
	tr := &Transport{
		Resolver:    rslv,
		MetadataTTL: time.Hour,
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			mu.Lock()
			dialed = append(dialed, address)
			mu.Unlock()
			return (&net.Dialer{}).DialContext(ctx, network, address)
		},
	}
	defer tr.CloseIdleConnections()
	_, port, _ := net.SplitHostPort(fc.Brokers[0].Ln.Addr().String())
	if _, err := tr.RoundTrip(testContext(t), TCP("kafka.invalid:"+port), tpProduceRequest(0, -1)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, a := range dialed {
		if !strings.HasPrefix(a, "127.0.0.1:") {
			t.Fatalf("Dial was given the unresolved address %q", a)
		}
	}
	rslv.mu.Lock()
	defer rslv.mu.Unlock()
	if len(rslv.lookup) == 0 || rslv.lookup[0] != "kafka.invalid" {
		t.Fatalf("resolver lookups: %v", rslv.lookup)
	}
}

func TestTransportMetadataTopics(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.SetHandler(func(r *fakebroker.Request) { tpProduceReply(r, 0) })
	tr := &Transport{MetadataTopics: []string{"t"}, MetadataTTL: time.Hour}
	defer tr.CloseIdleConnections()
	if _, err := tr.RoundTrip(testContext(t), fc.Addr(), tpProduceRequest(0, -1)); err != nil {
		t.Fatal(err)
	}
	fc.Mu.Lock()
	req := fc.MetaReqs[0]
	fc.Mu.Unlock()
	names := req.TopicNames
	for _, topic := range req.Topics {
		names = append(names, topic.Name)
	}
	if len(names) != 1 || names[0] != "t" {
		t.Fatalf("metadata asked for %v, want only t", names)
	}

	// Without MetadataTopics, a request for all topics reaches a broker as
	// one (a null list); the cache asks for the topics in use, none yet.
	fc2 := fakebroker.New(t, 1)
	tr2 := tpNewTransport(t)
	if _, err := (&Client{Addr: fc2.Addr(), Transport: tr2}).Metadata(testContext(t), &MetadataRequest{}); err != nil {
		t.Fatal(err)
	}
	fc2.Mu.Lock()
	reqs := append([]*metadata.Request(nil), fc2.MetaReqs...)
	fc2.Mu.Unlock()
	last := reqs[len(reqs)-1]
	if last.TopicNames != nil || last.Topics != nil {
		t.Fatalf("metadata asked for %v / %v, want all topics", last.TopicNames, last.Topics)
	}
	for _, req := range reqs[:len(reqs)-1] {
		if names, ok := metaNames(req); !ok || len(names) != 0 {
			t.Fatalf("the cache's refresh asked for %v (all: %v), want no topic", names, !ok)
		}
	}
}

func TestTransportTransactionCoordinator(t *testing.T) {
	fc := fakebroker.New(t, 2)
	fc.SetHandler(func(r *fakebroker.Request) {
		switch m := r.Msg.(type) {
		case *findcoordinator.Request:
			if m.KeyType != int8(CoordinatorKeyTypeTransaction) {
				t.Errorf("coordinator key type %d, want transaction", m.KeyType)
			}
			tpCoordinatorReply(r, 2, fc.Brokers[1].Host, 0)
		case *endtxn.Request:
			r.Reply(&endtxn.Response{})
		case *initproducerid.Request:
			r.Reply(&initproducerid.Response{ProducerID: int64(r.Broker)})
		}
	})
	tr := tpNewTransport(t)
	ctx := testContext(t)
	if _, err := tr.RoundTrip(ctx, fc.Addr(), &endtxn.Request{TransactionalID: "tx", ProducerID: 1, Committed: true}); err != nil {
		t.Fatal(err)
	}
	if fc.Count(protocol.EndTxn, 2) != 1 {
		t.Fatal("EndTxn was not sent to the transaction coordinator")
	}
	// An idempotent producer has no transactional ID: any broker answers.
	if _, err := tr.RoundTrip(ctx, fc.Addr(), &initproducerid.Request{TransactionTimeoutMs: 1000}); err != nil {
		t.Fatal(err)
	}
	if n := fc.Count(protocol.FindCoordinator, 0); n != 1 {
		t.Fatalf("%d FindCoordinator requests, want 1 (none for an empty transactional ID)", n)
	}
}

func TestTransportSASLSessionLifetime(t *testing.T) {
	fc := fakebroker.New(t, 1)
	b := fc.Brokers[0]
	b.Intercept = func(c *fakebroker.Conn, r *fakebroker.Request) bool {
		switch r.Msg.ApiKey() {
		case protocol.SaslHandshake:
			r.Reply(&saslhandshake.Response{Mechanisms: []string{"PLAIN"}})
			return true
		case protocol.SaslAuthenticate:
			r.Reply(&saslauthenticate.Response{SessionLifetimeMs: 40})
			return true
		}
		return false
	}
	fc.SetHandler(func(r *fakebroker.Request) { tpProduceReply(r, 0) })
	tr := &Transport{SASL: plain.Mechanism{Username: "u", Password: "p"}, MetadataTTL: time.Hour}
	defer tr.CloseIdleConnections()
	ctx := testContext(t)
	if _, err := tr.RoundTrip(ctx, fc.Addr(), tpProduceRequest(0, -1)); err != nil {
		t.Fatal(err)
	}
	opened := b.NumConns()
	time.Sleep(100 * time.Millisecond) // past the session's end
	if _, err := tr.RoundTrip(ctx, fc.Addr(), tpProduceRequest(0, -1)); err != nil {
		t.Fatal(err)
	}
	if b.NumConns() == opened {
		t.Fatal("a connection was used after its SASL session ended")
	}
	// The expired connection of the broker pool was closed when passed over.
	tpWaitFor(t, "the expired connection to be closed", func() bool { return b.NumClosed() >= 1 })
}

// The broker counts a session from the end of authentication: a slow
// handshake before it (a mechanism fetching a token, say) does not shorten
// it. A connection whose session is over as soon as it is set up is dialed
// again a few times, then the call fails with a temporary error, rather
// than connections dialed and retired one after another until ctx ends;
// a later login with a longer session is used.
func TestTransportSASLSessionCountedFromAuthenticate(t *testing.T) {
	for _, c := range []struct {
		name                   string
		handshakeDelay, lifeMs int64
		authDelay              time.Duration
		wantErr                bool
		longAfter              int64 // logins after which sessions last an hour
	}{
		{name: "slow handshake", handshakeDelay: 500, lifeMs: 400},
		{name: "session over at once", authDelay: 100 * time.Millisecond, lifeMs: 50, wantErr: true},
		{name: "first session over at once", authDelay: 100 * time.Millisecond, lifeMs: 50, longAfter: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			fc := fakebroker.New(t, 1)
			b := fc.Brokers[0]
			var logins atomic.Int64
			b.Intercept = func(_ *fakebroker.Conn, r *fakebroker.Request) bool {
				switch r.Msg.ApiKey() {
				case protocol.SaslHandshake:
					time.Sleep(time.Duration(c.handshakeDelay) * time.Millisecond)
					r.Reply(&saslhandshake.Response{Mechanisms: []string{"PLAIN"}})
					return true
				case protocol.SaslAuthenticate:
					if c.longAfter > 0 && logins.Add(1) > c.longAfter {
						r.Reply(&saslauthenticate.Response{SessionLifetimeMs: time.Hour.Milliseconds()})
						return true
					}
					time.Sleep(c.authDelay)
					r.Reply(&saslauthenticate.Response{SessionLifetimeMs: c.lifeMs})
					return true
				}
				return false
			}
			fc.SetHandler(func(r *fakebroker.Request) { tpProduceReply(r, 0) })
			tr := &Transport{SASL: plain.Mechanism{Username: "u", Password: "p"}, MetadataTTL: time.Hour}
			defer tr.CloseIdleConnections()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err := tr.RoundTrip(ctx, fc.Addr(), tpProduceRequest(0, -1))
			switch {
			case c.wantErr && (err == nil || !isTemporary(err)):
				t.Fatalf("RoundTrip: %v, want a temporary error (sessions too short)", err)
			case !c.wantErr && err != nil:
				t.Fatal(err)
			}
			if ctx.Err() != nil {
				t.Fatal("RoundTrip waited for its context")
			}
			if n := b.NumConns(); n > sessionDials+1 {
				t.Fatalf("%d connections opened", n)
			}
		})
	}
}

func TestTransportUndecodableResponseFailsOnlyItsRequest(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.SetHandler(func(r *fakebroker.Request) {
		m, ok := r.Msg.(*findcoordinator.Request)
		if !ok {
			return
		}
		if tpCoordKey(m) != "garbage" {
			tpCoordinatorReply(r, 1, "h", 0)
			return
		}
		// A frame with the right correlation ID but a body too short
		// for a FindCoordinator response.
		frame := make([]byte, 4+4+3)
		binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
		binary.BigEndian.PutUint32(frame[4:], uint32(r.ID))
		r.Conn.WMu.Lock()
		r.Conn.NC.Write(frame)
		r.Conn.WMu.Unlock()
	})
	tr := tpNewTransport(t)
	ctx := testContext(t)
	if _, err := tr.RoundTrip(ctx, fc.Addr(), &findcoordinator.Request{Key: "garbage"}); err == nil {
		t.Fatal("an undecodable response was accepted")
	}
	m, err := tr.RoundTrip(ctx, fc.Addr(), &findcoordinator.Request{Key: "ok"})
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := m.(*findcoordinator.Response).Coordinator("ok"); c.Host != "h" {
		t.Fatalf("unexpected response %+v", m)
	}
	if n := fc.Brokers[0].NumConns(); n != 1 {
		t.Fatalf("%d connections, want 1: the stream stayed in sync", n)
	}
}

func TestTransportConcurrentRequestsGetTheirOwnResponses(t *testing.T) {
	fc := fakebroker.New(t, 2)
	fc.SetLeader(1, 2)
	fc.SetHandler(func(r *fakebroker.Request) {
		req, ok := r.Msg.(*produce.Request)
		if !ok {
			return
		}
		// Answer after a random delay, so responses leave out of order;
		// the base offset echoes the request's timeout, unique per request.
		delay := time.Duration(req.Timeout%7) * time.Millisecond
		go func() {
			time.Sleep(delay)
			r.Reply(&produce.Response{Topics: []produce.ResponseTopic{{
				Topic: "t", Partitions: []produce.ResponsePartition{{Partition: req.Topics[0].Partitions[0].Partition, BaseOffset: int64(req.Timeout)}},
			}}})
		}()
	})
	tr := tpNewTransport(t)
	ctx := testContext(t)
	const workers, each = 16, 25
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				req := tpProduceRequest(int32(i%2), -1)
				req.Timeout = int32(1000 + w*each + i)
				m, err := tr.RoundTrip(ctx, fc.Addr(), req)
				if err != nil {
					t.Error(err)
					return
				}
				p := m.(*produce.Response).Topics[0].Partitions[0]
				if p.BaseOffset != int64(req.Timeout) || p.Partition != int32(i%2) {
					t.Errorf("request %d got the response of request %d (partition %d)", req.Timeout, p.BaseOffset, p.Partition)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	if got := fc.Count(protocol.Produce, 0); got != workers*each {
		t.Fatalf("%d produce requests reached the brokers, want %d", got, workers*each)
	}
}

func TestTransportContextEndUnblocksMetadataWaiters(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.MetaHold = make(chan struct{})
	defer close(fc.MetaHold)
	tctx, stop := context.WithCancel(context.Background())
	tr := &Transport{Context: tctx}
	done := make(chan error, 1)
	go func() {
		_, err := tr.RoundTrip(context.Background(), fc.Addr(), tpProduceRequest(0, -1))
		done <- err
	}()
	tpWaitFor(t, "the metadata request", func() bool { return fc.Count(protocol.Metadata, 0) == 1 })
	stop()
	if err := <-done; err == nil {
		t.Fatal("request succeeded after the transport's context ended")
	}
}

func TestTransportCloseIdleConnectionsLetsRequestsFinish(t *testing.T) {
	fc := fakebroker.New(t, 1)
	release := make(chan struct{})
	fc.SetHandler(func(r *fakebroker.Request) {
		if r.Msg.ApiKey() == protocol.FindCoordinator {
			go func() {
				<-release
				tpCoordinatorReply(r, 1, "h", 0)
			}()
		}
	})
	tr := &Transport{MetadataTTL: time.Hour}
	done := make(chan error, 1)
	go func() {
		_, err := tr.RoundTrip(testContext(t), fc.Addr(), &findcoordinator.Request{Key: "g"})
		done <- err
	}()
	tpWaitFor(t, "the request to reach the broker", func() bool { return fc.Count(protocol.FindCoordinator, 0) == 1 })
	tr.mutex.Lock()
	var cl *cluster
	for _, c := range tr.clusters {
		cl = c
	}
	tr.mutex.Unlock()

	tr.CloseIdleConnections()
	if cl.ctx.Err() != nil {
		t.Fatal("the cluster was released with a request in flight")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("the request in flight failed: %v", err)
	}
	// The last request out releases the dropped cluster and its
	// connections.
	tpWaitFor(t, "the cluster to be released", func() bool { return cl.ctx.Err() != nil })
	b := fc.Brokers[0]
	tpWaitFor(t, "connections to be closed", func() bool { return b.NumClosed() == b.NumConns() })
}

func TestTransportConcurrentCoordinatorLookupsCollapse(t *testing.T) {
	fc := fakebroker.New(t, 2)
	release := make(chan struct{})
	fc.SetHandler(func(r *fakebroker.Request) {
		switch r.Msg.ApiKey() {
		case protocol.FindCoordinator:
			go func() {
				<-release
				tpCoordinatorReply(r, 2, fc.Brokers[1].Host, 0)
			}()
		case protocol.Heartbeat:
			r.Reply(&heartbeat.Response{})
		}
	})
	tr := tpNewTransport(t)
	ctx := testContext(t)
	const n = 10
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := tr.RoundTrip(ctx, fc.Addr(), &heartbeat.Request{GroupID: "g", MemberID: "m"}); err != nil {
				t.Error(err)
			}
		}()
	}
	tpWaitFor(t, "the coordinator lookup", func() bool { return fc.Count(protocol.FindCoordinator, 0) == 1 })
	time.Sleep(20 * time.Millisecond) // let the other requests queue up behind it
	close(release)
	wg.Wait()
	if n := fc.Count(protocol.FindCoordinator, 0); n != 1 {
		t.Fatalf("%d FindCoordinator requests for concurrent heartbeats of one group, want 1", n)
	}
	if got := fc.Count(protocol.Heartbeat, 2); got != n {
		t.Fatalf("the coordinator received %d heartbeats, want %d", got, n)
	}
}

// A broker nobody listens on: the dial's own error comes back, a
// *net.OpError as v0.4.51 returns it, from the Transport and from the
// Writer and Reader calls that go through it; programs assert the type.
func TestTransportRefusedDialIsNetOpError(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	check := func(what string, err error) {
		t.Helper()
		if _, ok := err.(*net.OpError); !ok {
			t.Errorf("%s: %T %v, want a *net.OpError", what, err, err)
		}
	}
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	_, err := tr.RoundTrip(ctx, TCP(unreachableBrokers...), &metadata.Request{})
	check("Transport.RoundTrip", err)

	w := &Writer{Addr: TCP(unreachableBrokers...), Topic: "t", MaxAttempts: 1, Transport: tr}
	defer w.Close()
	check("Writer.WriteMessages", w.WriteMessages(ctx, Message{Value: []byte("v")}))

	r := NewReader(ReaderConfig{Brokers: unreachableBrokers, Topic: "t"})
	defer r.Close()
	_, err = r.ReadLag(ctx)
	check("Reader.ReadLag", err)
}
