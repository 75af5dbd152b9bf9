package kafka

import (
	"context"
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
	msg := &initproducerid.Request{TransactionalID: req.TransactionalID}
	msg.TransactionTimeoutMs = int32(req.TransactionTimeoutMs)
	msg.ProducerID, msg.ProducerEpoch = int64(req.ProducerID), int16(req.ProducerEpoch)
	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, clientError("InitProducerId", err)
	}
	res := m.(*initproducerid.Response)
	session := &ProducerSession{ProducerID: int(res.ProducerID), ProducerEpoch: int(res.ProducerEpoch)}
	return &InitProducerIDResponse{
		Error:    makeError(res.ErrorCode, ""),
		Throttle: makeDuration(res.ThrottleTimeMs),
		Producer: session,
	}, nil
}
