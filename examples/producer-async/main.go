// Command producer-async writes -n messages with an asynchronous
// kafka.Writer: WriteMessages returns once the messages are buffered, a
// Completion callback counts what the brokers acknowledged, and
// MaxBufferedBatches makes WriteMessages wait instead of buffering without
// bound when the program produces faster than the brokers accept.
//
//	go run ./examples/producer-async -n 10000
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	kafka "github.com/segmentio/kafka-go"
)

func main() {
	brokers := flag.String("brokers", envOr("KAFKA_BROKERS", "127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094"), "comma-separated broker addresses")
	topic := flag.String("topic", "example-producer-async", "topic to write to (created if missing)")
	n := flag.Int("n", 10000, "number of messages to write")
	flag.Parse()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, strings.Split(*brokers, ","), *topic, *n); err != nil {
		fmt.Fprintln(os.Stderr, "producer-async:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, brokers []string, topic string, n int) error {
	// The writer creates the topic on first use (if the cluster allows it).
	var acked, failed atomic.Int64
	var firstErr atomic.Pointer[error]
	w := &kafka.Writer{
		Addr:                   kafka.TCP(brokers...),
		Topic:                  topic,
		AllowAutoTopicCreation: true,
		RequiredAcks:           kafka.RequireAll,
		Async:                  true,
		BatchSize:              200,
		BatchTimeout:           20 * time.Millisecond,
		// Without a bound, an async writer buffers everything it is given.
		// With it, each partition holds at most 2 queued batches (plus the
		// one filling and the one in flight) and WriteMessages blocks
		// until a batch is done: memory stays flat however large -n is.
		MaxBufferedBatches: 2,
		// Completion is the only place where async write errors show up. It
		// runs on the writer's goroutines, hence the atomics.
		Completion: func(msgs []kafka.Message, err error) {
			if err != nil {
				failed.Add(int64(len(msgs)))
				firstErr.CompareAndSwap(nil, &err)
				return
			}
			acked.Add(int64(len(msgs)))
		},
	}

	start := time.Now()
	for i := range n {
		msg := kafka.Message{Key: fmt.Appendf(nil, "key-%d", i), Value: fmt.Appendf(nil, "async message %d", i)}
		// Returns as soon as the message is buffered; blocks while the
		// buffer is full. A refusal (*kafka.NotAcceptedError, ctx done while
		// waiting) means the message was not written.
		if err := w.WriteMessages(ctx, msg); err != nil {
			w.Close()
			if errors.Is(err, kafka.ErrNotAccepted) {
				return fmt.Errorf("message %d not accepted, the buffer stayed full: %w", i, err)
			}
			return fmt.Errorf("message %d: %w", i, err)
		}
	}
	s := w.Stats() // read before Flush, while messages may still be buffered

	// Flush sends the partly filled batches now and waits for every
	// buffered message to be acknowledged or to fail, and for the
	// Completion calls reporting them to return; Close then stops the
	// writer.
	if err := w.Flush(ctx); err != nil {
		w.Close()
		return fmt.Errorf("flush: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}

	fmt.Printf("%d messages acknowledged, %d failed, in %v\n", acked.Load(), failed.Load(), time.Since(start).Round(time.Millisecond))
	fmt.Printf("after the last WriteMessages: %d batches, %d bytes buffered; %d waits for space (total %v)\n",
		s.BufferedBatches, s.BufferedBytes, s.BufferWaits, s.BufferWaitTime.Sum)
	if failed.Load() > 0 {
		return fmt.Errorf("%d messages failed, first error: %w", failed.Load(), *firstErr.Load())
	}
	if acked.Load() != int64(n) {
		return fmt.Errorf("%d messages acknowledged, want %d", acked.Load(), n)
	}
	return nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
