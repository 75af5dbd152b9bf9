package kafka

import (
	"context"
	"fmt"
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
	m, err := c.roundTrip(ctx, req.Addr, &findcoordinator.Request{
		Key:     req.Key,
		KeyType: int8(req.KeyType),
	})
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).FindCoordinator: %w", err)
	}
	res := m.(*findcoordinator.Response)
	coord, _ := res.Coordinator(req.Key)
	return &FindCoordinatorResponse{
		Coordinator: &FindCoordinatorResponseCoordinator{
			NodeID: int(coord.NodeID),
			Host:   coord.Host,
			Port:   int(coord.Port),
		},
		Throttle: makeDuration(res.ThrottleTimeMs),
		Error:    makeError(coord.ErrorCode, coord.ErrorMessage),
	}, nil
}
