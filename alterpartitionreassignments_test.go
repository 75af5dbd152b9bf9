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
	"github.com/segmentio/kafka-go/protocol/alterpartitionreassignments"
)

func TestClientAlterPartitionReassignments(t *testing.T) {
	client := adminClient(t)
	ctx := adminContext(t)
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

// Assignments are grouped by topic, topics in the order they first appear;
// nil brokers are sent as null (cancel), as the field documents.
func TestClientAlterPartitionReassignmentsRequest(t *testing.T) {
	client, rt := adminFakeClient(func(req protocol.Message) (protocol.Message, error) {
		return &alterpartitionreassignments.Response{
			ErrorCode: int16(ClusterAuthorizationFailed), ErrorMessage: "not allowed",
			Results: []alterpartitionreassignments.ResponseResult{{Name: "b", Partitions: []alterpartitionreassignments.ResponsePartition{
				{PartitionIndex: 1, ErrorCode: int16(InvalidReplicaAssignment), ErrorMessage: "bad replicas"},
			}}},
		}, nil
	})
	res, err := client.AlterPartitionReassignments(context.Background(), &AlterPartitionReassignmentsRequest{
		Topic: "b",
		Assignments: []AlterPartitionReassignmentsRequestAssignment{
			{PartitionID: 1, BrokerIDs: []int{3, 1}},
			{Topic: "a", PartitionID: 0, BrokerIDs: []int{2}},
			{Topic: "b", PartitionID: 2},
			{Topic: "a", PartitionID: 4, BrokerIDs: []int{}},
		},
		Timeout: 2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := &alterpartitionreassignments.Request{TimeoutMs: 2000, Topics: []alterpartitionreassignments.RequestTopic{
		{Name: "b", Partitions: []alterpartitionreassignments.RequestPartition{{PartitionIndex: 1, Replicas: []int32{3, 1}}, {PartitionIndex: 2}}},
		{Name: "a", Partitions: []alterpartitionreassignments.RequestPartition{{PartitionIndex: 0, Replicas: []int32{2}}, {PartitionIndex: 4, Replicas: []int32{}}}},
	}}
	if !reflect.DeepEqual(rt.sent[0], want) {
		t.Errorf("sent %+v, want %+v", rt.sent[0], want)
	}
	if !errors.Is(res.Error, ClusterAuthorizationFailed) || !strings.Contains(res.Error.Error(), "not allowed") {
		t.Errorf("top-level error %v", res.Error)
	}
	if len(res.PartitionResults) != 1 {
		t.Fatalf("results %+v", res.PartitionResults)
	}
	r := res.PartitionResults[0]
	if r.Topic != "b" || r.PartitionID != 1 || !errors.Is(r.Error, InvalidReplicaAssignment) || !strings.Contains(r.Error.Error(), "bad replicas") {
		t.Errorf("partition result %+v", r)
	}
}
