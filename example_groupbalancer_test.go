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
		Brokers: []string{"kafka:9092"},
		GroupID: "my-group",
		Topic:   "my-topic",
		GroupBalancers: []kafka.GroupBalancer{
			kafka.RackAffinityGroupBalancer{Rack: os.Getenv("RACK")},
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
