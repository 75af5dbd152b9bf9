package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

// WriterConfig is a configuration type used to create new instances of Writer.
//
// DEPRECATED: writer values should be configured directly by assigning their
// exported fields. This type is kept for backward compatibility, and will be
// removed in version 1.0.
type WriterConfig struct {
	// The list of brokers used to discover the partitions available on the
	// kafka cluster.
	//
	// This field is required, attempting to create a writer with an empty list
	// of brokers will panic.
	Brokers []string

	// The topic that the writer will produce messages to.
	//
	// If provided, this will be used to set the topic for all produced messages.
	// If not provided, each Message must specify a topic for itself. This must be
	// mutually exclusive, otherwise the Writer will return an error.
	Topic string

	// The dialer used by the writer to establish connections to the kafka
	// cluster.
	//
	// If nil, the default dialer is used instead.
	Dialer *Dialer

	// The balancer used to distribute messages across partitions.
	//
	// The default is to use a round-robin distribution.
	Balancer Balancer

	// Limit on how many attempts will be made to deliver a message.
	//
	// The default is to try at most 10 times.
	MaxAttempts int

	// DEPRECATED: ignored. Writers buffer batches per partition rather than
	// messages in a channel; see MaxBufferedBatches for a bound.
	QueueCapacity int

	// Limit on how many messages will be buffered before being sent to a
	// partition.
	//
	// The default is to use a target batch size of 100 messages.
	BatchSize int

	// Limit the maximum size of a request in bytes before being sent to
	// a partition.
	//
	// The default is to use a kafka default value of 1048576.
	BatchBytes int

	// Time limit on how often incomplete message batches will be flushed to
	// kafka.
	//
	// The default is to flush at least every second.
	BatchTimeout time.Duration

	// Timeout for read operations performed by the Writer.
	//
	// Defaults to 10 seconds.
	ReadTimeout time.Duration

	// Timeout for write operation performed by the Writer.
	//
	// Defaults to 10 seconds.
	WriteTimeout time.Duration

	// DEPRECATED: used as the metadata TTL of the transport NewWriter
	// creates (15s when zero).
	RebalanceInterval time.Duration

	// DEPRECATED: used as the idle timeout of the connections of the
	// transport NewWriter creates (9 minutes when zero).
	IdleConnTimeout time.Duration

	// Number of acknowledges from partition replicas required before receiving
	// a response to a produce request. The default is -1, which means to wait for
	// all replicas, and a value above 0 is required to indicate how many replicas
	// should acknowledge a message to be considered successful.
	RequiredAcks int

	// Setting this flag to true causes the WriteMessages method to never block.
	// It also means that errors are ignored since the caller will not receive
	// the returned value. Use this only if you don't care about guarantees of
	// whether the messages were written to kafka.
	Async bool

	// CompressionCodec set the codec to be used to compress Kafka messages.
	CompressionCodec

	// If not nil, specifies a logger used to report internal changes within the
	// writer.
	Logger Logger

	// ErrorLogger is the logger used to report errors. If nil, the writer falls
	// back to using Logger instead.
	ErrorLogger Logger

	// MaxBufferedBatches is copied to Writer.MaxBufferedBatches; see there.
	MaxBufferedBatches int

	// MaxBufferedBytes is copied to Writer.MaxBufferedBytes; see there.
	MaxBufferedBytes int64
}

// Validate method validates WriterConfig properties.
func (config *WriterConfig) Validate() error {
	if len(config.Brokers) == 0 {
		return errors.New("cannot create a kafka writer with an empty list of brokers")
	}
	return nil
}

// NewWriter creates and returns a new Writer configured with config.
//
// DEPRECATED: Writer value can be instantiated and configured directly,
// this function is retained for backward compatibility and will be removed
// in version 1.0.
func NewWriter(config WriterConfig) *Writer {
	if err := config.Validate(); err != nil {
		panic(err)
	}
	d := config.Dialer
	if d == nil {
		d = DefaultDialer
	}
	balancer := config.Balancer
	if balancer == nil {
		balancer = &RoundRobin{}
	}

	stats := new(writerStats)
	netDialer := &net.Dialer{
		Timeout:       d.Timeout,
		Deadline:      d.Deadline,
		LocalAddr:     d.LocalAddr,
		FallbackDelay: d.FallbackDelay,
		KeepAlive:     d.KeepAlive,
	}
	// A *net.Resolver plugs into net.Dialer; any other Resolver is applied
	// by hand before dialing.
	var custom Resolver
	if r, ok := d.Resolver.(*net.Resolver); ok {
		netDialer.Resolver = r
	} else {
		custom = d.Resolver
	}
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		start := time.Now()
		defer func() {
			// Writers built here keep reporting dials, as they always did.
			stats.dials.add(1)
			stats.dialTime.observeSince(start)
		}()
		if custom != nil {
			resolved, err := resolveWith(ctx, custom, address)
			if err != nil {
				return nil, err
			}
			address = resolved
		}
		if d.DialFunc != nil {
			return d.DialFunc(ctx, network, address)
		}
		return netDialer.DialContext(ctx, network, address)
	}

	idle := config.IdleConnTimeout
	if idle == 0 {
		idle = 9 * time.Minute
	}
	ttl := config.RebalanceInterval
	if ttl == 0 {
		ttl = 15 * time.Second
	}
	transport := &Transport{
		Dial:        dial,
		SASL:        d.SASLMechanism,
		TLS:         d.TLS,
		ClientID:    d.ClientID,
		IdleTimeout: idle,
		MetadataTTL: ttl,
	}

	w := &Writer{
		Addr:               TCP(config.Brokers...),
		Topic:              config.Topic,
		MaxAttempts:        config.MaxAttempts,
		BatchSize:          config.BatchSize,
		Balancer:           balancer,
		BatchBytes:         int64(config.BatchBytes),
		BatchTimeout:       config.BatchTimeout,
		ReadTimeout:        config.ReadTimeout,
		WriteTimeout:       config.WriteTimeout,
		RequiredAcks:       RequiredAcks(config.RequiredAcks),
		Async:              config.Async,
		Logger:             config.Logger,
		ErrorLogger:        config.ErrorLogger,
		Transport:          transport,
		MaxBufferedBatches: config.MaxBufferedBatches,
		MaxBufferedBytes:   config.MaxBufferedBytes,
		transport:          transport,
		preStats:           stats,
	}
	if config.RequiredAcks == 0 {
		// NewWriter has always meant "all" by 0, unlike a Writer literal.
		w.RequiredAcks = RequireAll
	}
	if config.CompressionCodec != nil {
		w.Compression = Compression(config.CompressionCodec.Code())
	}
	return w
}

// resolveWith looks up the host of address ("host:port") with r, keeping
// the port of address when it has one, and address itself when r knows
// nothing.
func resolveWith(ctx context.Context, r Resolver, address string) (string, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		host, port = address, ""
	}
	addrs, err := r.LookupHost(ctx, host)
	if err != nil {
		return "", fmt.Errorf("failed to resolve host %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return address, nil
	}
	rhost, rport, err := net.SplitHostPort(addrs[0])
	if err != nil {
		rhost, rport = addrs[0], ""
	}
	if port == "" {
		port = rport
	}
	return net.JoinHostPort(rhost, port), nil
}
