// Command producer writes -n messages with a synchronous kafka.Writer whose
// buffer is bounded (MaxBufferedBatches, MaxBufferedBytes), tells refused
// messages apart from failed ones, and prints the writer's buffer gauges.
//
//	go run ./examples/producer -n 1000
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	kafka "github.com/segmentio/kafka-go"
)

func main() {
	brokers := flag.String("brokers", envOr("KAFKA_BROKERS", "127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094"), "comma-separated broker addresses")
	topic := flag.String("topic", "example-producer", "topic to write to (created if missing)")
	n := flag.Int("n", 1000, "number of messages to write")
	chunk := flag.Int("chunk", 100, "messages per WriteMessages call")
	callTimeout := flag.Duration("call-timeout", 10*time.Second, "deadline of each WriteMessages call")
	flag.Parse()

	// One deadline for the whole program: it must never hang, even when
	// the brokers are unreachable.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, strings.Split(*brokers, ","), *topic, *n, max(*chunk, 1), *callTimeout); err != nil {
		fmt.Fprintln(os.Stderr, "producer:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, brokers []string, topic string, n, chunk int, callTimeout time.Duration) error {
	if err := createTopic(ctx, brokers, topic); err != nil {
		return err
	}
	w := &kafka.Writer{
		Addr:         kafka.TCP(brokers...),
		Topic:        topic,
		RequiredAcks: kafka.RequireAll,
		// A lone synchronous caller spreads each call over all partitions,
		// so batches rarely reach BatchSize: do not wait long for company.
		BatchTimeout: 10 * time.Millisecond,
		// Bound the memory the writer may hold: at most 4+2 batches per
		// partition in total, and 8 MiB of messages overall. When either
		// is reached WriteMessages waits (up to its ctx) instead of growing.
		MaxBufferedBatches: 4,
		MaxBufferedBytes:   8 << 20,
	}
	defer w.Close()

	pending := make([]kafka.Message, 0, n)
	for i := range n {
		pending = append(pending, kafka.Message{Key: fmt.Appendf(nil, "key-%d", i), Value: fmt.Appendf(nil, "message %d", i)})
	}
	written := 0
	for attempt := 1; len(pending) > 0; attempt++ {
		if attempt > 3 {
			return fmt.Errorf("%d messages still not accepted after 3 attempts", len(pending))
		}
		var retry []kafka.Message
		for start := 0; start < len(pending); start += chunk {
			msgs := pending[start:min(start+chunk, len(pending))]
			// A per-call deadline bounds both the wait for buffer space and
			// the wait for the brokers' acknowledgements.
			callCtx, cancel := context.WithTimeout(ctx, callTimeout)
			err := w.WriteMessages(callCtx, msgs...)
			cancel()

			var refused *kafka.NotAcceptedError
			switch {
			case err == nil:
				written += len(msgs)
			case errors.As(err, &refused):
				// The call gave up waiting for buffer space. Entries wrapping
				// ErrNotAccepted were never buffered, so writing them again
				// cannot duplicate them; the others were taken normally.
				fmt.Printf("attempt %d: %v\n", attempt, refused)
				for i, e := range refused.Errors {
					switch {
					case errors.Is(e, kafka.ErrNotAccepted):
						retry = append(retry, msgs[i])
					case e == nil:
						written++
					default: // accepted, then failed or still unconfirmed
						return fmt.Errorf("message %q accepted but not confirmed written: %w", msgs[i].Key, e)
					}
				}
			default:
				// WriteErrors (per-message failures after MaxAttempts), a
				// ctx ending after the messages were accepted (they may still
				// land, so a retry could duplicate them), a validation error:
				// none of these is safe to retry blindly.
				return fmt.Errorf("writing to %s: %w", topic, err)
			}
		}
		pending = retry
	}

	// Counters cover the whole run (this is the first call to Stats);
	// BufferedBatches and BufferedBytes are gauges, zero once all is written.
	s := w.Stats()
	fmt.Printf("wrote %d messages to %s in %d produce requests\n", written, topic, s.Writes)
	fmt.Printf("buffer now: %d batches, %d bytes (limits: %d batches per partition, %d bytes)\n",
		s.BufferedBatches, s.BufferedBytes, s.MaxBufferedBatches, s.MaxBufferedBytes)
	fmt.Printf("waits for buffer space: %d, total %v, longest %v\n",
		s.BufferWaits, s.BufferWaitTime.Sum, s.BufferWaitTime.Max)
	return nil
}

// createTopic creates topic with 3 partitions; an existing one is fine.
func createTopic(ctx context.Context, brokers []string, topic string) error {
	client := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second}
	resp, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{
		Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: 3, ReplicationFactor: 1}},
	})
	if err != nil {
		return fmt.Errorf("creating topic %s: %w", topic, err)
	}
	if err := resp.Errors[topic]; err != nil && !errors.Is(err, kafka.TopicAlreadyExists) {
		return fmt.Errorf("creating topic %s: %w", topic, err)
	}
	return nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
