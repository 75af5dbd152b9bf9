// Command consumergroup consumes a topic as a member of a consumer group:
// FetchMessage hands out messages, CommitMessages records the group's
// progress once they are processed, so a restarted member (or another one)
// continues after the last committed message. To run on its own, the
// program first writes -n messages to its topic, then reads -n messages.
//
//	go run ./examples/consumergroup -n 300 -group my-group
package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	kafka "github.com/segmentio/kafka-go"
)

func main() {
	brokers := flag.String("brokers", envOr("KAFKA_BROKERS", "127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094"), "comma-separated broker addresses")
	topic := flag.String("topic", "example-consumergroup", "topic to consume (created if missing)")
	group := flag.String("group", "example-consumergroup", "consumer group ID")
	n := flag.Int("n", 300, "number of messages to write, then consume")
	timeout := flag.Duration("timeout", 45*time.Second, "give up after this long")
	flag.Parse()

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := run(ctx, strings.Split(*brokers, ","), *topic, *group, *n); err != nil {
		fmt.Fprintln(os.Stderr, "consumergroup:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, brokers []string, topic, group string, n int) error {
	// Seed the topic. AllowAutoTopicCreation creates it on first use, with
	// the cluster's default partition count.
	w := &kafka.Writer{
		Addr:                   kafka.TCP(brokers...),
		Topic:                  topic,
		AllowAutoTopicCreation: true,
		RequiredAcks:           kafka.RequireAll,
		BatchTimeout:           10 * time.Millisecond,
	}
	msgs := make([]kafka.Message, n)
	for i := range msgs {
		msgs[i] = kafka.Message{Key: fmt.Appendf(nil, "key-%d", i), Value: fmt.Appendf(nil, "group message %d", i)}
	}
	err := w.WriteMessages(ctx, msgs...)
	w.Close()
	if err != nil {
		return fmt.Errorf("seeding %s: %w", topic, err)
	}

	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: brokers,
		Topic:   topic,
		GroupID: group, // a group reader: partitions are assigned, offsets committed
		// A new group starts at the oldest message; a known one resumes
		// after its last commit, so each run reads what the previous left.
		StartOffset: kafka.FirstOffset,
		MaxWait:     500 * time.Millisecond,
		// CommitInterval 0 (the default): CommitMessages returns once the
		// broker has stored the offsets.
	})
	// Close leaves the group, so that the next member gets its partitions
	// without waiting for this one's session to time out.
	defer r.Close()

	first, last := map[int]int64{}, map[int]int64{} // offsets read, per partition
	for i := range n {
		// FetchMessage does not commit; the error is ctx's when the
		// deadline passes before a message arrives.
		m, err := r.FetchMessage(ctx)
		if err != nil {
			return fmt.Errorf("fetched %d of %d messages: %w", i, n, err)
		}
		if _, ok := first[m.Partition]; !ok { // "process" the message
			first[m.Partition] = m.Offset
		}
		last[m.Partition] = m.Offset

		// Commit after processing: if the program dies in between, the
		// message is delivered again (at-least-once). Committing every
		// message is simple; batching commits is cheaper.
		if err := r.CommitMessages(ctx, m); err != nil {
			return fmt.Errorf("committing offset %d of %s/%d: %w", m.Offset, m.Topic, m.Partition, err)
		}
	}
	fmt.Printf("group %s consumed and committed %d messages of %s\n", group, n, topic)
	for _, p := range slices.Sorted(maps.Keys(first)) {
		fmt.Printf("  partition %d: offsets %d to %d\n", p, first[p], last[p])
	}
	return nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
