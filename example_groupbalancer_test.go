package kafka_test

import (
	"context"
	"os"

	"github.com/segmentio/kafka-go"
)

// A group reader that prefers partitions led by brokers in its own rack
// (availability zone), taken here from an environment variable; members
// without a common rack-aware balancer fall back to range.
func ExampleNewReader_rackAffinity() {
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: []string{"broker-a:9092", "broker-b:9092"},
		GroupID: "billing",
		Topic:   "invoices",
		// Prefer partitions whose leader is in this machine's rack, and
		// fall back to plain ranges for members that do not support it.
		GroupBalancers: []kafka.GroupBalancer{
			kafka.RackAffinityGroupBalancer{Rack: os.Getenv("KAFKA_CLIENT_RACK")},
			kafka.RangeGroupBalancer{},
		},
	})
	defer r.Close()

	for {
		msg, err := r.ReadMessage(context.Background())
		if err != nil {
			return
		}
		_ = msg // process the message
	}
}
