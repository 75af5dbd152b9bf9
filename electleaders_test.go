package kafka

import (
	"errors"
	"sort"
	"testing"
	"time"
)

func TestClientElectLeaders(t *testing.T) {
	client := adminClient(t)
	ctx := adminContext(t)
	topic := adminTopic(t, client, 3)

	res, err := client.ElectLeaders(ctx, &ElectLeadersRequest{Topic: topic, Partitions: []int{0, 2, 99}, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Error != nil {
		t.Fatalf("ElectLeaders: %v", res.Error)
	}
	results := res.PartitionResults
	sort.Slice(results, func(i, j int) bool { return results[i].Partition < results[j].Partition })
	if len(results) != 3 || results[0].Partition != 0 || results[1].Partition != 2 || results[2].Partition != 99 {
		t.Fatalf("ElectLeaders results %+v, want partitions 0, 2 and 99", results)
	}
	for _, r := range results[:2] {
		// Brokers answer ElectionNotNeeded when the preferred replica
		// already leads.
		if r.Error != nil && !errors.Is(r.Error, ElectionNotNeeded) {
			t.Errorf("electing the leader of partition %d: %v", r.Partition, r.Error)
		}
	}
	if !errors.Is(results[2].Error, UnknownTopicOrPartition) {
		t.Errorf("electing the leader of a missing partition: %v, want UnknownTopicOrPartition", results[2].Error)
	}
}
