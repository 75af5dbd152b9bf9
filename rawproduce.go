package kafka

import (
	"context"
	"net"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/rawproduce"
)

// RawProduceRequest is a ProduceRequest whose records are already encoded
// as record batches, sent as they are.
type RawProduceRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr

	// Topic and Partition are where the records are appended.
	Topic     string
	Partition int

	// RequiredAcks is how many replicas must store the records before the
	// broker answers.
	RequiredAcks RequiredAcks

	// MessageVersion is ignored: the batches are sent as encoded.
	MessageVersion int

	// TransactionalID is set when producing within a transaction.
	TransactionalID string

	// RawRecords are the encoded record batches.
	RawRecords protocol.RawRecordSet
}

// RawProduce appends pre-encoded record batches to a partition. Responses
// and errors are those of Produce.
func (c *Client) RawProduce(ctx context.Context, req *RawProduceRequest) (*ProduceResponse, error) {
	if req.RawRecords.Reader == nil {
		return new(ProduceResponse), nil
	}
	part := rawproduce.RequestPartition{Partition: int32(req.Partition), RecordSet: req.RawRecords}
	msg := &rawproduce.Request{TransactionalID: req.TransactionalID, Acks: int16(req.RequiredAcks)}
	msg.Timeout = c.timeoutMs(ctx, defaultProduceTimeout)
	msg.Topics = []rawproduce.RequestTopic{{Topic: req.Topic, Partitions: []rawproduce.RequestPartition{part}}}
	m, err := c.roundTrip(ctx, req.Addr, msg)
	return produceResponseOf("RawProduce", req.RequiredAcks, m, err)
}
