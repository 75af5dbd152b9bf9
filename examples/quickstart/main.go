// Command quickstart writes three messages with a Writer whose memory is
// bounded, then prints what its Stats say about the buffer.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	kafka "github.com/segmentio/kafka-go"
)

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	brokers := "localhost:9092"
	if env := os.Getenv("KAFKA_BROKERS"); env != "" {
		brokers = env
	}
	w := &kafka.Writer{
		Addr:                   kafka.TCP(strings.Split(brokers, ",")...),
		Topic:                  "quickstart",
		AllowAutoTopicCreation: true,
		RequiredAcks:           kafka.RequireAll, // the bound follows the brokers' acknowledgements
		MaxBufferedBytes:       64 << 20,         // the one new field: at most 64 MiB of messages held
	}
	defer w.Close()

	// The deadline bounds the whole call: the wait for buffer space, if
	// any, and the wait for the brokers.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := w.WriteMessages(ctx,
		kafka.Message{Key: []byte("a"), Value: []byte("one")},
		kafka.Message{Key: []byte("b"), Value: []byte("two")},
		kafka.Message{Key: []byte("c"), Value: []byte("three")},
	)
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	s := w.Stats()
	fmt.Printf("wrote %d messages; buffered now %d bytes in %d batches (bound %d bytes); %d waits for space\n",
		s.Messages, s.BufferedBytes, s.BufferedBatches, s.MaxBufferedBytes, s.BufferWaits)
	return nil
}
