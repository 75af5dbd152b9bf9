package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go/protocol"
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

	// Deadline, unless zero, is the moment from which every dial fails.
	Deadline time.Time

	// LocalAddr, when set, is the address connections are made from;
	// otherwise the system picks one.
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
				return Partition{}, ctxError(ctx, err)
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
		return nil, ctxError(ctx, err)
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

// connect opens and sets up a connection as every connection of the package
// is (openConn: dial through dialFunc, TLS, API versions, SASL), bounded by
// the Dialer's Timeout and Deadline, and wraps it in a Conn.
func (d *Dialer) connect(ctx context.Context, network, address string, config ConnConfig) (*Conn, error) {
	if !d.Deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Deadline)
		defer cancel()
	}
	cfg := &dialConfig{
		dial:        d.dialFunc(),
		dialTimeout: d.Timeout,
		clientID:    config.ClientID,
		tls:         d.TLS,
		sasl:        d.SASLMechanism,
	}
	if cfg.clientID == "" {
		cfg.clientID = DefaultClientID
	}
	s, err := openConn(ctx, cfg, network, address, address)
	if err != nil {
		var de *dialError
		if errors.As(err, &de) {
			return nil, fmt.Errorf("failed to dial: failed to open connection to %s: %w", address, de.err)
		}
		return nil, err
	}
	c := NewConnWith(s.nc, config)
	c.rbuf = s.br
	versions := make(map[protocol.ApiKey]ApiVersion, len(s.ranges))
	for k, r := range s.ranges {
		versions[k] = ApiVersion{ApiKey: int16(k), MinVersion: r[0], MaxVersion: r[1]}
	}
	c.versions.Store(&versions)
	return c, nil
}

// bindContext makes the connection's operations fail once ctx ends, and
// bounds them by its deadline, until release is called; release restores
// the deadlines there were before.
func (c *Conn) bindContext(ctx context.Context) (release func()) {
	rd, wd := c.rdeadline.deadline(), c.wdeadline.deadline()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	stop := interruptOnDone(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	return func() {
		stop()
		c.rdeadline.set(rd)
		c.wdeadline.set(wd)
	}
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
