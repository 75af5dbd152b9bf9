package kafka

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol/addpartitionstotxn"
)

// AddPartitionToTxn is one partition to add to a transaction.
type AddPartitionToTxn struct {
	// Partition is the partition number within its topic.
	Partition int
}

// AddPartitionsToTxnRequest declares to the transaction coordinator the
// partitions a transactional producer is about to write to.
type AddPartitionsToTxnRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr

	// TransactionalID names the transaction.
	TransactionalID string

	// ProducerID and ProducerEpoch identify the producer session, as
	// granted by InitProducerID.
	ProducerID    int
	ProducerEpoch int

	// Topics maps topic names to the partitions of the topic to add.
	Topics map[string][]AddPartitionToTxn
}

// AddPartitionsToTxnResponse is the answer to an AddPartitionsToTxnRequest.
type AddPartitionsToTxnResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Topics maps topic names to the outcome for each partition.
	Topics map[string][]AddPartitionToTxnPartition
}

// AddPartitionToTxnPartition is the outcome of adding one partition to a
// transaction.
type AddPartitionToTxnPartition struct {
	// Partition is the partition number.
	Partition int

	// Error is nil when the partition was added; errors.Is matches it
	// against the Error codes.
	Error error
}

// AddPartitionsToTxn adds partitions to a transaction.
func (c *Client) AddPartitionsToTxn(ctx context.Context, req *AddPartitionsToTxnRequest) (*AddPartitionsToTxnResponse, error) {
	msg := &addpartitionstotxn.Request{
		TransactionalID: req.TransactionalID,
		ProducerID:      int64(req.ProducerID),
		ProducerEpoch:   int16(req.ProducerEpoch),
		Topics:          make([]addpartitionstotxn.RequestTopic, 0, len(req.Topics)),
	}
	for name, parts := range req.Topics {
		ids := make([]int32, len(parts))
		for i := range parts {
			ids[i] = int32(parts[i].Partition)
		}
		msg.Topics = append(msg.Topics, addpartitionstotxn.RequestTopic{Name: name, Partitions: ids})
	}

	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).AddPartitionsToTxn: %w", err)
	}
	res := m.(*addpartitionstotxn.Response)
	out := &AddPartitionsToTxnResponse{
		Throttle: makeDuration(res.ThrottleTimeMs),
		Topics:   make(map[string][]AddPartitionToTxnPartition, len(res.Results)),
	}
	for _, topic := range res.Results {
		parts := make([]AddPartitionToTxnPartition, len(topic.Results))
		for i, p := range topic.Results {
			parts[i] = AddPartitionToTxnPartition{Partition: int(p.PartitionIndex), Error: makeError(p.ErrorCode, "")}
		}
		out.Topics[topic.Name] = parts
	}
	return out, nil
}
