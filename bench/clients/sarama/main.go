// Command sarama is the load generator for github.com/IBM/sarama.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/IBM/sarama"

	"github.com/segmentio/kafka-go/bench/clients/loadgen"
)

func main() {
	loadgen.Main("sarama", client{})
}

type client struct{}

// config keeps sarama's defaults (flush as soon as possible with up to 5
// requests in flight per broker, ChannelBufferSize 256, MaxMessageBytes
// 1 MB, hash partitioner, metrics on) except acks=1, Return.Successes
// (needed to see acknowledgements) and the codec.
func config(cfg loadgen.Config) (*sarama.Config, error) {
	if cfg.MaxBufferedBatches > 0 || cfg.MaxBufferedBytes > 0 || cfg.Semaphore > 0 {
		return nil, errors.New("kafka-go buffer options do not apply to sarama")
	}
	c := sarama.NewConfig()
	c.Version = sarama.V2_8_0_0 // zstd needs 2.1 or later
	c.Producer.RequiredAcks = sarama.WaitForLocal
	c.Producer.Return.Successes = true
	c.Producer.Return.Errors = true
	switch cfg.Compression {
	case "none":
		c.Producer.Compression = sarama.CompressionNone
	case "zstd":
		c.Producer.Compression = sarama.CompressionZSTD
	case "snappy":
		c.Producer.Compression = sarama.CompressionSnappy
	case "lz4":
		c.Producer.Compression = sarama.CompressionLZ4
	case "gzip":
		c.Producer.Compression = sarama.CompressionGZIP
	default:
		return nil, fmt.Errorf("unsupported compression %q", cfg.Compression)
	}
	return c, nil
}

const settings = "sarama defaults (Version 2.8, MaxOpenRequests 5, ChannelBufferSize 256, no flush linger) + RequiredAcks WaitForLocal, Return.Successes"

func (client) Async(cfg loadgen.Config, ack loadgen.Acker) (loadgen.AsyncProducer, error) {
	c, err := config(cfg)
	if err != nil {
		return nil, err
	}
	ap, err := sarama.NewAsyncProducer(cfg.Brokers, c)
	if err != nil {
		return nil, err
	}
	p := &asyncProducer{ap: ap, topic: cfg.Topic}
	p.drain.Add(2)
	go func() {
		defer p.drain.Done()
		for range ap.Successes() {
			ack(1, nil)
		}
	}()
	go func() {
		defer p.drain.Done()
		for e := range ap.Errors() {
			ack(1, e.Err)
		}
	}()
	return p, nil
}

type asyncProducer struct {
	ap    sarama.AsyncProducer
	topic string
	drain sync.WaitGroup
}

func (p *asyncProducer) Produce(ctx context.Context, value []byte) error {
	select {
	case p.ap.Input() <- &sarama.ProducerMessage{Topic: p.topic, Value: sarama.ByteEncoder(value)}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close flushes: AsyncClose lets the producer finish what it holds and then
// closes Successes and Errors, which ends the two drain loops.
func (p *asyncProducer) Close() error {
	p.ap.AsyncClose()
	p.drain.Wait()
	return nil
}

func (p *asyncProducer) Settings() string {
	return "AsyncProducer, " + settings + ", Successes/Errors drained by two goroutines"
}

func (client) Sync(cfg loadgen.Config) (loadgen.SyncProducer, error) {
	c, err := config(cfg)
	if err != nil {
		return nil, err
	}
	sp, err := sarama.NewSyncProducer(cfg.Brokers, c)
	if err != nil {
		return nil, err
	}
	return &syncProducer{sp: sp, topic: cfg.Topic}, nil
}

type syncProducer struct {
	sp    sarama.SyncProducer
	topic string
}

func (p *syncProducer) Send(_ context.Context, value []byte) error {
	_, _, err := p.sp.SendMessage(&sarama.ProducerMessage{Topic: p.topic, Value: sarama.ByteEncoder(value)})
	return err
}

func (p *syncProducer) Close() error { return p.sp.Close() }
func (p *syncProducer) Settings() string {
	return "SyncProducer, " + settings + ", SendMessage of one message"
}
