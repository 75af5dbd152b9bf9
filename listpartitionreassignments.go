package kafka

import (
	"context"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol/listpartitionreassignments"
)

// ListPartitionReassignmentsRequest lists the partition reassignments in
// progress.
type ListPartitionReassignmentsRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr

	// Topics maps topic names to the partitions to look at; nil lists the
	// reassignments of all topics.
	Topics map[string]ListPartitionReassignmentsRequestTopic

	// Timeout is how long the controller may take to answer.
	Timeout time.Duration
}

// ListPartitionReassignmentsRequestTopic lists partitions of one topic.
type ListPartitionReassignmentsRequestTopic struct {
	// PartitionIndexes are the partition numbers.
	PartitionIndexes []int
}

// ListPartitionReassignmentsResponse is the answer to a
// ListPartitionReassignmentsRequest.
type ListPartitionReassignmentsResponse struct {
	// Error is the error reported by the broker, with its message, nil on
	// success.
	Error error

	// Topics maps topic names to their reassignments in progress.
	Topics map[string]ListPartitionReassignmentsResponseTopic
}

// ListPartitionReassignmentsResponseTopic lists the reassignments of one
// topic.
type ListPartitionReassignmentsResponseTopic struct {
	// Partitions are the partitions being reassigned.
	Partitions []ListPartitionReassignmentsResponsePartition
}

// ListPartitionReassignmentsResponsePartition is a partition being
// reassigned.
type ListPartitionReassignmentsResponsePartition struct {
	// PartitionIndex is the partition number.
	PartitionIndex int

	// Replicas lists the brokers holding the partition today.
	Replicas []int

	// AddingReplicas are the replicas being added.
	AddingReplicas []int

	// RemovingReplicas are the replicas being removed.
	RemovingReplicas []int
}

// ListPartitionReassignments lists partition reassignments in progress.
func (c *Client) ListPartitionReassignments(ctx context.Context, req *ListPartitionReassignmentsRequest) (*ListPartitionReassignmentsResponse, error) {
	msg := &listpartitionreassignments.Request{TimeoutMs: int32(req.Timeout / time.Millisecond)}
	for name, topic := range req.Topics {
		ids := int32sOf(topic.PartitionIndexes)
		if ids == nil {
			ids = []int32{}
		}
		msg.Topics = append(msg.Topics, listpartitionreassignments.RequestTopic{Name: name, PartitionIndexes: ids})
	}

	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, err
	}
	res := m.(*listpartitionreassignments.Response)
	out := &ListPartitionReassignmentsResponse{
		Error:  makeError(res.ErrorCode, res.ErrorMessage),
		Topics: make(map[string]ListPartitionReassignmentsResponseTopic, len(res.Topics)),
	}
	for _, topic := range res.Topics {
		var t ListPartitionReassignmentsResponseTopic
		for _, p := range topic.Partitions {
			t.Partitions = append(t.Partitions, ListPartitionReassignmentsResponsePartition{
				PartitionIndex:   int(p.PartitionIndex),
				Replicas:         intsOf(p.Replicas),
				AddingReplicas:   intsOf(p.AddingReplicas),
				RemovingReplicas: intsOf(p.RemovingReplicas),
			})
		}
		out.Topics[topic.Name] = t
	}
	return out, nil
}
