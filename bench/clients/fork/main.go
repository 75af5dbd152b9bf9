// Command fork is the load generator for this repository's kafka-go (the
// replace directive in go.mod points at the repository root). It is the
// only build that knows the buffer bounds, so it wires them in here.
package main

import (
	kafka "github.com/segmentio/kafka-go"

	"github.com/segmentio/kafka-go/bench/clients/kafkago"
	"github.com/segmentio/kafka-go/bench/clients/loadgen"
)

func main() {
	kafkago.SetBounds = func(w *kafka.Writer, batches int, bytes int64) {
		w.MaxBufferedBatches = batches
		w.MaxBufferedBytes = bytes
	}
	kafkago.StickyBalancer = func() kafka.Balancer { return &kafka.Sticky{} }
	loadgen.Main("fork", kafkago.Client{})
}
