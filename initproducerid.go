package kafka

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol/initproducerid"
)

// InitProducerIDRequest asks for a producer ID (and epoch), for idempotent
// or transactional producing.
type InitProducerIDRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr

	// TransactionalID is the transactional ID, empty for an idempotent
	// producer without transactions.
	TransactionalID string

	// TransactionTimeoutMs is how long a transaction may stay open.
	TransactionTimeoutMs int

	// ProducerID and ProducerEpoch identify the current session, to renew
	// it (InitProducerId v3+; ignored before).
	ProducerID    int
	ProducerEpoch int
}

// ProducerSession is a producer ID and its epoch.
type ProducerSession struct {
	ProducerID    int
	ProducerEpoch int
}

// InitProducerIDResponse is the answer to an InitProducerIDRequest.
type InitProducerIDResponse struct {
	// Producer is the session granted.
	Producer *ProducerSession

	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Error is the error the broker reported, if any.
	Error error
}

// InitProducerID obtains a producer ID.
func (c *Client) InitProducerID(ctx context.Context, req *InitProducerIDRequest) (*InitProducerIDResponse, error) {
	m, err := c.roundTrip(ctx, req.Addr, &initproducerid.Request{
		TransactionalID:      req.TransactionalID,
		TransactionTimeoutMs: int32(req.TransactionTimeoutMs),
		ProducerID:           int64(req.ProducerID),
		ProducerEpoch:        int16(req.ProducerEpoch),
	})
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).InitProducerId: %w", err)
	}
	res := m.(*initproducerid.Response)
	return &InitProducerIDResponse{
		Producer: &ProducerSession{
			ProducerID:    int(res.ProducerID),
			ProducerEpoch: int(res.ProducerEpoch),
		},
		Throttle: makeDuration(res.ThrottleTimeMs),
		Error:    makeError(res.ErrorCode, ""),
	}, nil
}
