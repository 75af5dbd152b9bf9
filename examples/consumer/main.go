// Command consumer reads one partition with a kafka.Reader (no consumer
// group): it first appends -n messages to partition 0 of its topic, so that
// it runs on its own, then reads them back from where they start and checks
// they arrive in order.
//
//	go run ./examples/consumer -n 100
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	kafka "github.com/segmentio/kafka-go"
)

func main() {
	brokers := flag.String("brokers", envOr("KAFKA_BROKERS", "127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094"), "comma-separated broker addresses")
	topic := flag.String("topic", "example-consumer", "topic to read (created if missing)")
	n := flag.Int("n", 100, "number of messages to write, then read back")
	flag.Parse()

	// Readers retry and wait for new data forever; the deadline is what
	// makes this program exit when the messages do not come.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := run(ctx, strings.Split(*brokers, ","), *topic, *n); err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, brokers []string, topic string, n int) error {
	start, sent, err := seed(ctx, brokers, topic, n)
	if err != nil {
		return err
	}

	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:   brokers,
		Topic:     topic,
		Partition: 0,
		// A broker holds a fetch on an empty partition for up to MaxWait;
		// keep it short so the reader notices ctx ending promptly.
		MaxWait: 500 * time.Millisecond,
	})
	defer r.Close()
	// A partition reader starts at the first offset; skip what earlier
	// runs left in the partition.
	if err := r.SetOffset(start); err != nil {
		return err
	}

	for i := range n {
		m, err := r.ReadMessage(ctx) // without GroupID nothing is committed
		if err != nil {
			return fmt.Errorf("read %d of %d messages: %w", i, n, err)
		}
		if m.Offset != start+int64(i) || !bytes.Equal(m.Value, sent[i].Value) {
			return fmt.Errorf("offset %d: got %q, want %q at offset %d", m.Offset, m.Value, sent[i].Value, start+int64(i))
		}
		if i < 3 || i == n-1 {
			fmt.Printf("partition %d offset %d: %s = %s\n", m.Partition, m.Offset, m.Key, m.Value)
		}
	}
	fmt.Printf("read back %d messages from %s partition 0, offsets %d to %d\n", n, topic, start, start+int64(n)-1)
	return nil
}

// seed creates the topic if needed and appends n messages to its partition
// 0 through a connection to that partition's leader. It returns the offset
// of the first one and the messages.
func seed(ctx context.Context, brokers []string, topic string, n int) (int64, []kafka.Message, error) {
	client := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second}
	resp, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{
		Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: 3, ReplicationFactor: 1}},
	})
	if err == nil {
		if err = resp.Errors[topic]; errors.Is(err, kafka.TopicAlreadyExists) {
			err = nil
		}
	}
	if err != nil {
		return 0, nil, fmt.Errorf("creating topic %s: %w", topic, err)
	}

	conn, err := kafka.DialLeader(ctx, "tcp", brokers[0], topic, 0)
	if err != nil {
		return 0, nil, fmt.Errorf("connecting to the leader of %s/0: %w", topic, err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second)) // a Conn has no ctx
	start, err := conn.ReadLastOffset()
	if err != nil {
		return 0, nil, fmt.Errorf("reading the end offset of %s/0: %w", topic, err)
	}
	stamp := time.Now().Format(time.RFC3339Nano) // tells this run's messages apart
	msgs := make([]kafka.Message, n)
	for i := range msgs {
		msgs[i] = kafka.Message{Key: fmt.Appendf(nil, "key-%d", i), Value: fmt.Appendf(nil, "message %d of run %s", i, stamp)}
	}
	if _, err := conn.WriteMessages(msgs...); err != nil {
		return 0, nil, fmt.Errorf("writing to %s/0: %w", topic, err)
	}
	return start, msgs, nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
