package kafka

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol/offsetfetch"
)

// OffsetFetchRequest reads the committed offsets of a consumer group.
type OffsetFetchRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	// The request is routed to the group's coordinator.
	Addr net.Addr

	// GroupID is the consumer group.
	GroupID string

	// Topics maps topic names to the partitions to read. When empty, the
	// offsets of every partition the group committed for are returned
	// (brokers 0.10.2 and later).
	Topics map[string][]int
}

// OffsetFetchResponse is the answer to an OffsetFetchRequest.
type OffsetFetchResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Topics maps topic names to the offsets of each partition.
	Topics map[string][]OffsetFetchPartition

	// Error is the error reported for the whole group, nil on success;
	// errors.Is matches it against the Error codes.
	Error error
}

// OffsetFetchPartition is the committed offset of one partition.
type OffsetFetchPartition struct {
	// Partition is the partition number.
	Partition int

	// CommittedOffset is the offset committed, -1 when there is none.
	CommittedOffset int64

	// Metadata is the metadata committed with the offset.
	Metadata string

	// Error is the error reading this partition's offset, nil on success;
	// errors.Is matches it against the Error codes.
	Error error
}

// OffsetFetch reads committed offsets of a consumer group.
func (c *Client) OffsetFetch(ctx context.Context, req *OffsetFetchRequest) (*OffsetFetchResponse, error) {
	msg := &offsetfetch.Request{GroupID: req.GroupID}
	// Topics stays nil (null on the wire) when none is given: that asks
	// for all the group's offsets.
	if len(req.Topics) > 0 {
		msg.Topics = make([]offsetfetch.RequestTopic, 0, len(req.Topics))
		for name, parts := range req.Topics {
			ids := int32sOf(parts)
			if ids == nil {
				ids = []int32{}
			}
			msg.Topics = append(msg.Topics, offsetfetch.RequestTopic{Name: name, PartitionIndexes: ids})
		}
	}

	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).OffsetFetch: %w", err)
	}
	res := m.(*offsetfetch.Response)
	// v8+ answers put the group's offsets in a per-group list; Group reads
	// either form.
	topics, code, _ := res.Group(req.GroupID)
	out := &OffsetFetchResponse{
		Throttle: makeDuration(res.ThrottleTimeMs),
		Topics:   make(map[string][]OffsetFetchPartition, len(topics)),
		Error:    makeError(code, ""),
	}
	for _, topic := range topics {
		parts := make([]OffsetFetchPartition, len(topic.Partitions))
		for i, p := range topic.Partitions {
			parts[i] = OffsetFetchPartition{
				Partition:       int(p.PartitionIndex),
				CommittedOffset: p.CommittedOffset,
				Metadata:        p.Metadata,
				Error:           makeError(p.ErrorCode, ""),
			}
		}
		out.Topics[topic.Name] = parts
	}
	return out, nil
}
