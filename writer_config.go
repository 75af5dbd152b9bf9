package kafka

import (
	"context"
	"errors"
	"net"
	"time"
)

// WriterConfig holds the settings NewWriter turns into a Writer.
//
// Deprecated: set the fields of a Writer directly instead. The type remains
// for the programs that use it and is due to disappear in 1.0.
type WriterConfig struct {
	// Brokers are the bootstrap addresses of the cluster; NewWriter panics
	// when there are none.
	Brokers []string

	// Topic of every message; see Writer.Topic.
	Topic string

	// Dialer supplies the connection settings (TLS, SASL, client ID,
	// resolver, timeouts); nil means DefaultDialer.
	Dialer *Dialer

	// Balancer defaults to round-robin; see Writer.Balancer.
	Balancer Balancer

	// MaxAttempts is copied to the Writer (10 when zero).
	MaxAttempts int

	// QueueCapacity is ignored: it sized a channel of messages in versions
	// before 0.4. See MaxBufferedBatches for a bound on buffering.
	QueueCapacity int

	// BatchSize is copied to the Writer (100 when zero).
	BatchSize int

	// BatchBytes is copied to the Writer (1048576 when zero).
	BatchBytes int

	// BatchTimeout is copied to the Writer (1s when zero).
	BatchTimeout time.Duration

	// ReadTimeout is copied to the Writer (10s when zero).
	ReadTimeout time.Duration

	// WriteTimeout is copied to the Writer (10s when zero).
	WriteTimeout time.Duration

	// RebalanceInterval becomes the metadata TTL of the transport NewWriter
	// creates (15s when zero).
	RebalanceInterval time.Duration

	// IdleConnTimeout becomes the idle timeout of that transport's
	// connections (9 minutes when zero).
	IdleConnTimeout time.Duration

	// RequiredAcks, unlike Writer.RequiredAcks, means "all replicas" when
	// zero; 1 asks for the leader only, -1 for all replicas.
	RequiredAcks int

	// Async is copied to the Writer; see Writer.Async.
	Async bool

	// CompressionCodec, when set, picks the Writer's Compression.
	CompressionCodec

	// Logger is copied to the Writer.
	Logger Logger

	// ErrorLogger is copied to the Writer.
	ErrorLogger Logger

	// MaxBufferedBatches is copied to the Writer; see there.
	MaxBufferedBatches int

	// MaxBufferedBytes is copied to the Writer; see there.
	MaxBufferedBytes int64

	// Idempotent is copied to the Writer; see there.
	Idempotent bool
}

// Validate reports a configuration NewWriter cannot use.
func (config *WriterConfig) Validate() error {
	if len(config.Brokers) == 0 {
		return errors.New("cannot create a kafka writer with an empty list of brokers")
	}
	if config.Idempotent && config.RequiredAcks != 0 && RequiredAcks(config.RequiredAcks) != RequireAll {
		// Refused here rather than at the first write, the earliest point.
		return errIdempotentAcks(config.RequiredAcks)
	}
	return nil
}

// NewWriter builds a Writer, and a Transport of its own, from config. It
// panics when config is not valid.
//
// Deprecated: set the fields of a Writer directly instead.
func NewWriter(config WriterConfig) *Writer {
	if err := config.Validate(); err != nil {
		panic(err)
	}
	d := config.Dialer
	if d == nil {
		d = DefaultDialer
	}

	stats := new(writerStats)
	transport := &Transport{
		Dial:        legacyDialFunc(d, stats),
		SASL:        d.SASLMechanism,
		TLS:         d.TLS,
		ClientID:    d.ClientID,
		IdleTimeout: orDefault(config.IdleConnTimeout, 9*time.Minute),
		MetadataTTL: orDefault(config.RebalanceInterval, 15*time.Second),
	}

	w := &Writer{
		Addr:      TCP(config.Brokers...),
		Topic:     config.Topic,
		Balancer:  config.Balancer,
		Transport: transport,
		transport: transport,
		preStats:  stats,
	}
	if w.Balancer == nil {
		w.Balancer = &RoundRobin{}
	}
	w.MaxAttempts = config.MaxAttempts
	w.BatchSize, w.BatchBytes = config.BatchSize, int64(config.BatchBytes)
	w.BatchTimeout = config.BatchTimeout
	w.ReadTimeout, w.WriteTimeout = config.ReadTimeout, config.WriteTimeout
	w.Async = config.Async
	w.Logger, w.ErrorLogger = config.Logger, config.ErrorLogger
	w.MaxBufferedBatches, w.MaxBufferedBytes = config.MaxBufferedBatches, config.MaxBufferedBytes
	w.Idempotent = config.Idempotent

	// NewWriter has always read 0 as "all replicas", unlike a Writer literal.
	w.RequiredAcks = RequireAll
	if config.RequiredAcks != 0 {
		w.RequiredAcks = RequiredAcks(config.RequiredAcks)
	}
	if c := config.CompressionCodec; c != nil {
		w.Compression = Compression(c.Code())
	}
	return w
}

// legacyDialFunc is the Dialer's dial function (dialFunc), counting dials
// in stats as writers made by NewWriter always did.
func legacyDialFunc(d *Dialer, stats *writerStats) func(context.Context, string, string) (net.Conn, error) {
	dial := d.dialFunc()
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		start := time.Now()
		defer func() {
			stats.dials.add(1)
			stats.dialTime.observeSince(start)
		}()
		return dial(ctx, network, address)
	}
}
