// Command upstream is the load generator for github.com/segmentio/kafka-go
// v0.4.51 as published: this go.mod has no replace for kafka-go. With
// -semaphore it is also the "application semaphore" case.
package main

import (
	"github.com/segmentio/kafka-go/bench/clients/kafkago"
	"github.com/segmentio/kafka-go/bench/clients/loadgen"
)

func main() {
	loadgen.Main("upstream", kafkago.Client{})
}
