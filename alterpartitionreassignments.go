package kafka

import (
	"context"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol/alterpartitionreassignments"
)

// AlterPartitionReassignmentsRequest moves partition replicas to other
// brokers, or cancels moves in progress.
type AlterPartitionReassignmentsRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr

	// Topic is the topic of the assignments that name none; leave it empty
	// and set each assignment's Topic to move partitions of several
	// topics.
	Topic string

	// Assignments are the new replica sets.
	Assignments []AlterPartitionReassignmentsRequestAssignment

	// Timeout is how long the controller may take to start the moves.
	Timeout time.Duration
}

// AlterPartitionReassignmentsRequestAssignment is the new replica set of
// one partition.
type AlterPartitionReassignmentsRequestAssignment struct {
	// Topic is the partition's topic; the request's Topic when empty.
	Topic string

	// PartitionID is the partition number.
	PartitionID int

	// BrokerIDs are the brokers that will hold the replicas, the preferred
	// leader first. Nil (sent as null) cancels the partition's ongoing
	// reassignment.
	BrokerIDs []int
}

// AlterPartitionReassignmentsResponse is the answer to an
// AlterPartitionReassignmentsRequest.
type AlterPartitionReassignmentsResponse struct {
	// Error is the error reported for the whole request, with the broker's
	// message, nil on success.
	Error error

	// PartitionResults has the outcome for each partition.
	PartitionResults []AlterPartitionReassignmentsResponsePartitionResult
}

// AlterPartitionReassignmentsResponsePartitionResult is the outcome for one
// partition.
type AlterPartitionReassignmentsResponsePartitionResult struct {
	// Topic is the partition's topic.
	Topic string

	// PartitionID is the partition number.
	PartitionID int

	// Error is nil when the reassignment started (or was cancelled), else
	// the error with the broker's message.
	Error error
}

// AlterPartitionReassignments starts or cancels partition reassignments.
func (c *Client) AlterPartitionReassignments(ctx context.Context, req *AlterPartitionReassignmentsRequest) (*AlterPartitionReassignmentsResponse, error) {
	msg := &alterpartitionreassignments.Request{TimeoutMs: int32(req.Timeout / time.Millisecond)}
	// Partitions are grouped by topic, topics in the order they first
	// appear.
	index := make(map[string]int)
	for _, a := range req.Assignments {
		name := a.Topic
		if name == "" {
			name = req.Topic
		}
		i, ok := index[name]
		if !ok {
			i = len(msg.Topics)
			index[name] = i
			msg.Topics = append(msg.Topics, alterpartitionreassignments.RequestTopic{Name: name})
		}
		msg.Topics[i].Partitions = append(msg.Topics[i].Partitions, alterpartitionreassignments.RequestPartition{
			PartitionIndex: int32(a.PartitionID),
			Replicas:       int32sOf(a.BrokerIDs),
		})
	}

	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, err
	}
	res := m.(*alterpartitionreassignments.Response)
	out := &AlterPartitionReassignmentsResponse{Error: makeError(res.ErrorCode, res.ErrorMessage)}
	for _, topic := range res.Results {
		for _, p := range topic.Partitions {
			out.PartitionResults = append(out.PartitionResults, AlterPartitionReassignmentsResponsePartitionResult{
				Topic:       topic.Name,
				PartitionID: int(p.PartitionIndex),
				Error:       makeError(p.ErrorCode, p.ErrorMessage),
			})
		}
	}
	return out, nil
}
