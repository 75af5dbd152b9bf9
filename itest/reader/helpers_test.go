// Package reader tests kafka.Reader and kafka.ConsumerGroup against
// in-process kfake clusters, with franz-go (kgo) as the independent client
// that writes the records and joins the groups.
package reader

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/segmentio/kafka-go/itest/clustertest"
)

// startCluster starts an in-process cluster with topic created with
// partitions partitions.
func startCluster(t *testing.T, topic string, partitions int, opts ...kfake.Opt) ([]string, *kfake.Cluster) {
	t.Helper()
	return clustertest.Start(t, append([]kfake.Opt{kfake.SeedTopics(int32(partitions), topic)}, opts...)...)
}

func newProducer(t *testing.T, addrs []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(addrs...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// record is what the tests write: key "p<partition>-<i>", value "v<i>".
func record(topic string, partition, i int) *kgo.Record {
	return &kgo.Record{
		Topic:     topic,
		Partition: int32(partition),
		Key:       []byte(fmt.Sprintf("p%d-%d", partition, i)),
		Value:     []byte(fmt.Sprintf("v%d", i)),
		Headers:   []kgo.RecordHeader{{Key: "h", Value: []byte(fmt.Sprint(i))}},
	}
}

// produce writes n records to each of partitions partitions of topic, in
// batches of batch records.
func produce(t *testing.T, cl *kgo.Client, topic string, partitions, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for p := 0; p < partitions; p++ {
		for i := 0; i < n; i++ {
			recs = append(recs, record(topic, p, i))
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// kafkaGoroutines lists the goroutines running code of the package under
// test (not of kfake, kgo or the test itself).
func kafkaGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var found []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "github.com/segmentio/kafka-go.") || strings.Contains(g, "github.com/segmentio/kafka-go/protocol") {
			if !strings.Contains(g, "testing.tRunner") {
				found = append(found, g)
			}
		}
	}
	return found
}

// checkNoGoroutines fails the test if goroutines of the package are still
// running a few seconds after everything was closed.
func checkNoGoroutines(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := kafkaGoroutines()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines left after Close:\n%s", len(left), strings.Join(left, "\n\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
