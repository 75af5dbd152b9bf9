package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"syscall"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/saslauthenticate"
	"github.com/segmentio/kafka-go/protocol/saslhandshake"
	"github.com/segmentio/kafka-go/sasl"
)

// A Dialer opens connections to kafka brokers, as net.Dialer does network
// connections: it resolves, connects, sets up TLS, negotiates API versions
// and authenticates.
type Dialer struct {
	// ClientID names the client in the requests of its connections
	// (DefaultClientID when empty).
	ClientID string

	// DialFunc, when set, opens the network connections instead of a
	// net.Dialer; LocalAddr, DualStack, FallbackDelay and KeepAlive are then
	// ignored.
	DialFunc func(ctx context.Context, network string, address string) (net.Conn, error)

	// Timeout bounds a whole dial, connection setup included. Zero means no
	// timeout (the operating system may still impose one).
	Timeout time.Duration

	// Deadline is an absolute time after which dials fail. Zero means none.
	Deadline time.Time

	// LocalAddr is the local address to dial from (nil: chosen by the
	// system).
	LocalAddr net.Addr

	// DualStack asks for RFC 6555 "Happy Eyeballs" dialing. The standard
	// library now always does it, so the field is kept for compatibility
	// only; FallbackDelay tunes (or, negative, disables) the behaviour.
	DualStack bool

	// FallbackDelay is how long to wait before trying the fallback address
	// family (zero: 300ms).
	FallbackDelay time.Duration

	// KeepAlive is the TCP keep-alive period (zero: the system default).
	KeepAlive time.Duration

	// Resolver, when set, maps broker host names to other hosts or
	// addresses (service discovery). The first address it returns is used;
	// its port only when the dialed address has none. 9092 is the port of
	// last resort.
	Resolver Resolver

	// TLS, when set, makes the connections use TLS with this configuration.
	TLS *tls.Config

	// SASLMechanism, when set, authenticates every connection with it.
	SASLMechanism sasl.Mechanism

	// TransactionalID is given to the connections for transactional
	// produce requests; empty means non-transactional.
	TransactionalID string
}

// DefaultDialer is the Dialer of the package-level Dial functions.
var DefaultDialer = &Dialer{
	Timeout:   10 * time.Second,
	DualStack: true,
}

// Dial is DialContext without a context to cancel it.
func (d *Dialer) Dial(network string, address string) (*Conn, error) {
	return d.DialContext(context.Background(), network, address)
}

// DialContext opens a Conn to the broker reachable at address over network
// (normally "tcp"). ctx bounds the dial and the connection's setup (API versions, SASL);
// it has no effect on the connection once established.
func (d *Dialer) DialContext(ctx context.Context, network string, address string) (*Conn, error) {
	return d.connect(ctx, network, address, ConnConfig{
		ClientID:        d.ClientID,
		TransactionalID: d.TransactionalID,
	})
}

// DialLeader connects to the leader of a partition of topic. address is any
// broker of the cluster, used to look the leader up.
func (d *Dialer) DialLeader(ctx context.Context, network string, address string, topic string, partition int) (*Conn, error) {
	p, err := d.LookupPartition(ctx, network, address, topic, partition)
	if err != nil {
		return nil, err
	}
	return d.DialPartition(ctx, network, address, p)
}

// DialPartition connects to the leader of partition, as returned by
// LookupPartition or LookupPartitions.
func (d *Dialer) DialPartition(ctx context.Context, network string, address string, partition Partition) (*Conn, error) {
	leader := net.JoinHostPort(partition.Leader.Host, strconv.Itoa(partition.Leader.Port))
	return d.connect(ctx, network, leader, ConnConfig{
		ClientID:        d.ClientID,
		Topic:           partition.Topic,
		Partition:       partition.ID,
		Broker:          partition.Leader.ID,
		Rack:            partition.Leader.Rack,
		TransactionalID: d.TransactionalID,
	})
}

// LookupLeader returns the leader of a partition of topic.
func (d *Dialer) LookupLeader(ctx context.Context, network string, address string, topic string, partition int) (Broker, error) {
	p, err := d.LookupPartition(ctx, network, address, topic, partition)
	return p.Leader, err
}

// LookupPartition returns the description of a partition of topic. It
// retries, until the context ends, while the metadata reports a temporary
// error (a topic being created, a leader being elected), a temporary error
// for the partition, or does not list the partition yet (partitions being
// added).
func (d *Dialer) LookupPartition(ctx context.Context, network string, address string, topic string, partition int) (Partition, error) {
	c, err := d.DialContext(ctx, network, address)
	if err != nil {
		return Partition{}, err
	}
	defer c.Close()
	release := c.bindContext(ctx)
	defer release()

	for attempt := 0; ; attempt++ {
		if attempt != 0 && !sleep(ctx, backoff(attempt, 100*time.Millisecond, 10*time.Second)) {
			return Partition{}, ctx.Err()
		}
		partitions, err := c.ReadPartitions(topic)
		if err != nil {
			if ctx.Err() != nil {
				return Partition{}, contextError(ctx, err)
			}
			if isTemporary(err) {
				continue
			}
			return Partition{}, err
		}
		for _, p := range partitions {
			// A partition without a leader yet (a topic being created)
			// cannot be dialed: wait for the election.
			if p.ID == partition && !isTemporary(p.Error) {
				return p, nil
			}
		}
	}
}

