package kafka_test

import (
	"context"
	"errors"
	"log"

	kafka "github.com/segmentio/kafka-go"
)

// An idempotent Writer: a batch sent again after a lost answer (a dropped
// connection, a leader change) is not appended twice. It needs every
// in-sync replica to acknowledge (RequiredAcks RequireAll, or left at zero),
// and the cluster must let the client call InitProducerId (the
// IDEMPOTENT_WRITE permission).
func ExampleWriter_idempotent() {
	w := &kafka.Writer{
		Addr:               kafka.TCP("localhost:9092"),
		Topic:              "payments",
		RequiredAcks:       kafka.RequireAll,
		Idempotent:         true,
		MaxBufferedBatches: 4,
	}
	defer w.Close()

	err := w.WriteMessages(context.Background(), kafka.Message{Key: []byte("id-1"), Value: []byte("paid")})
	var werr kafka.WriteErrors
	var refused *kafka.IdempotenceError
	switch {
	case err == nil:
		// In the log exactly once.
	case errors.As(err, &werr) && errors.As(werr[0], &refused):
		// The broker refused the batch after an attempt whose outcome is
		// unknown: it may or may not be in the log (never twice).
		log.Printf("outcome unknown: %v", refused)
	default:
		// Failed; after a timeout or lost connections the batch may
		// still be in the log, as without the option, but only once.
		log.Printf("write failed: %v", err)
	}
}
