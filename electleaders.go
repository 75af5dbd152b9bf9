package kafka

import (
	"context"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol/electleaders"
)

// ElectLeadersRequest asks the controller to make the preferred replicas of
// partitions their leaders.
type ElectLeadersRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr

	// Topic is the topic of the partitions.
	Topic string

	// Partitions are the partitions whose leaders to elect.
	Partitions []int

	// Timeout is how long the controller may take for the elections.
	Timeout time.Duration
}

// ElectLeadersResponse is the answer to an ElectLeadersRequest.
type ElectLeadersResponse struct {
	// Error is the error reported for the whole request (ElectLeaders v1+),
	// nil on success.
	Error error

	// PartitionResults has the outcome for each partition.
	PartitionResults []ElectLeadersResponsePartitionResult
}

// ElectLeadersResponsePartitionResult is the outcome for one partition.
type ElectLeadersResponsePartitionResult struct {
	// Partition is the partition number.
	Partition int

	// Error is nil when the preferred replica leads the partition, else
	// the error with the broker's message (ElectionNotNeeded when it
	// already did).
	Error error
}

// ElectLeaders runs preferred leader elections.
func (c *Client) ElectLeaders(ctx context.Context, req *ElectLeadersRequest) (*ElectLeadersResponse, error) {
	ids := int32sOf(req.Partitions)
	if ids == nil {
		ids = []int32{}
	}
	m, err := c.roundTrip(ctx, req.Addr, &electleaders.Request{
		TopicPartitions: []electleaders.RequestTopicPartitions{{Topic: req.Topic, PartitionIDs: ids}},
		TimeoutMs:       int32(req.Timeout / time.Millisecond),
	})
	if err != nil {
		return nil, err
	}
	res := m.(*electleaders.Response)
	out := &ElectLeadersResponse{Error: makeError(res.ErrorCode, "")}
	for _, topic := range res.ReplicaElectionResults {
		for _, p := range topic.PartitionResults {
			out.PartitionResults = append(out.PartitionResults, ElectLeadersResponsePartitionResult{
				Partition: int(p.PartitionID),
				Error:     makeError(p.ErrorCode, p.ErrorMessage),
			})
		}
	}
	return out, nil
}