// LookupPartitions returns the partitions of topic.
func (d *Dialer) LookupPartitions(ctx context.Context, network string, address string, topic string) ([]Partition, error) {
	c, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	release := c.bindContext(ctx)
	defer release()

	partitions, err := c.ReadPartitions(topic)
	if err != nil {
		return nil, contextError(ctx, err)
	}
	return partitions, err
}

// Dial is DefaultDialer.Dial.
func Dial(network string, address string) (*Conn, error) {
	return DefaultDialer.Dial(network, address)
}

// DialContext is DefaultDialer.DialContext.
func DialContext(ctx context.Context, network string, address string) (*Conn, error) {
	return DefaultDialer.DialContext(ctx, network, address)
}

// DialLeader is DefaultDialer.DialLeader.
func DialLeader(ctx context.Context, network string, address string, topic string, partition int) (*Conn, error) {
	return DefaultDialer.DialLeader(ctx, network, address, topic, partition)
}

// DialPartition is DefaultDialer.DialPartition.
func DialPartition(ctx context.Context, network string, address string, partition Partition) (*Conn, error) {
	return DefaultDialer.DialPartition(ctx, network, address, partition)
}

// LookupPartition is DefaultDialer.LookupPartition.
func LookupPartition(ctx context.Context, network string, address string, topic string, partition int) (Partition, error) {
	return DefaultDialer.LookupPartition(ctx, network, address, topic, partition)
}

// LookupPartitions is DefaultDialer.LookupPartitions.
func LookupPartitions(ctx context.Context, network string, address string, topic string) ([]Partition, error) {
	return DefaultDialer.LookupPartitions(ctx, network, address, topic)
}

// connect dials address and sets the connection up: API versions, then
// SASL authentication when configured. Any failure closes the connection.
func (d *Dialer) connect(ctx context.Context, network, address string, config ConnConfig) (*Conn, error) {
	if d.Timeout != 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.Timeout)
		defer cancel()
	}
	if !d.Deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Deadline)
		defer cancel()
	}

	nc, err := d.dialContext(ctx, network, address)
	if err != nil {
		return nil, fmt.Errorf("failed to dial: %w", err)
	}
	c := NewConnWith(nc, config)
	if err := d.setup(ctx, c, address); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (d *Dialer) setup(ctx context.Context, c *Conn, address string) error {
	release := c.bindContext(ctx)
	defer release()

	if _, err := c.loadVersions(); err != nil {
		err = contextError(ctx, err)
		return fmt.Errorf("kafka: negotiating API versions with %s: %w", address, err)
	}
	if d.SASLMechanism == nil {
		return nil
	}
	host, port, err := splitHostPortNumber(address)
	if err != nil {
		return fmt.Errorf("could not determine host/port for SASL authentication: %w", err)
	}
	ctx = sasl.WithMetadata(ctx, &sasl.Metadata{Host: host, Port: port})
	if err := c.authenticateSASL(ctx, d.SASLMechanism); err != nil {
		if !errors.Is(err, SASLAuthenticationFailed) {
			err = contextError(ctx, err)
		}
		return fmt.Errorf("could not successfully authenticate to %s:%d with SASL: %w", host, port, err)
	}
	return nil
}

// contextError returns the error of ctx, wrapping err, when err is the
// consequence of ctx ending (bindContext turns that into a socket timeout).
func contextError(ctx context.Context, err error) error {
	cerr := ctx.Err()
	if cerr == nil && isTimeout(err) {
		if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
			cerr = context.DeadlineExceeded
		}
	}
	if cerr == nil {
		return err
	}
	return fmt.Errorf("%w (%v)", cerr, err)
}

// bindContext makes the connection's operations fail once ctx ends, and
// bounds them by its deadline, until release is called; release restores
// the deadlines there were before.
func (c *Conn) bindContext(ctx context.Context) (release func()) {
	rd, wd := c.rdeadline.deadline(), c.wdeadline.deadline()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(done)
		c.SetDeadline(time.Unix(1, 0)) // in the past: interrupt
	})
	return func() {
		if !stop() {
			<-done
		}
		c.rdeadline.set(rd)
		c.wdeadline.set(wd)
	}
}

