package kafka

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol/txnoffsetcommit"
)

// TxnOffsetCommitRequest commits consumer group offsets as part of a
// transaction: they take effect when the transaction commits, and are
// dropped if it aborts. AddOffsetsToTxn must have added the group first.
type TxnOffsetCommitRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr

	// TransactionalID names the transaction.
	TransactionalID string

	// GroupID is the consumer group the offsets belong to; the request goes
	// to the group's coordinator.
	GroupID string

	// ProducerID and ProducerEpoch identify the producer session, as
	// granted by InitProducerID.
	ProducerID    int
	ProducerEpoch int

	// GenerationID, MemberID and GroupInstanceID identify the group member
	// committing, so that the coordinator can fence zombie members
	// (TxnOffsetCommit v3+; not sent to older brokers).
	GenerationID    int
	MemberID        string
	GroupInstanceID string

	// Topics maps topic names to the offsets to commit in the topic.
	Topics map[string][]TxnOffsetCommit
}

// TxnOffsetCommit is the offset to commit for one partition in a
// transaction, with optional metadata stored next to it (opaque to Kafka).
type TxnOffsetCommit struct {
	Partition int
	Offset    int64
	Metadata  string
}

// TxnOffsetCommitResponse is the answer to a TxnOffsetCommitRequest.
type TxnOffsetCommitResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Topics maps topic names to the outcome for each partition.
	Topics map[string][]TxnOffsetCommitPartition
}

// TxnOffsetCommitPartition is the outcome of committing one partition's
// offset in a transaction.
type TxnOffsetCommitPartition struct {
	// Partition is the partition number.
	Partition int

	// Error is nil when the offset was accepted; errors.Is matches it
	// against the Error codes.
	Error error
}

// TxnOffsetCommit commits offsets within a transaction.
func (c *Client) TxnOffsetCommit(ctx context.Context, req *TxnOffsetCommitRequest) (*TxnOffsetCommitResponse, error) {
	msg := &txnoffsetcommit.Request{
		TransactionalID: req.TransactionalID,
		ProducerID:      int64(req.ProducerID),
		ProducerEpoch:   int16(req.ProducerEpoch),
		GroupID:         req.GroupID,
		MemberID:        req.MemberID,
		GenerationID:    int32(req.GenerationID),
		GroupInstanceID: req.GroupInstanceID,
		Topics:          make([]txnoffsetcommit.RequestTopic, 0, len(req.Topics)),
	}
	for name, commits := range req.Topics {
		topic := txnoffsetcommit.RequestTopic{Name: name, Partitions: make([]txnoffsetcommit.RequestPartition, len(commits))}
		for i, oc := range commits {
			topic.Partitions[i] = txnoffsetcommit.RequestPartition{
				Partition:       int32(oc.Partition),
				CommittedOffset: oc.Offset,
				// -1: no leader epoch is known for the committed offset.
				CommittedLeaderEpoch: -1,
				CommittedMetadata:    oc.Metadata,
			}
		}
		msg.Topics = append(msg.Topics, topic)
	}

	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).TxnOffsetCommit: %w", err)
	}
	res := m.(*txnoffsetcommit.Response)
	out := &TxnOffsetCommitResponse{
		Throttle: makeDuration(res.ThrottleTimeMs),
		Topics:   make(map[string][]TxnOffsetCommitPartition, len(res.Topics)),
	}
	for _, topic := range res.Topics {
		parts := make([]TxnOffsetCommitPartition, 0, len(topic.Partitions))
		for _, p := range topic.Partitions {
			parts = append(parts, TxnOffsetCommitPartition{Partition: int(p.Partition), Error: makeError(p.ErrorCode, "")})
		}
		out.Topics[topic.Name] = parts
	}
	return out, nil
}
