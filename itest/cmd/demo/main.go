// Command demo is a short end-to-end run against a Kafka cluster (by
// default the embedded one from `make cluster`): it creates a topic, writes
// records to every partition with this module's kafka.Client and reads them
// back with an independent client (franz-go) to show they arrived intact.
//
//	KAFKA_BROKERS=127.0.0.1:9092 go run ./cmd/demo   # from itest/
//
// `make example` runs it when the repository has no examples/ yet.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	kafka "github.com/segmentio/kafka-go"
)

func main() {
	brokers := flag.String("brokers", envOr("KAFKA_BROKERS", "127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094"), "comma-separated broker addresses")
	perPartition := flag.Int("n", 10, "records to write to each partition")
	flag.Parse()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, strings.Split(*brokers, ","), *perPartition); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, brokers []string, perPartition int) error {
	client := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second}
	topic := fmt.Sprintf("demo-%d", time.Now().UnixNano())

	created, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{
		Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: 3, ReplicationFactor: 1}},
	})
	if err != nil {
		return fmt.Errorf("create topic: %w", err)
	}
	if err := created.Errors[topic]; err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}

	meta, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	if len(meta.Topics) != 1 || len(meta.Topics[0].Partitions) == 0 {
		return fmt.Errorf("metadata for %s: %+v", topic, meta.Topics)
	}
	fmt.Printf("cluster %q: %d brokers; topic %s has %d partitions\n",
		meta.ClusterID, len(meta.Brokers), topic, len(meta.Topics[0].Partitions))

	want := map[string]string{}
	for _, p := range meta.Topics[0].Partitions {
		records := make([]kafka.Record, perPartition)
		for i := range records {
			k, v := fmt.Sprintf("p%d-k%d", p.ID, i), fmt.Sprintf("value %d of partition %d", i, p.ID)
			records[i] = kafka.Record{Key: kafka.NewBytes([]byte(k)), Value: kafka.NewBytes([]byte(v))}
			want[k] = v
		}
		res, err := client.Produce(ctx, &kafka.ProduceRequest{
			Topic:        topic,
			Partition:    p.ID,
			RequiredAcks: kafka.RequireAll,
			Records:      kafka.NewRecordReader(records...),
		})
		if err == nil && res.Error != nil {
			err = res.Error
		}
		if err != nil {
			return fmt.Errorf("produce to partition %d: %w", p.ID, err)
		}
		fmt.Printf("kafka.Client produced %d records to partition %d (leader %s:%d) at offset %d\n",
			len(records), p.ID, p.Leader.Host, p.Leader.Port, res.BaseOffset)
	}

	// TODO(demo): read back with kafka.Reader once the root module has one;
	// franz-go keeps the check independent of the code under test meanwhile.
	consumer, err := kgo.NewClient(
		kgo.SeedBrokers(brokers...),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	)
	if err != nil {
		return err
	}
	defer consumer.Close()
	got := 0
	for got < len(want) {
		fetches := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("read %d of %d records: %w", got, len(want), err)
		}
		var ferr error
		fetches.EachError(func(t string, p int32, err error) { ferr = errors.Join(ferr, fmt.Errorf("%s/%d: %w", t, p, err)) })
		if ferr != nil {
			return ferr
		}
		for _, r := range fetches.Records() {
			if exp, ok := want[string(r.Key)]; !ok || exp != string(r.Value) {
				return fmt.Errorf("unexpected record %q=%q on partition %d", r.Key, r.Value, r.Partition)
			}
			got++
		}
	}
	fmt.Printf("read back all %d records intact\n", got)
	return nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
