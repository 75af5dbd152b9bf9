package kafka

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol/endtxn"
)

// EndTxnRequest asks the transaction coordinator to commit or abort a
// transaction.
type EndTxnRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr

	// TransactionalID names the transaction to end.
	TransactionalID string

	// ProducerID and ProducerEpoch identify the producer session that owns
	// the transaction.
	ProducerID    int
	ProducerEpoch int

	// Committed commits the transaction when true and aborts it when false.
	Committed bool
}

// EndTxnResponse is the answer to an EndTxnRequest.
type EndTxnResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Error is the error reported by the broker, nil on success;
	// errors.Is matches it against the Error codes.
	Error error
}

// EndTxn commits or aborts a transaction.
func (c *Client) EndTxn(ctx context.Context, req *EndTxnRequest) (*EndTxnResponse, error) {
	msg := &endtxn.Request{
		TransactionalID: req.TransactionalID,
		ProducerID:      int64(req.ProducerID),
		ProducerEpoch:   int16(req.ProducerEpoch),
		// false aborts the transaction
		Committed: req.Committed,
	}
	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).EndTxn: %w", err)
	}
	res := m.(*endtxn.Response)
	out := &EndTxnResponse{Throttle: makeDuration(res.ThrottleTimeMs)}
	out.Error = makeError(res.ErrorCode, "")
	return out, nil
}
