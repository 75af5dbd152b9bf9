package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/segmentio/kafka-go/bench/clients/loadgen"
)

// Consumer implements loadgen.ConsumerClient: one kgo client, PollFetches
// in a loop, kgo's fetch defaults (FetchMaxBytes 50 MB, FetchMaxPartitionBytes
// 1 MB, MaxConcurrentFetches unlimited).
func (client) Consumer(cfg loadgen.Config) (loadgen.Consumer, error) {
	o := []kgo.Opt{kgo.SeedBrokers(cfg.Brokers...)}
	c := &consumer{}
	switch cfg.Scenario {
	case loadgen.ConsumePartition:
		parts := map[int32]kgo.Offset{}
		for p := 0; p < cfg.Partitions; p++ {
			parts[int32(p)] = kgo.NewOffset().AtStart()
		}
		o = append(o, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{cfg.Topic: parts}))
		c.settings = "ConsumePartitions (every partition, from the start), PollFetches"
	case loadgen.ConsumeGroupRead:
		o = append(o, kgo.ConsumerGroup(cfg.Group), kgo.ConsumeTopics(cfg.Topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.AutoCommitInterval(time.Second))
		c.settings = "ConsumerGroup + ConsumeTopics, AutoCommitInterval 1s, PollFetches"
	case loadgen.ConsumeGroupCommit:
		o = append(o, kgo.ConsumerGroup(cfg.Group), kgo.ConsumeTopics(cfg.Topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
		c.commitEvery = cfg.CommitEvery
		c.settings = fmt.Sprintf("ConsumerGroup + ConsumeTopics, DisableAutoCommit, PollFetches, CommitRecords of every %dth record, synchronously", cfg.CommitEvery)
	default:
		return nil, fmt.Errorf("unknown consumer scenario %q", cfg.Scenario)
	}
	cl, err := kgo.NewClient(o...)
	if err != nil {
		return nil, err
	}
	c.cl = cl
	return c, nil
}

type consumer struct {
	cl          *kgo.Client
	commitEvery int
	settings    string
}

func (c *consumer) Run(ctx context.Context, deliver loadgen.Delivery) error {
	n := 0
	for {
		fs := c.cl.PollFetches(ctx)
		if ctx.Err() != nil || fs.IsClientClosed() {
			return nil
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) {
			if ferr == nil && !errors.Is(err, context.Canceled) {
				ferr = fmt.Errorf("fetching %s/%d: %w", t, p, err)
			}
		})
		if ferr != nil {
			return ferr
		}
		// Every commitEvery-th record is committed as it is reached, as the
		// kafka-go clients commit theirs (one partition's offset, waiting
		// for the answer): committing once per poll instead would commit a
		// few dozen times per million records where they commit a thousand.
		var cerr error
		fs.EachRecord(func(r *kgo.Record) {
			if cerr != nil {
				return
			}
			deliver(r.Partition, r.Offset, len(r.Value))
			n++
			if c.commitEvery > 0 && n == c.commitEvery {
				n = 0
				cerr = c.cl.CommitRecords(ctx, r)
			}
		})
		if cerr != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("commit: %w", cerr)
		}
	}
}

func (c *consumer) Close() error     { c.cl.Close(); return nil }
func (c *consumer) Settings() string { return "kgo defaults + " + c.settings }
