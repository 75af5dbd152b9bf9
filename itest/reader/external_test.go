package reader

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/itest/clustertest"
)

func createTopic(ctx context.Context, t *testing.T, cl *kgo.Client, topic string, partitions int32) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, partitions, 1
	req.Topics = append(req.Topics, rt)
	if res, err := req.RequestWith(ctx, cl); err != nil || res.Topics[0].ErrorCode != 0 {
		t.Fatalf("create topic: %v %+v", err, res)
	}
}

// Against the long-running cluster (KAFKA_BROKERS): records written by kgo
// are read back by a partition reader, and by a group of two readers each
// exactly once.
func TestExternalClusterReadBack(t *testing.T) {
	addrs := clustertest.External(t)
	ctx := ctxTimeout(t, 90*time.Second)
	cl := newProducer(t, addrs)
	const n = 50

	topic := clustertest.Topic(t)
	createTopic(ctx, t, cl, topic, 3)
	produce(t, cl, topic, 3, n)
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: topic, Partition: 1, MaxWait: 200 * time.Millisecond})
	for i := 0; i < n; i++ {
		m, err := r.FetchMessage(ctx)
		if err != nil || m.Offset != int64(i) || string(m.Key) != fmt.Sprintf("p1-%d", i) {
			t.Fatalf("partition reader: %+v %v", m, err)
		}
	}
	r.Close()

	groupTopic := clustertest.Topic(t)
	createTopic(ctx, t, cl, groupTopic, 3)
	group := groupTopic + "-group"
	c := newCollector()
	var wg sync.WaitGroup
	gctx, cancel := context.WithCancel(ctx)
	var readers []*kafka.Reader
	for _, name := range []string{"a", "b"} {
		g := groupReader(addrs, group, groupTopic)
		readers = append(readers, g)
		wg.Add(1)
		go consume(gctx, name, g, c, &wg)
	}
	waitStable(t, cl, group, groupTopic, 2, 3)
	produce(t, cl, groupTopic, 3, n)
	waitDistinct(t, c, 3*n)
	cancel()
	for _, g := range readers {
		g.Close()
	}
	wg.Wait()
	c.checkExactlyOnce(t, 3, 0, n)
	checkNoGoroutines(t)
}
