// Command upstream is a consumer group member built with upstream
// segmentio/kafka-go v0.4.51 (this module does not replace it with the
// fork), for the mixed-group tests of itest/rdmock: it reads topic as a
// member of group and prints every message as a JSON line, until it is
// interrupted. Its Reader's log goes to stderr, which tells whether it led
// the group ("balancer to assign group").
package main

import (
	"context"
	"encoding/json"
	"flag"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	kafka "github.com/segmentio/kafka-go"
)

type record struct {
	Partition int         `json:"partition"`
	Offset    int64       `json:"offset"`
	Key       []byte      `json:"key"`
	Value     []byte      `json:"value"`
	Headers   [][2][]byte `json:"headers"`
}

func main() {
	brokers := flag.String("brokers", "", "comma-separated broker addresses")
	group := flag.String("group", "", "consumer group")
	topic := flag.String("topic", "", "topic to read")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := log.New(os.Stderr, "upstream: ", log.Lmicroseconds)
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:           strings.Split(*brokers, ","),
		GroupID:           *group,
		Topic:             *topic,
		MaxWait:           100 * time.Millisecond,
		HeartbeatInterval: 500 * time.Millisecond,
		SessionTimeout:    10 * time.Second,
		RebalanceTimeout:  10 * time.Second,
		JoinGroupBackoff:  200 * time.Millisecond,
		Logger:            logger,
		ErrorLogger:       logger,
	})
	enc := json.NewEncoder(os.Stdout)
	for {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			break
		}
		rec := record{Partition: m.Partition, Offset: m.Offset, Key: m.Key, Value: m.Value}
		for _, h := range m.Headers {
			rec.Headers = append(rec.Headers, [2][]byte{[]byte(h.Key), h.Value})
		}
		if err := enc.Encode(rec); err != nil {
			break
		}
	}
	r.Close()
}
