package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/sasl"
)

// Request is a message a client sends to a broker.
type Request = protocol.Message

// Response is a message a broker sends back to a client.
type Response = protocol.Message

// RoundTripper is the seam between the Client and the network: anything that
// can deliver a request to a cluster and bring back its answer.
type RoundTripper interface {
	// RoundTrip sends req to the cluster reachable at the given address and
	// returns the broker's response, or an error. Cancelling ctx aborts the
	// call.
	RoundTrip(context.Context, net.Addr, Request) (Response, error)
}

// Transport is the RoundTripper used by Client, Writer and Reader. It keeps
// pools of connections to the brokers of each cluster it talks to, learns
// the cluster layout from Metadata and routes every request to the broker
// that must handle it.
//
// A Transport is safe for concurrent use.
type Transport struct {
	// Dial opens network connections. Defaults to a net.Dialer.
	Dial func(context.Context, string, string) (net.Conn, error)

	// DialTimeout bounds the whole setup of a connection: dial, TLS,
	// version negotiation and SASL. Defaults to 5s.
	DialTimeout time.Duration

	// IdleTimeout is how long an unused connection stays open. Defaults to 30s.
	IdleTimeout time.Duration

	// MetadataTTL is the upper bound of the lifetime of cached cluster
	// metadata; the actual TTL is randomized below it. Defaults to 6s.
	MetadataTTL time.Duration

	// MetadataTopics restricts the cached metadata to these topics; empty
	// means the topics the requests sent through the Transport name (the
	// topics in use, not every topic of the cluster). A Metadata request
	// for all topics is then sent to a broker rather than answered from
	// the cache.
	MetadataTopics []string

	// ClientID is sent to the brokers in every request header.
	ClientID string

	// TLS, when set, wraps every connection in TLS.
	TLS *tls.Config

	// SASL, when set, authenticates every connection with this mechanism.
	SASL sasl.Mechanism

	// Resolver, when set, translates broker host names into IP addresses,
	// for every request; Dial is then given resolved addresses only.
	Resolver BrokerResolver

	// Context bounds the goroutines and connections of the transport:
	// when it ends, all of them are closed. nil means context.Background().
	Context context.Context

	mutex    sync.Mutex
	clusters map[string]*cluster
}

// DefaultTransport is the transport used when none is configured.
var DefaultTransport RoundTripper = &Transport{
	Dial: (&net.Dialer{Timeout: 3 * time.Second}).DialContext,
}

// CloseIdleConnections shuts the connections that have no request in flight
// at once, and the others when their last request is answered. The cached cluster metadata is dropped;
// the next request starts afresh.
func (t *Transport) CloseIdleConnections() {
	t.mutex.Lock()
	clusters := t.clusters
	t.clusters = nil
	t.mutex.Unlock()
	for _, cl := range clusters {
		cl.drop()
	}
}

// RoundTrip sends req to the cluster reachable at addr and returns the
// response, whose type matches the request (a *fetch.Response for a
// *fetch.Request, and so on).
//
// The transport discovers the cluster from addr, then routes each request
// to the broker that must handle it: the partition leader, the group or
// transaction coordinator, or any broker. It picks, per connection, the
// highest version of the API that both the broker and this package
// support. Metadata requests are answered from a cache of the topics in
// use (see MetadataTopics), refreshed when a request needs it after
// MetadataTTL, when a request names a topic not in use yet, or as soon as
// a broker reports that the cache is out of date.
func (t *Transport) RoundTrip(ctx context.Context, addr net.Addr, req Request) (Response, error) {
	if addr == nil {
		return nil, errors.New("kafka: no address given for the kafka cluster")
	}
	if err := t.context().Err(); err != nil {
		return nil, err
	}
	cl := t.grabCluster(addr)
	defer cl.leave()
	return cl.roundTrip(ctx, req)
}

func (t *Transport) grabCluster(addr net.Addr) *cluster {
	key := addr.Network() + "://" + addr.String()
	t.mutex.Lock()
	defer t.mutex.Unlock()
	cl := t.clusters[key]
	if cl == nil {
		if t.clusters == nil {
			t.clusters = make(map[string]*cluster)
		}
		cl = newCluster(t, addr)
		t.clusters[key] = cl
	}
	// Counted under the transport's lock, so that CloseIdleConnections
	// sees every request of the clusters it drops.
	cl.enter()
	return cl
}

var defaultDialer = net.Dialer{Timeout: 3 * time.Second}

// Defaults of the Transport's optional fields.
const (
	defaultDialTimeout = 5 * time.Second
	defaultIdleTimeout = 30 * time.Second
	defaultMetadataTTL = 6 * time.Second
)

// orDefault returns v, or def when v is zero or negative: the package's one
// reading of an unset (or unusable) count, size or duration setting.
func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

func (t *Transport) context() context.Context {
	if t.Context == nil {
		return context.Background()
	}
	return t.Context
}

var _ RoundTripper = (*Transport)(nil)
