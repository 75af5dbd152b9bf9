package kafka

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol/heartbeat"
)

// HeartbeatRequest tells a group's coordinator that a member is alive.
type HeartbeatRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	// The request is routed to the group's coordinator.
	Addr net.Addr

	// GroupID is the group.
	GroupID string

	// GenerationID is the generation the member is part of.
	GenerationID int32

	// MemberID is the member's ID.
	MemberID string

	// GroupInstanceID is the member's static instance ID, if any
	// (Heartbeat v3+).
	GroupInstanceID string
}

// HeartbeatResponse is the answer to a HeartbeatRequest.
type HeartbeatResponse struct {
	// Error is the error reported by the coordinator, nil on success. A
	// RebalanceInProgress error tells the member to rejoin.
	Error error

	// Throttle is how long the broker throttled the request; always zero
	// with brokers that only speak Heartbeat v0.
	Throttle time.Duration
}

// Heartbeat sends a heartbeat to the group's coordinator.
func (c *Client) Heartbeat(ctx context.Context, req *HeartbeatRequest) (*HeartbeatResponse, error) {
	msg := new(heartbeat.Request)
	msg.GroupID, msg.MemberID = req.GroupID, req.MemberID
	msg.GenerationID = req.GenerationID
	msg.GroupInstanceID = req.GroupInstanceID

	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).Heartbeat: %w", err)
	}
	res := m.(*heartbeat.Response)
	out := &HeartbeatResponse{Throttle: makeDuration(res.ThrottleTimeMs)}
	out.Error = makeError(res.ErrorCode, "")
	return out, nil
}
