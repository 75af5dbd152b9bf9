package kafka

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol/addoffsetstotxn"
)

// AddOffsetsToTxnRequest asks the transaction coordinator to include the
// offset commits of a consumer group in an ongoing transaction, so that the
// offsets become visible only if the transaction commits.
type AddOffsetsToTxnRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr

	// TransactionalID names the transaction; the request is routed to its
	// coordinator.
	TransactionalID string

	// ProducerID and ProducerEpoch identify the producer session, as
	// granted by InitProducerID.
	ProducerID    int
	ProducerEpoch int

	// GroupID is the consumer group whose offsets join the transaction.
	GroupID string
}

// AddOffsetsToTxnResponse is the answer to an AddOffsetsToTxnRequest.
type AddOffsetsToTxnResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Error is the error reported by the broker, nil on success;
	// errors.Is matches it against the Error codes.
	Error error
}

// AddOffsetsToTxn adds a consumer group's offsets to a transaction. The
// offsets themselves are then sent with TxnOffsetCommit.
func (c *Client) AddOffsetsToTxn(ctx context.Context, req *AddOffsetsToTxnRequest) (*AddOffsetsToTxnResponse, error) {
	msg := &addoffsetstotxn.Request{
		TransactionalID: req.TransactionalID,
		ProducerID:      int64(req.ProducerID),
		ProducerEpoch:   int16(req.ProducerEpoch),
		GroupID:         req.GroupID,
	}
	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).AddOffsetsToTxn: %w", err)
	}
	res := m.(*addoffsetstotxn.Response)
	return &AddOffsetsToTxnResponse{
		Throttle: makeDuration(res.ThrottleTimeMs),
		Error:    makeError(res.ErrorCode, ""),
	}, nil
}
