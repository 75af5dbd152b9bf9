package kafka

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/electleaders"
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

func TestClientElectLeadersRequest(t *testing.T) {
	client, rt := adminFakeClient(func(req protocol.Message) (protocol.Message, error) {
		return &electleaders.Response{ErrorCode: int16(ClusterAuthorizationFailed), ReplicaElectionResults: []electleaders.ResponseReplicaElectionResult{
			{Topic: "t", PartitionResults: []electleaders.ResponsePartitionResult{
				{PartitionID: 1, ErrorCode: int16(PreferredLeaderNotAvailable), ErrorMessage: "replica offline"},
				{PartitionID: 2},
			}},
		}}, nil
	})
	res, err := client.ElectLeaders(context.Background(), &ElectLeadersRequest{Topic: "t", Partitions: []int{1, 2}, Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	want := &electleaders.Request{TimeoutMs: 3000, TopicPartitions: []electleaders.RequestTopicPartitions{{Topic: "t", PartitionIDs: []int32{1, 2}}}}
	if !reflect.DeepEqual(rt.sent[0], want) {
		t.Errorf("sent %+v, want %+v", rt.sent[0], want)
	}
	if !errors.Is(res.Error, ClusterAuthorizationFailed) || len(res.PartitionResults) != 2 {
		t.Fatalf("answer %+v", res)
	}
	if r := res.PartitionResults[0]; r.Partition != 1 || !errors.Is(r.Error, PreferredLeaderNotAvailable) || !strings.Contains(r.Error.Error(), "replica offline") {
		t.Errorf("partition 1: %+v", r)
	}
	if r := res.PartitionResults[1]; r.Partition != 2 || r.Error != nil {
		t.Errorf("partition 2: %+v", r)
	}

	// No partitions still names the topic, with an empty (not null, which
	// would mean every partition of the cluster) list.
	if _, err := client.ElectLeaders(context.Background(), &ElectLeadersRequest{Topic: "t"}); err != nil {
		t.Fatal(err)
	}
	if got := rt.sent[1].(*electleaders.Request).TopicPartitions; len(got) != 1 || got[0].PartitionIDs == nil {
		t.Errorf("sent %+v", got)
	}
}
