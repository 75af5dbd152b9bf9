package kafka_test

import (
	"context"
	"errors"
	"log"
	"time"

	kafka "github.com/segmentio/kafka-go"
)

func ExampleWriter() {
	w := &kafka.Writer{
		Addr:         kafka.TCP("localhost:9092", "localhost:9093", "localhost:9094"),
		Topic:        "page-views",
		Balancer:     &kafka.LeastBytes{},
		RequiredAcks: kafka.RequireAll,
	}
	defer w.Close()

	err := w.WriteMessages(context.Background(),
		kafka.Message{Key: []byte("visitor-81"), Value: []byte("/pricing")},
		kafka.Message{Key: []byte("visitor-12"), Value: []byte("/docs/start")},
	)
	if err != nil {
		log.Fatal("failed to write messages:", err)
	}
}

// A producer that may outrun the cluster: with MaxBufferedBatches the
// writer holds at most partitions × (4 + 2) × BatchBytes of messages, and
// WriteMessages waits for room instead of letting memory grow. The context
// bounds that wait; messages it refused were not written and can be sent
// again without duplicates.
func ExampleWriter_backpressure() {
	w := &kafka.Writer{
		Addr:               kafka.TCP("localhost:9092"),
		Topic:              "events",
		Async:              true,
		RequiredAcks:       kafka.RequireAll, // space is freed when the brokers acknowledge
		MaxBufferedBatches: 4,
		MaxBufferedBytes:   64 << 20, // and never more than 64 MiB in total
		Completion: func(msgs []kafka.Message, err error) {
			if err != nil {
				log.Printf("%d messages failed: %v", len(msgs), err)
			}
		},
	}
	defer w.Close()

	msgs := []kafka.Message{{Value: []byte("one")}, {Value: []byte("two")}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	err := w.WriteMessages(ctx, msgs...)
	var refused *kafka.NotAcceptedError
	if errors.As(err, &refused) {
		for i, e := range refused.Errors {
			if errors.Is(e, kafka.ErrNotAccepted) {
				log.Printf("message %d was not accepted (%v); retry it later", i, refused.Err)
			}
		}
	}
}

// Flush sends the partial batches without waiting for BatchTimeout, and
// returns once everything written before it is acknowledged (with
// RequireNone, the default, once it is written to the connection).
func ExampleWriter_Flush() {
	w := &kafka.Writer{
		Addr:         kafka.TCP("localhost:9092"),
		Topic:        "events",
		Async:        true,
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: time.Minute,
	}
	defer w.Close()

	if err := w.WriteMessages(context.Background(), kafka.Message{Value: []byte("checkpoint")}); err != nil {
		log.Fatal(err)
	}
	if err := w.Flush(context.Background()); err != nil {
		log.Fatal(err)
	}
}

// Watching the bound: log the buffer gauges and the waits for space at an
// interval (Stats resets its counters and summaries at each call).
func ExampleWriter_Stats() {
	w := &kafka.Writer{
		Addr:             kafka.TCP("localhost:9092"),
		Topic:            "events",
		Async:            true,
		RequiredAcks:     kafka.RequireAll,
		MaxBufferedBytes: 64 << 20,
	}
	defer w.Close()

	done := make(chan struct{})
	defer close(done)
	go func() {
		tick := time.NewTicker(10 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				s := w.Stats()
				log.Printf("kafka writer: %d of %d bytes buffered in %d batches; %d waits for space (avg %v, max %v); %d errors, %d retries",
					s.BufferedBytes, s.MaxBufferedBytes, s.BufferedBatches,
					s.BufferWaits, s.BufferWaitTime.Avg, s.BufferWaitTime.Max, s.Errors, s.Retries)
			}
		}
	}()

	// Write as usual; WriteMessages waits while 64 MiB are held.
	_ = w.WriteMessages(context.Background(), kafka.Message{Value: []byte("event")})
}