// authenticateSASL runs the SASL exchange of mech on the connection: a
// SaslHandshake, then the mechanism's messages, in SaslAuthenticate
// requests or, after a v0 handshake, as raw frames.
func (c *Conn) authenticateSASL(ctx context.Context, mech sasl.Mechanism) error {
	version, err := c.negotiateVersion(protocol.SaslHandshake)
	if err != nil {
		return fmt.Errorf("SASL handshake failed: %w", err)
	}
	msg, err := c.roundTrip(&c.wdeadline, version, &saslhandshake.Request{Mechanism: mech.Name()})
	if err != nil {
		return fmt.Errorf("SASL handshake failed: %w", saslError(err))
	}
	if res := msg.(*saslhandshake.Response); res.ErrorCode != 0 {
		return fmt.Errorf("SASL handshake failed: mechanism %s (broker enables %v): %w", mech.Name(), res.Mechanisms, Error(res.ErrorCode))
	}

	sess, state, err := mech.Start(ctx)
	if err != nil {
		return fmt.Errorf("SASL authentication process could not be started: %w", err)
	}
	for done := false; !done; {
		challenge, err := c.saslAuthenticate(version, state)
		if err != nil {
			return saslError(err)
		}
		if done, state, err = sess.Next(ctx, challenge); err != nil {
			return fmt.Errorf("SASL authentication process has failed: %w", err)
		}
	}
	return nil
}

// saslAuthenticate sends one SASL message and returns the broker's reply.
func (c *Conn) saslAuthenticate(handshakeVersion int16, data []byte) ([]byte, error) {
	req := &saslauthenticate.Request{AuthBytes: data}
	if handshakeVersion == 0 {
		msg, err := c.rawExchange(req)
		if err != nil {
			return nil, err
		}
		return msg.(*saslauthenticate.Response).AuthBytes, nil
	}
	msg, err := c.requestWith(&c.wdeadline, req)
	if err != nil {
		return nil, err
	}
	res := msg.(*saslauthenticate.Response)
	if res.ErrorCode != 0 {
		return nil, makeError(res.ErrorCode, res.ErrorMessage)
	}
	return res.AuthBytes, nil
}

// saslError reports a connection the broker closed during authentication
// (how brokers commonly reject credentials) as SASLAuthenticationFailed.
func saslError(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		// The network error stays wrapped (as io.ErrUnexpectedEOF, never a
		// bare io.EOF), so that callers can tell a lost connection.
		return fmt.Errorf("%w: the broker closed the connection: %w", SASLAuthenticationFailed, dontExpectEOF(err))
	}
	return err
}

// dialContext resolves and dials address, then runs the TLS handshake when
// configured.
func (d *Dialer) dialContext(ctx context.Context, network string, address string) (net.Conn, error) {
	addr, err := lookupHost(ctx, address, d.Resolver)
	if err != nil {
		return nil, fmt.Errorf("failed to resolve host: %w", err)
	}
	dial := d.DialFunc
	if dial == nil {
		dial = (&net.Dialer{
			LocalAddr:     d.LocalAddr,
			FallbackDelay: d.FallbackDelay,
			KeepAlive:     d.KeepAlive,
		}).DialContext
	}
	nc, err := dial(ctx, network, addr)
	if err != nil {
		return nil, fmt.Errorf("failed to open connection to %s: %w", addr, err)
	}
	if d.TLS == nil {
		return nc, nil
	}
	config := d.TLS
	if config.ServerName == "" {
		host, _ := splitHostPort(addr)
		config = config.Clone()
		config.ServerName = host
	}
	tc := tls.Client(nc, config)
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		// A server that hangs up on our hello gives io.EOF; it is a lost
		// connection like any other, so it is reported as one.
		return nil, dontExpectEOF(err)
	}
	return tc, nil
}

// sleep waits for duration, or until ctx ends (then it returns false).
func sleep(ctx context.Context, duration time.Duration) bool {
	if duration <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(duration)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// backoff is the delay before retry attempt: growing with the square of the
// attempt from min, capped at max.
func backoff(attempt int, min time.Duration, max time.Duration) time.Duration {
	d := time.Duration(attempt*attempt) * min
	if d > max || d < 0 {
		d = max
	}
	return d
}

// splitHostPort never fails: a bare host name is what users most often
// type, so it is read as a broker on Kafka's well-known port.
func splitHostPort(s string) (host string, port string) {
	if h, p, _ := net.SplitHostPort(s); h != "" || p != "" {
		return h, p
	}
	return s, "9092"
}

func splitHostPortNumber(s string) (string, int, error) {
	host, p := splitHostPort(s)
	n, err := strconv.Atoi(p)
	if err != nil {
		return host, 0, fmt.Errorf("%s: %w", s, err)
	}
	return host, n, nil
}

// lookupHost lets a custom Resolver redirect a broker address. Only the
// first answer matters: its host always wins, but a port the caller spelled
// out is kept, because it was chosen on purpose.
func lookupHost(ctx context.Context, address string, resolver Resolver) (string, error) {
	host, port := splitHostPort(address)
	if resolver == nil {
		return net.JoinHostPort(host, port), nil
	}
	answers, err := resolver.LookupHost(ctx, host)
	switch {
	case err != nil:
		return "", fmt.Errorf("failed to resolve host %s: %w", host, err)
	case len(answers) == 0:
		// Nothing to redirect to: dial what we were given.
		return net.JoinHostPort(host, port), nil
	}
	target, targetPort := splitHostPort(answers[0])
	if port != "" {
		targetPort = port
	}
	return net.JoinHostPort(target, targetPort), nil
}
