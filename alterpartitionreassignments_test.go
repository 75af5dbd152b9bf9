package kafka

import (
	"errors"
	"sort"
	"testing"
	"time"
)

func TestClientAlterPartitionReassignments(t *testing.T) {
	client, _ := integrationClient(t)
	ctx := testContext(t)
	topic := adminTopic(t, client, 2)
	meta, err := client.Metadata(ctx, &MetadataRequest{Topics: []string{topic}})
	if err != nil || len(meta.Topics) != 1 || len(meta.Topics[0].Partitions) != 2 {
		t.Fatalf("Metadata: %+v, %v", meta, err)
	}
	leader := meta.Topics[0].Partitions[0].Leader.ID

	res, err := client.AlterPartitionReassignments(ctx, &AlterPartitionReassignmentsRequest{
		Topic: topic,
		Assignments: []AlterPartitionReassignmentsRequestAssignment{
			{PartitionID: 0, BrokerIDs: []int{leader}},
			// Nil brokers cancel a reassignment, and there is none.
			{PartitionID: 1},
			{Topic: topic + "-missing", PartitionID: 0, BrokerIDs: []int{leader}},
		},
		Timeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Error != nil {
		t.Fatalf("AlterPartitionReassignments: %v", res.Error)
	}
	results := res.PartitionResults
	sort.Slice(results, func(i, j int) bool {
		if results[i].Topic != results[j].Topic {
			return results[i].Topic < results[j].Topic
		}
		return results[i].PartitionID < results[j].PartitionID
	})
	if len(results) != 3 {
		t.Fatalf("AlterPartitionReassignments results %+v", results)
	}
	if r := results[0]; r.Topic != topic || r.PartitionID != 0 || r.Error != nil {
		t.Errorf("reassigning partition 0: %+v", r)
	}
	if r := results[1]; r.Topic != topic || r.PartitionID != 1 || !errors.Is(r.Error, NoReassignmentInProgress) {
		t.Errorf("cancelling the reassignment of partition 1: %+v, want NoReassignmentInProgress", r)
	}
	if r := results[2]; r.Topic != topic+"-missing" || !errors.Is(r.Error, UnknownTopicOrPartition) {
		t.Errorf("reassigning a missing topic: %+v, want UnknownTopicOrPartition", r)
	}

	list, err := client.ListPartitionReassignments(ctx, &ListPartitionReassignmentsRequest{
		Topics:  map[string]ListPartitionReassignmentsRequestTopic{topic: {PartitionIndexes: []int{0, 1}}},
		Timeout: 5 * time.Second,
	})
	if err != nil || list.Error != nil {
		t.Fatalf("ListPartitionReassignments: %+v, %v", list, err)
	}
	// A reassignment to the current replicas completes at once: nothing
	// is in progress.
	if len(list.Topics) != 0 {
		t.Errorf("reassignments in progress: %+v", list.Topics)
	}
}
