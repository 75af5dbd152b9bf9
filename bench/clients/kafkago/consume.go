package kafkago

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	kafka "github.com/segmentio/kafka-go"

	"github.com/segmentio/kafka-go/bench/clients/loadgen"
)

// groupCommitInterval is the periodic commit of the ReadMessage group
// case: with the default of 0 every ReadMessage would wait for a commit
// round trip, which no throughput-minded program does.
const groupCommitInterval = time.Second

// Consumer implements loadgen.ConsumerClient with Readers left at their
// defaults (QueueCapacity 100, MinBytes 1, MaxBytes 1 MB, MaxWait 10s)
// except what the scenario needs.
func (Client) Consumer(cfg loadgen.Config) (loadgen.Consumer, error) {
	switch cfg.Scenario {
	case loadgen.ConsumePartition:
		c := &partitionConsumer{}
		for p := 0; p < cfg.Partitions; p++ {
			c.readers = append(c.readers, kafka.NewReader(kafka.ReaderConfig{
				Brokers:   cfg.Brokers,
				Topic:     cfg.Topic,
				Partition: p,
			}))
		}
		return c, nil
	case loadgen.ConsumeGroupRead:
		return &groupConsumer{r: kafka.NewReader(kafka.ReaderConfig{
			Brokers:        cfg.Brokers,
			GroupID:        cfg.Group,
			Topic:          cfg.Topic,
			CommitInterval: groupCommitInterval,
		})}, nil
	case loadgen.ConsumeGroupCommit:
		return &groupConsumer{commitEvery: cfg.CommitEvery, r: kafka.NewReader(kafka.ReaderConfig{
			Brokers: cfg.Brokers,
			GroupID: cfg.Group,
			Topic:   cfg.Topic,
		})}, nil
	}
	return nil, fmt.Errorf("unknown consumer scenario %q", cfg.Scenario)
}

// partitionConsumer reads each partition with a Reader of its own, one
// goroutine per Reader calling ReadMessage.
type partitionConsumer struct {
	readers []*kafka.Reader
}

func (c *partitionConsumer) Run(ctx context.Context, deliver loadgen.Delivery) error {
	errs := make(chan error, len(c.readers))
	var wg sync.WaitGroup
	for _, r := range c.readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				m, err := r.ReadMessage(ctx)
				if err != nil {
					if ctx.Err() == nil {
						errs <- err
					}
					return
				}
				deliver(int32(m.Partition), m.Offset, len(m.Value))
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs // nil when every Reader stopped with ctx
}

func (c *partitionConsumer) Close() error {
	var errs []error
	for _, r := range c.readers {
		errs = append(errs, r.Close())
	}
	return errors.Join(errs...)
}

func (c *partitionConsumer) Settings() string {
	return "one Reader per partition (Partition set, QueueCapacity 100, MinBytes 1, MaxBytes 1 MB: defaults), a goroutine each calling ReadMessage"
}

// groupConsumer is a group member. Without commitEvery it calls
// ReadMessage (commits queued, sent every second); with it, FetchMessage,
// and CommitMessages of the last message every commitEvery messages,
// synchronously (CommitInterval 0).
type groupConsumer struct {
	r           *kafka.Reader
	commitEvery int
}

func (c *groupConsumer) Run(ctx context.Context, deliver loadgen.Delivery) error {
	n := 0
	for {
		var m kafka.Message
		var err error
		if c.commitEvery == 0 {
			m, err = c.r.ReadMessage(ctx)
		} else {
			m, err = c.r.FetchMessage(ctx)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		deliver(int32(m.Partition), m.Offset, len(m.Value))
		if n++; c.commitEvery > 0 && n%c.commitEvery == 0 {
			if err := c.r.CommitMessages(ctx, m); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("commit: %w", err)
			}
		}
	}
}

func (c *groupConsumer) Close() error { return c.r.Close() }

func (c *groupConsumer) Settings() string {
	if c.commitEvery == 0 {
		return fmt.Sprintf("group Reader (GroupID, CommitInterval %s, other fields default), ReadMessage", groupCommitInterval)
	}
	return fmt.Sprintf("group Reader (GroupID, CommitInterval 0: synchronous commits, other fields default), FetchMessage, CommitMessages of the last message every %d", c.commitEvery)
}
