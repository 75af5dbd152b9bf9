// Command franz is the load generator for github.com/twmb/franz-go (kgo).
// It also creates the topic of every run for the bench tool.
package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/segmentio/kafka-go/bench/clients/loadgen"
)

func main() {
	loadgen.Main("franz", client{})
}

type client struct{}

// opts are kgo's defaults except what acks=1 requires: idempotent writes
// need acks=all, so they are turned off. Defaults kept: linger 10ms,
// MaxBufferedRecords 50000, batches up to 1 MB, sticky partitioning.
func opts(cfg loadgen.Config) ([]kgo.Opt, error) {
	o := []kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.DefaultProduceTopic(cfg.Topic),
		kgo.RequiredAcks(kgo.LeaderAck()),
		kgo.DisableIdempotentWrite(),
	}
	switch cfg.Compression {
	case "none":
		o = append(o, kgo.ProducerBatchCompression(kgo.NoCompression()))
	case "zstd":
		o = append(o, kgo.ProducerBatchCompression(kgo.ZstdCompression()))
	case "snappy":
		o = append(o, kgo.ProducerBatchCompression(kgo.SnappyCompression()))
	case "lz4":
		o = append(o, kgo.ProducerBatchCompression(kgo.Lz4Compression()))
	case "gzip":
		o = append(o, kgo.ProducerBatchCompression(kgo.GzipCompression()))
	default:
		return nil, fmt.Errorf("unsupported compression %q", cfg.Compression)
	}
	if cfg.MaxBufferedBatches > 0 || cfg.MaxBufferedBytes > 0 || cfg.Semaphore > 0 {
		return nil, errors.New("kafka-go buffer options do not apply to franz-go")
	}
	return o, nil
}

const settings = "kgo defaults (linger 10ms, MaxBufferedRecords 50000, ProducerBatchMaxBytes 1 MB, sticky partitioner) + RequiredAcks(LeaderAck), DisableIdempotentWrite"

func (client) Async(cfg loadgen.Config, ack loadgen.Acker) (loadgen.AsyncProducer, error) {
	o, err := opts(cfg)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(o...)
	if err != nil {
		return nil, err
	}
	return &asyncProducer{cl: cl, ack: func(_ *kgo.Record, err error) { ack(1, err) }}, nil
}

type asyncProducer struct {
	cl  *kgo.Client
	ack func(*kgo.Record, error)
}

// Produce blocks while MaxBufferedRecords are buffered, which is kgo's
// backpressure.
func (p *asyncProducer) Produce(ctx context.Context, value []byte) error {
	p.cl.Produce(ctx, &kgo.Record{Value: value}, p.ack)
	return nil
}

// ProduceKeyed is Produce with a key, which the default partitioner
// hashes, and a topic (the default one when empty).
func (p *asyncProducer) ProduceKeyed(ctx context.Context, topic string, key, value []byte) error {
	p.cl.Produce(ctx, &kgo.Record{Topic: topic, Key: key, Value: value}, p.ack)
	return nil
}

func (p *asyncProducer) Close() error {
	err := p.cl.Flush(context.Background())
	p.cl.Close()
	return err
}

func (p *asyncProducer) Settings() string { return settings + ", Produce with a promise per record" }

func (client) Sync(cfg loadgen.Config) (loadgen.SyncProducer, error) {
	o, err := opts(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.RoundRobin {
		// The sticky default would send every one-record batch to the
		// same partition.
		o = append(o, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	}
	cl, err := kgo.NewClient(o...)
	if err != nil {
		return nil, err
	}
	return &syncProducer{cl: cl}, nil
}

type syncProducer struct{ cl *kgo.Client }

func (p *syncProducer) Send(ctx context.Context, value []byte) error {
	return p.cl.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr()
}

func (p *syncProducer) Close() error     { p.cl.Close(); return nil }
func (p *syncProducer) Settings() string { return settings + ", ProduceSync of one record" }

// CreateTopic creates cfg.Topic (replication 1) and waits until every
// partition has a leader, so that no client pays for topic creation inside
// its measured window.
func (client) CreateTopic(ctx context.Context, cfg loadgen.Config) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...))
	if err != nil {
		return err
	}
	defer cl.Close()

	names := []string{cfg.Topic}
	if cfg.Topics > 1 {
		names = names[:0]
		for i := 0; i < cfg.Topics; i++ {
			names = append(names, loadgen.TopicName(cfg.Topic, i))
		}
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	for _, name := range names {
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic = name
		t.NumPartitions = int32(cfg.Partitions)
		t.ReplicationFactor = 1
		req.Topics = append(req.Topics, t)
	}
	req.TimeoutMillis = 10000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("create topic: %w", err)
	}
	for _, rt := range resp.Topics {
		if err := kerr.ErrorForCode(rt.ErrorCode); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w", rt.Topic, err)
		}
	}

	for {
		mreq := kmsg.NewPtrMetadataRequest()
		for _, name := range names {
			mt := kmsg.NewMetadataRequestTopic()
			mt.Topic = kmsg.StringPtr(name)
			mreq.Topics = append(mreq.Topics, mt)
		}
		mresp, err := mreq.RequestWith(ctx, cl)
		if err == nil && ready(mresp, len(names), cfg.Partitions) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topic %s not ready: %w", cfg.Topic, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func ready(m *kmsg.MetadataResponse, topics, partitions int) bool {
	if len(m.Topics) != topics {
		return false
	}
	for _, t := range m.Topics {
		if t.ErrorCode != 0 || len(t.Partitions) != partitions {
			return false
		}
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 || p.Leader < 0 {
				return false
			}
		}
	}
	return true
}
