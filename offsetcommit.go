package kafka

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol/offsetcommit"
)

// OffsetCommit is the offset to commit for one partition, with optional
// metadata stored next to it (opaque to Kafka; for instance who committed,
// or when).
type OffsetCommit struct {
	Partition int
	Offset    int64
	Metadata  string
}

// OffsetCommitRequest stores committed offsets of a consumer group.
type OffsetCommitRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	// The request is routed to the group's coordinator.
	Addr net.Addr

	// GroupID is the consumer group.
	GroupID string

	// GenerationID and MemberID identify the committing member; -1 and ""
	// commit for a group without members (as tools do).
	GenerationID int
	MemberID     string

	// InstanceID is the member's static instance ID, if any.
	InstanceID string

	// Topics maps topic names to the offsets to commit in the topic.
	Topics map[string][]OffsetCommit
}

// OffsetCommitResponse is the answer to an OffsetCommitRequest.
type OffsetCommitResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Topics maps topic names to the outcome for each partition.
	Topics map[string][]OffsetCommitPartition
}

// OffsetCommitPartition is the outcome of committing one partition's
// offset.
type OffsetCommitPartition struct {
	// Partition is the partition number.
	Partition int

	// Error is nil when the offset was stored; errors.Is matches it
	// against the Error codes.
	Error error
}

// offsetCommitRetention is the retention sent to brokers speaking
// OffsetCommit v2-v4, the only versions with that field: one day.
const offsetCommitRetention = 24 * time.Hour

// OffsetCommit commits offsets of a consumer group.
func (c *Client) OffsetCommit(ctx context.Context, req *OffsetCommitRequest) (*OffsetCommitResponse, error) {
	// The commit timestamp only exists in v1, where it sets when the
	// commit happened (and so when it expires).
	now := time.Now().UnixMilli()
	msg := &offsetcommit.Request{
		GroupID:         req.GroupID,
		GenerationID:    int32(req.GenerationID),
		MemberID:        req.MemberID,
		GroupInstanceID: req.InstanceID,
		RetentionTimeMs: int64(offsetCommitRetention / time.Millisecond),
		Topics:          make([]offsetcommit.RequestTopic, 0, len(req.Topics)),
	}
	for name, commits := range req.Topics {
		topic := offsetcommit.RequestTopic{Name: name, Partitions: make([]offsetcommit.RequestPartition, len(commits))}
		for i, oc := range commits {
			topic.Partitions[i] = offsetcommit.RequestPartition{
				PartitionIndex:  int32(oc.Partition),
				CommittedOffset: oc.Offset,
				// -1: no leader epoch is known for the committed offset.
				CommittedLeaderEpoch: -1,
				CommitTimestamp:      now,
				CommittedMetadata:    oc.Metadata,
			}
		}
		msg.Topics = append(msg.Topics, topic)
	}

	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).OffsetCommit: %w", err)
	}
	res := m.(*offsetcommit.Response)
	out := &OffsetCommitResponse{
		Throttle: makeDuration(res.ThrottleTimeMs),
		Topics:   make(map[string][]OffsetCommitPartition, len(res.Topics)),
	}
	for _, topic := range res.Topics {
		parts := make([]OffsetCommitPartition, len(topic.Partitions))
		for i, p := range topic.Partitions {
			parts[i] = OffsetCommitPartition{Partition: int(p.PartitionIndex), Error: makeError(p.ErrorCode, "")}
		}
		out.Topics[topic.Name] = parts
	}
	return out, nil
}
