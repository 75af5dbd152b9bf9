package kafka

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol/leavegroup"
)

// LeaveGroupRequest removes members from a group without waiting for their
// sessions to expire.
type LeaveGroupRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	// The request is routed to the group's coordinator.
	Addr net.Addr

	// GroupID is the group to leave.
	GroupID string

	// Members are the members leaving. Brokers older than LeaveGroup v3
	// accept only one: the first is sent.
	Members []LeaveGroupRequestMember
}

// LeaveGroupRequestMember identifies a member leaving a group.
type LeaveGroupRequestMember struct {
	// ID is the member's ID.
	ID string

	// GroupInstanceID is the member's static instance ID, if any.
	GroupInstanceID string
}

// LeaveGroupResponse is the answer to a LeaveGroupRequest.
type LeaveGroupResponse struct {
	// Error is the error reported for the whole request, nil on success;
	// errors.Is matches it against the Error codes.
	Error error

	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Members has the outcome for each member. Brokers older than
	// LeaveGroup v3 report none; the first member of the request is then
	// listed, without an error of its own.
	Members []LeaveGroupResponseMember
}

// LeaveGroupResponseMember is the outcome for one member leaving a group.
type LeaveGroupResponseMember struct {
	// ID is the member's ID.
	ID string

	// GroupInstanceID is the member's static instance ID, if any.
	GroupInstanceID string

	// Error is nil when the member left; errors.Is matches it against the
	// Error codes.
	Error error
}

// LeaveGroup sends a LeaveGroup request to the group's coordinator.
func (c *Client) LeaveGroup(ctx context.Context, req *LeaveGroupRequest) (*LeaveGroupResponse, error) {
	msg := &leavegroup.Request{
		GroupID: req.GroupID,
		Members: make([]leavegroup.RequestMember, len(req.Members)),
	}
	for i, member := range req.Members {
		msg.Members[i] = leavegroup.RequestMember{MemberID: member.ID, GroupInstanceID: member.GroupInstanceID}
	}

	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).LeaveGroup: %w", err)
	}
	res := m.(*leavegroup.Response)
	out := &LeaveGroupResponse{
		Error:    makeError(res.ErrorCode, ""),
		Throttle: makeDuration(res.ThrottleTimeMS),
	}
	if len(res.Members) == 0 {
		// v0-v2 answers carry no member list; report the one member such
		// a request removes so that callers see the same shape whatever
		// the version.
		if len(req.Members) > 0 {
			first := req.Members[0]
			out.Members = []LeaveGroupResponseMember{{ID: first.ID, GroupInstanceID: first.GroupInstanceID}}
		}
		return out, nil
	}
	out.Members = make([]LeaveGroupResponseMember, len(res.Members))
	for i, member := range res.Members {
		out.Members[i] = LeaveGroupResponseMember{
			ID:              member.MemberID,
			GroupInstanceID: member.GroupInstanceID,
			Error:           makeError(member.ErrorCode, ""),
		}
	}
	return out, nil
}
