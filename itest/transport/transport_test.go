// Package transport_test checks kafka-go's Transport against an in-process
// kfake cluster whose layout the tests change: partition leaders and group
// coordinators that move, brokers that go away. The transport must follow
// them right away, not after its metadata TTL.
package transport_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol/heartbeat"
	"github.com/segmentio/kafka-go/protocol/offsetcommit"
)

const topic = "moving"

func newCluster(t *testing.T) (*kfake.Cluster, *kafka.Client) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(2, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	// A TTL far longer than the test: only invalidation refreshes.
	tr := &kafka.Transport{MetadataTTL: time.Hour}
	t.Cleanup(tr.CloseIdleConnections)
	return c, &kafka.Client{Addr: kafka.TCP(c.ListenAddrs()...), Transport: tr, Timeout: 10 * time.Second}
}

func produce(ctx context.Context, client *kafka.Client, partition int) (*kafka.ProduceResponse, error) {
	return client.Produce(ctx, &kafka.ProduceRequest{
		Topic: topic, Partition: partition, RequiredAcks: kafka.RequireAll,
		Records: kafka.NewRecordReader(kafka.Record{Value: kafka.NewBytes([]byte("v"))}),
	})
}

func otherNode(c *kfake.Cluster, than int32) int32 {
	for _, addr := range []int32{0, 1, 2} {
		if addr != than {
			return addr
		}
	}
	return -1
}

func TestTransportFollowsMovedLeader(t *testing.T) {
	c, client := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	if res, err := produce(ctx, client, 0); err != nil || res.Error != nil {
		t.Fatalf("first produce: %+v, %v", res, err)
	}
	old := c.LeaderFor(topic, 0)
	moved := otherNode(c, old)
	if err := c.MoveTopicPartition(topic, 0, moved); err != nil {
		t.Fatal(err)
	}

	// The old leader refuses the next record; the one after goes to the
	// new leader, long before the metadata TTL.
	res, err := produce(ctx, client, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Error != nil && !errors.Is(res.Error, kafka.NotLeaderForPartition) {
		t.Fatalf("produce to the old leader: %v", res.Error)
	}
	if res.Error == nil {
		t.Log("the transport learned of the move before sending")
	}
	res, err = produce(ctx, client, 0)
	if err != nil || res.Error != nil {
		t.Fatalf("produce after the move: %+v, %v", res, err)
	}

	// The layout the transport serves from its cache shows the new leader.
	meta, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		t.Fatal(err)
	}
	if got := meta.Topics[0].Partitions[0].Leader.ID; int32(got) != moved {
		t.Fatalf("cached leader of partition 0 is %d, want %d", got, moved)
	}
}

func TestTransportFollowsMovedCoordinator(t *testing.T) {
	c, client := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const group = "moving-group"

	commit := func() int16 {
		t.Helper()
		m, err := client.Transport.RoundTrip(ctx, client.Addr, &offsetcommit.Request{
			GroupID: group, GenerationID: -1,
			Topics: []offsetcommit.RequestTopic{{Name: topic, Partitions: []offsetcommit.RequestPartition{{PartitionIndex: 0, CommittedOffset: 1, CommittedLeaderEpoch: -1}}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return m.(*offsetcommit.Response).Topics[0].Partitions[0].ErrorCode
	}
	if code := commit(); code != 0 {
		t.Fatalf("commit: %v", kafka.Error(code))
	}
	// Move coordinators until this group's lands on another broker.
	before := c.CoordinatorFor(group)
	for i := 0; i < 50 && c.CoordinatorFor(group) == before; i++ {
		c.RehashCoordinators()
	}
	if c.CoordinatorFor(group) == before {
		t.Skip("kfake kept the coordinator in place")
	}
	code := commit()
	if code != 0 && kafka.Error(code) != kafka.NotCoordinatorForGroup {
		t.Fatalf("commit to the old coordinator: %v", kafka.Error(code))
	}
	if code := commit(); code != 0 {
		t.Fatalf("commit after the coordinator moved: %v", kafka.Error(code))
	}
	// Heartbeats (another group request) reach the new coordinator too:
	// kfake answers them with a group error, not NOT_COORDINATOR.
	m, err := client.Transport.RoundTrip(ctx, client.Addr, &heartbeat.Request{GroupID: group, MemberID: "m", GenerationID: 1})
	if err != nil {
		t.Fatal(err)
	}
	if hb := m.(*heartbeat.Response); kafka.Error(hb.ErrorCode) == kafka.NotCoordinatorForGroup {
		t.Fatal("heartbeat sent to a broker that is not the coordinator")
	}
}

func TestTransportSurvivesBrokerRemoval(t *testing.T) {
	c, client := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if res, err := produce(ctx, client, 1); err != nil || res.Error != nil {
		t.Fatalf("first produce: %+v, %v", res, err)
	}
	gone := c.LeaderFor(topic, 1)
	if err := c.RemoveNode(gone); err != nil {
		t.Fatal(err)
	}
	// Partitions were reassigned among the remaining brokers. The
	// transport may fail a request or two (connection to the removed
	// broker), then it must find the new leader by itself.
	var lastErr error
	for i := 0; i < 5; i++ {
		res, err := produce(ctx, client, 1)
		if err == nil && res.Error == nil {
			if now := c.LeaderFor(topic, 1); now == gone {
				t.Fatalf("partition 1 still led by removed node %d", gone)
			}
			return
		}
		if err == nil {
			err = res.Error
		}
		lastErr = err
	}
	t.Fatalf("no produce succeeded after the leader was removed: %v", lastErr)
}
