package kafka

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/consumer"
	"github.com/segmentio/kafka-go/protocol/syncgroup"
)

// SyncGroupRequest is sent by every member after joining: the leader sends
// the assignments of all members, the others none, and each receives its
// own assignment.
type SyncGroupRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	// The request is routed to the group's coordinator.
	Addr net.Addr

	// GroupID is the group.
	GroupID string

	// GenerationID is the generation returned by JoinGroup.
	GenerationID int

	// MemberID is the member's ID.
	MemberID string

	// GroupInstanceID is the member's static instance ID, if any.
	GroupInstanceID string

	// ProtocolType and ProtocolName repeat the group's protocol, checked by
	// the coordinator (SyncGroup v5+).
	ProtocolType string
	ProtocolName string

	// Assignments are the assignments of all members (leader only).
	Assignments []SyncGroupRequestAssignment
}

// SyncGroupRequestAssignment is the assignment of one member.
type SyncGroupRequestAssignment struct {
	// MemberID is the member the assignment is for.
	MemberID string

	// Assignment is what the member gets.
	Assignment GroupProtocolAssignment
}

// SyncGroupResponse is the answer to a SyncGroupRequest.
type SyncGroupResponse struct {
	// Error is the error reported by the coordinator, nil on success;
	// errors.Is matches it against the Error codes.
	Error error

	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// ProtocolType and ProtocolName are the group's protocol (SyncGroup
	// v5+; empty before).
	ProtocolType string
	ProtocolName string

	// Assignment is this member's assignment.
	Assignment GroupProtocolAssignment
}

// GroupProtocolAssignment is the assignment of a consumer group member.
type GroupProtocolAssignment struct {
	// AssignedPartitions maps topics to the partitions assigned.
	AssignedPartitions map[string][]int

	// UserData is opaque data from the assignment protocol.
	UserData []byte
}

// SyncGroup sends a SyncGroup request to the group's coordinator.
func (c *Client) SyncGroup(ctx context.Context, req *SyncGroupRequest) (*SyncGroupResponse, error) {
	msg := &syncgroup.Request{
		ProtocolType:    req.ProtocolType,
		ProtocolName:    req.ProtocolName,
		GroupID:         req.GroupID,
		MemberID:        req.MemberID,
		GroupInstanceID: req.GroupInstanceID,
		GenerationID:    int32(req.GenerationID),
		Assignments:     make([]syncgroup.RequestAssignment, len(req.Assignments)),
	}
	for i := range req.Assignments {
		a := &req.Assignments[i]
		b, err := protocol.Marshal(consumer.MaxVersionSupported, consumer.Assignment{
			Version:            consumer.MaxVersionSupported,
			AssignedPartitions: topicPartitionList(a.Assignment.AssignedPartitions),
			UserData:           a.Assignment.UserData,
		})
		if err != nil {
			return nil, fmt.Errorf("kafka.(*Client).SyncGroup: %w", err)
		}
		msg.Assignments[i] = syncgroup.RequestAssignment{MemberID: a.MemberID, Assignment: b}
	}

	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).SyncGroup: %w", err)
	}
	res := m.(*syncgroup.Response)
	// A member may get no assignment at all (empty bytes): when it has
	// nothing assigned, or when the sync failed. That is not a decoding
	// error; the broker's error, if any, is in Error.
	assignment, err := decodeGroupAssignment(res.Assignments)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).SyncGroup: %w", err)
	}
	return &SyncGroupResponse{
		Error:        makeError(res.ErrorCode, ""),
		Throttle:     makeDuration(res.ThrottleTimeMS),
		ProtocolType: res.ProtocolType,
		ProtocolName: res.ProtocolName,
		Assignment: GroupProtocolAssignment{
			AssignedPartitions: topicPartitionMap(assignment.AssignedPartitions),
			UserData:           assignment.UserData,
		},
	}, nil
}

// decodeGroupAssignment decodes an assignment in the consumer protocol's
// format, of any version (all versions share the same fields); empty input
// is an empty assignment.
func decodeGroupAssignment(b []byte) (consumer.Assignment, error) {
	var a consumer.Assignment
	switch {
	case len(b) == 0:
		return a, nil
	case len(b) < 2:
		return a, fmt.Errorf("assignment of %d byte is too short", len(b))
	}
	if v := int16(b[0])<<8 | int16(b[1]); v < 0 {
		return a, fmt.Errorf("invalid assignment version %d", v)
	}
	err := protocol.Unmarshal(b, 0, &a)
	return a, err
}
