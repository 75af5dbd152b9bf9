package kafka

import (
	"context"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol/findcoordinator"
)

// CoordinatorKeyType tells what kind of coordinator to look for.
type CoordinatorKeyType int8

const (
	// CoordinatorKeyTypeConsumer looks for the coordinator of a consumer group.
	CoordinatorKeyTypeConsumer CoordinatorKeyType = 0

	// CoordinatorKeyTypeTransaction looks for the coordinator of a
	// transactional ID.
	CoordinatorKeyTypeTransaction CoordinatorKeyType = 1
)

// FindCoordinatorRequest asks which broker coordinates a group or a
// transaction.
type FindCoordinatorRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr

	// Key is the group ID or transactional ID.
	Key string

	// KeyType tells what Key names.
	KeyType CoordinatorKeyType
}

// FindCoordinatorResponseCoordinator is the broker found.
type FindCoordinatorResponseCoordinator struct {
	NodeID int
	Host   string
	Port   int
}

// FindCoordinatorResponse is the answer to a FindCoordinatorRequest.
type FindCoordinatorResponse struct {
	// Coordinator is the broker found.
	Coordinator *FindCoordinatorResponseCoordinator

	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Error is the error the broker reported, if any.
	Error error
}

// FindCoordinator looks up the coordinator of a group or a transaction.
func (c *Client) FindCoordinator(ctx context.Context, req *FindCoordinatorRequest) (*FindCoordinatorResponse, error) {
	msg := &findcoordinator.Request{KeyType: int8(req.KeyType), Key: req.Key}
	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, clientError("FindCoordinator", err)
	}
	res := m.(*findcoordinator.Response)
	// Either form of the answer (one coordinator up to v3, a list after).
	found, _ := res.Coordinator(req.Key)
	ret := &FindCoordinatorResponse{
		Throttle:    makeDuration(res.ThrottleTimeMs),
		Error:       makeError(found.ErrorCode, found.ErrorMessage),
		Coordinator: new(FindCoordinatorResponseCoordinator),
	}
	ret.Coordinator.NodeID, ret.Coordinator.Host, ret.Coordinator.Port = int(found.NodeID), found.Host, int(found.Port)
	return ret, nil
}
