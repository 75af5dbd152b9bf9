// Package kafkago adapts github.com/segmentio/kafka-go's Writer to the load
// generator. The same source serves two builds: the upstream module
// (v0.4.51 from the proxy) and this project (through a replace directive in
// the fork client's go.mod). Only the fork has the buffer bounds, so the
// fork's main package fills in SetBounds; this package never names them.
package kafkago

import (
	"context"
	"errors"
	"fmt"
	"time"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/compress"
	"github.com/segmentio/kafka-go/compress/snappy"

	"github.com/segmentio/kafka-go/bench/clients/loadgen"
)

// SetBounds applies MaxBufferedBatches and MaxBufferedBytes. It is nil in
// builds whose kafka-go has no such fields.
var SetBounds func(w *kafka.Writer, batches int, bytes int64)

// StickyBalancer returns the fork's Sticky balancer. It is nil in builds
// whose kafka-go has none.
var StickyBalancer func() kafka.Balancer

// Batching shared by the asynchronous cases: kafka-go's default
// BatchTimeout of one second and BatchSize of 100 are tuned for neither
// throughput nor latency, and every kafka-go throughput guide raises the
// size and lowers the timeout; 10ms matches franz-go's default linger.
const (
	batchSize    = 1000
	batchBytes   = 1 << 20
	batchTimeout = 10 * time.Millisecond
)

// Client implements loadgen.Client.
type Client struct{}

func compression(name string) (kafka.Compression, error) {
	switch name {
	case "none":
		return 0, nil
	case "zstd":
		return kafka.Zstd, nil
	case "snappy":
		return kafka.Snappy, nil
	case "lz4":
		return kafka.Lz4, nil
	case "gzip":
		return kafka.Gzip, nil
	}
	return 0, fmt.Errorf("unsupported compression %q", name)
}

func newWriter(cfg loadgen.Config) (*kafka.Writer, string, error) {
	codec, err := compression(cfg.Compression)
	if err != nil {
		return nil, "", err
	}
	if cfg.SnappyFast {
		// The registered codec is what kafka.Snappy resolves to.
		compress.SnappyCodec.Compression = snappy.FasterCompression
	}
	if cfg.SnappyUnframed {
		compress.SnappyCodec.Framing = snappy.Unframed
	}
	w := &kafka.Writer{
		Addr:         kafka.TCP(cfg.Brokers...),
		Topic:        cfg.Topic,
		RequiredAcks: kafka.RequireOne,
		Compression:  codec,
	}
	var bounds string
	if cfg.MaxBufferedBatches > 0 || cfg.MaxBufferedBytes > 0 {
		if SetBounds == nil {
			return nil, "", errors.New("this kafka-go build has no MaxBufferedBatches/MaxBufferedBytes")
		}
		SetBounds(w, cfg.MaxBufferedBatches, cfg.MaxBufferedBytes)
		bounds = fmt.Sprintf(", MaxBufferedBatches %d, MaxBufferedBytes %d MiB",
			cfg.MaxBufferedBatches, cfg.MaxBufferedBytes>>20)
	}
	return w, bounds, nil
}

// Async returns a Writer with Async set; acknowledgements come from
// Completion.
func (Client) Async(cfg loadgen.Config, ack loadgen.Acker) (loadgen.AsyncProducer, error) {
	w, bounds, err := newWriter(cfg)
	if err != nil {
		return nil, err
	}
	w.Async = true
	w.BatchSize = batchSize
	if cfg.BatchSize > 0 {
		w.BatchSize = cfg.BatchSize
	}
	w.BatchBytes = batchBytes
	w.BatchTimeout = batchTimeout
	balancer := "RoundRobin (default)"
	if cfg.Sticky {
		if StickyBalancer == nil {
			return nil, errors.New("this kafka-go build has no Sticky balancer")
		}
		w.Balancer = StickyBalancer()
		balancer = "Sticky"
	}
	p := &asyncProducer{w: w}
	if cfg.Topics > 1 {
		w.Topic = "" // each message names its own
	}
	if cfg.Keyed {
		w.Balancer = &kafka.Hash{}
		balancer = "Hash"
	}
	p.settings = fmt.Sprintf("Writer{Async, RequiredAcks 1, BatchSize %d, BatchBytes %d KiB, BatchTimeout %s, balancer %s%s}",
		w.BatchSize, batchBytes>>10, batchTimeout, balancer, bounds)
	if cfg.Semaphore > 0 {
		// The alternative to a bound inside the Writer: the application
		// takes a slot per message and Completion gives it back.
		p.sem = make(chan struct{}, cfg.Semaphore)
		p.settings += fmt.Sprintf(" + application semaphore of %d messages released in Completion", cfg.Semaphore)
	}
	w.Completion = func(msgs []kafka.Message, err error) {
		if p.sem != nil {
			for range msgs {
				<-p.sem
			}
		}
		ack(len(msgs), err)
	}
	return p, nil
}

type asyncProducer struct {
	w        *kafka.Writer
	sem      chan struct{}
	settings string
}

func (p *asyncProducer) Produce(ctx context.Context, value []byte) error {
	return p.ProduceKeyed(ctx, "", nil, value)
}

// ProduceKeyed is Produce with a key, for the Hash balancer, and a topic
// of its own when the Writer has none.
func (p *asyncProducer) ProduceKeyed(ctx context.Context, topic string, key, value []byte) error {
	if p.sem != nil {
		select {
		case p.sem <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	err := p.w.WriteMessages(ctx, kafka.Message{Topic: topic, Key: key, Value: value})
	if err != nil && p.sem != nil {
		<-p.sem
	}
	return err
}

func (p *asyncProducer) Close() error     { return p.w.Close() }
func (p *asyncProducer) Settings() string { return p.settings }

// Sync returns a synchronous Writer; BatchSize 1 makes each WriteMessages
// call its own batch instead of waiting out BatchTimeout for company.
func (Client) Sync(cfg loadgen.Config) (loadgen.SyncProducer, error) {
	w, bounds, err := newWriter(cfg)
	if err != nil {
		return nil, err
	}
	w.BatchSize = 1
	return &syncProducer{w: w, settings: "Writer{RequiredAcks 1, BatchSize 1" + bounds + "}, one message per WriteMessages"}, nil
}

type syncProducer struct {
	w        *kafka.Writer
	settings string
}

func (p *syncProducer) Send(ctx context.Context, value []byte) error {
	return p.w.WriteMessages(ctx, kafka.Message{Value: value})
}

func (p *syncProducer) Close() error     { return p.w.Close() }
func (p *syncProducer) Settings() string { return p.settings }
