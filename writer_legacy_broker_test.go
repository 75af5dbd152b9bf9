package kafka

import (
	"errors"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/protocol"
)

// TestWriterRefusesBrokerWithoutRecordBatches: the Writer sends its
// messages as v2 record batches (Produce v3 and later); to a broker that
// only speaks Produce v0-2 (magic 0/1 message sets), WriteMessages returns
// an error that says so, sends no Produce request, and does not hang.
func TestWriterRefusesBrokerWithoutRecordBatches(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.AddTopics("t")
	fc.Brokers[0].SetApiKey(protocol.Produce, 0, 2)
	fc.SetHandler(func(r *fakebroker.Request) {})
	w := &Writer{Addr: fc.Addr(), Topic: "t", Transport: tpNewTransport(t), BatchTimeout: time.Millisecond,
		RequiredAcks: RequireOne, WriteBackoffMin: time.Millisecond, WriteBackoffMax: time.Millisecond, MaxAttempts: 3}
	defer w.Close()
	err := w.WriteMessages(testContext(t), Message{Key: []byte("k"), Value: []byte("v")},
		Message{Value: []byte("w"), Headers: []Header{{Key: "h", Value: []byte("x")}}})
	var werr WriteErrors
	if !errors.As(err, &werr) || len(werr) != 2 || !errors.Is(werr[0], protocol.ErrNoVersionOverlap) || !errors.Is(werr[1], protocol.ErrNoVersionOverlap) {
		t.Fatalf("WriteMessages to a Produce v0-2 broker: %v, want an error wrapping ErrNoVersionOverlap", err)
	}
	if n := len(fc.Requests(protocol.Produce)); n != 0 {
		t.Fatalf("%d Produce requests reached the broker", n)
	}
}
