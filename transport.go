package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol"
)

// Request is a message a client sends to a broker.
type Request = protocol.Message

// Response is a message a broker sends back to a client.
type Response = protocol.Message

// RoundTripper sends requests to a kafka cluster and returns the responses.
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
	// means all topics of the cluster.
	MetadataTopics []string

	// ClientID is sent to the brokers in every request header.
	ClientID string

	// TLS, when set, wraps every connection in TLS.
	TLS *tls.Config

	// Context bounds the goroutines started by the transport; nil means
	// context.Background().
	Context context.Context
}

// DefaultTransport is the transport used when none is configured.
var DefaultTransport RoundTripper = &Transport{
	Dial: (&net.Dialer{Timeout: 3 * time.Second}).DialContext,
}

var errTransportNotReady = errors.New("kafka: transport not implemented yet")

// CloseIdleConnections closes the idle connections now and marks the busy
// ones to be closed once idle.
func (t *Transport) CloseIdleConnections() {}

// RoundTrip sends req to the cluster reachable at addr.
func (t *Transport) RoundTrip(ctx context.Context, addr net.Addr, req Request) (Response, error) {
	return nil, errTransportNotReady
}

var _ RoundTripper = (*Transport)(nil)
