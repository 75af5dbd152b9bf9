package kafka

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol/offsetdelete"
)

// OffsetDelete names a partition whose committed offset to delete.
type OffsetDelete struct {
	Topic     string
	Partition int
}

// OffsetDeleteRequest deletes committed offsets of a consumer group, for
// topics the group no longer consumes.
type OffsetDeleteRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	// The request is routed to the group's coordinator.
	Addr net.Addr

	// GroupID is the consumer group.
	GroupID string

	// Topics maps topic names to the partitions whose offsets to delete.
	Topics map[string][]int
}

// OffsetDeleteResponse is the answer to an OffsetDeleteRequest.
type OffsetDeleteResponse struct {
	// Error is the error reported for the whole request, nil on success;
	// errors.Is matches it against the Error codes.
	Error error

	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Topics maps topic names to the outcome for each partition.
	Topics map[string][]OffsetDeletePartition
}

// OffsetDeletePartition is the outcome of deleting one partition's offset.
type OffsetDeletePartition struct {
	// Partition is the partition number.
	Partition int

	// Error is nil when the offset was deleted; a group still consuming the
	// topic gets GroupSubscribedToTopic.
	Error error
}

// OffsetDelete deletes committed offsets of a consumer group.
func (c *Client) OffsetDelete(ctx context.Context, req *OffsetDeleteRequest) (*OffsetDeleteResponse, error) {
	msg := &offsetdelete.Request{
		GroupID: req.GroupID,
		Topics:  make([]offsetdelete.RequestTopic, 0, len(req.Topics)),
	}
	for name, ids := range req.Topics {
		topic := offsetdelete.RequestTopic{Name: name, Partitions: make([]offsetdelete.RequestPartition, len(ids))}
		for i, id := range ids {
			topic.Partitions[i].PartitionIndex = int32(id)
		}
		msg.Topics = append(msg.Topics, topic)
	}

	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).OffsetDelete: %w", err)
	}
	res := m.(*offsetdelete.Response)
	out := &OffsetDeleteResponse{
		Error:    makeError(res.ErrorCode, ""),
		Throttle: makeDuration(res.ThrottleTimeMs),
		Topics:   make(map[string][]OffsetDeletePartition, len(res.Topics)),
	}
	for _, topic := range res.Topics {
		parts := make([]OffsetDeletePartition, len(topic.Partitions))
		for i, p := range topic.Partitions {
			parts[i] = OffsetDeletePartition{Partition: int(p.PartitionIndex), Error: makeError(p.ErrorCode, "")}
		}
		out.Topics[topic.Name] = parts
	}
	return out, nil
}
