package kafka

import (
	"context"
	"fmt"
	"net"

	"github.com/segmentio/kafka-go/protocol/describegroups"
)

// DescribeGroupsRequest asks for the state and members of groups.
type DescribeGroupsRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	// Each group is asked of its own coordinator.
	Addr net.Addr

	// GroupIDs are the groups to describe.
	GroupIDs []string
}

// DescribeGroupsResponse is the answer to a DescribeGroupsRequest.
type DescribeGroupsResponse struct {
	// Groups has one entry per group of the request.
	Groups []DescribeGroupsResponseGroup
}

// DescribeGroupsResponseGroup describes one group.
type DescribeGroupsResponseGroup struct {
	// Error is the error describing the group, or decoding its members'
	// metadata, nil on success.
	Error error

	// GroupID is the group's ID.
	GroupID string

	// GroupState is the group's state, such as "Stable" or "Empty".
	GroupState string

	// Members are the members of the group.
	Members []DescribeGroupsResponseMember
}

// DescribeGroupsResponseMember is one member of a group.
type DescribeGroupsResponseMember struct {
	// MemberID is the member's ID.
	MemberID string

	// ClientID is the client ID of the member's connection.
	ClientID string

	// ClientHost is the host the member connects from.
	ClientHost string

	// MemberMetadata is the member's subscription, decoded from the
	// consumer protocol's format.
	MemberMetadata DescribeGroupsResponseMemberMetadata

	// MemberAssignments is the member's assignment, decoded from the
	// consumer protocol's format.
	MemberAssignments DescribeGroupsResponseAssignments
}

// DescribeGroupsResponseMemberMetadata is a member's subscription.
type DescribeGroupsResponseMemberMetadata struct {
	// Version is the version of the subscription's format.
	Version int

	// Topics are the topics the member subscribes to.
	Topics []string

	// UserData is opaque data for the assignment protocol.
	UserData []byte

	// OwnedPartitions are the partitions the member holds, sent by members
	// of cooperative protocols (format version 1+).
	OwnedPartitions []DescribeGroupsResponseMemberMetadataOwnedPartition
}

// DescribeGroupsResponseMemberMetadataOwnedPartition lists partitions of a
// topic owned by a member.
type DescribeGroupsResponseMemberMetadataOwnedPartition struct {
	// Topic is the topic's name.
	Topic string

	// Partitions are the partitions owned.
	Partitions []int
}

// DescribeGroupsResponseAssignments is a member's assignment.
type DescribeGroupsResponseAssignments struct {
	// Version is the version of the assignment's format.
	Version int

	// Topics are the partitions assigned, by topic.
	Topics []GroupMemberTopic

	// UserData is opaque data from the assignment protocol.
	UserData []byte
}

// GroupMemberTopic lists the partitions of a topic assigned to a group
// member.
type GroupMemberTopic struct {
	// Topic is the topic's name.
	Topic string

	// Partitions are the partitions assigned.
	Partitions []int
}

// DescribeGroups describes groups.
func (c *Client) DescribeGroups(ctx context.Context, req *DescribeGroupsRequest) (*DescribeGroupsResponse, error) {
	m, err := c.roundTrip(ctx, req.Addr, &describegroups.Request{Groups: req.GroupIDs})
	if err != nil {
		return nil, err
	}
	res := m.(*describegroups.Response)
	out := &DescribeGroupsResponse{}
	for _, g := range res.Groups {
		out.Groups = append(out.Groups, describedGroup(&g))
	}
	return out, nil
}

// describedGroup converts one group of the answer. Members whose metadata
// cannot be decoded make the whole group an error, with no members.
func describedGroup(g *describegroups.ResponseGroup) DescribeGroupsResponseGroup {
	group := DescribeGroupsResponseGroup{
		Error:      makeError(g.ErrorCode, ""),
		GroupID:    g.GroupID,
		GroupState: g.GroupState,
	}
	for _, member := range g.Members {
		meta, err := describedSubscription(member.MemberMetadata)
		if err != nil {
			group.Error = fmt.Errorf("decoding the metadata of member %s of group %s: %w", member.MemberID, g.GroupID, err)
			group.Members = nil
			return group
		}
		assign, err := describedAssignment(member.MemberAssignment)
		if err != nil {
			group.Error = fmt.Errorf("decoding the assignment of member %s of group %s: %w", member.MemberID, g.GroupID, err)
			group.Members = nil
			return group
		}
		group.Members = append(group.Members, DescribeGroupsResponseMember{
			MemberID:          member.MemberID,
			ClientID:          member.ClientID,
			ClientHost:        member.ClientHost,
			MemberMetadata:    meta,
			MemberAssignments: assign,
		})
	}
	return group
}

func describedSubscription(b []byte) (DescribeGroupsResponseMemberMetadata, error) {
	var out DescribeGroupsResponseMemberMetadata
	if len(b) == 0 {
		return out, nil
	}
	sub, err := readGroupSubscription(b)
	if err != nil {
		return out, err
	}
	out.Version = int(sub.Version)
	out.Topics = sub.Topics
	out.UserData = sub.UserData
	for _, tp := range sub.OwnedPartitions {
		out.OwnedPartitions = append(out.OwnedPartitions, DescribeGroupsResponseMemberMetadataOwnedPartition{
			Topic:      tp.Topic,
			Partitions: intsOf(tp.Partitions),
		})
	}
	return out, nil
}

func describedAssignment(b []byte) (DescribeGroupsResponseAssignments, error) {
	var out DescribeGroupsResponseAssignments
	if len(b) == 0 {
		return out, nil
	}
	a, err := decodeGroupAssignment(b)
	if err != nil {
		return out, err
	}
	out.Version = int(a.Version)
	out.UserData = a.UserData
	for _, tp := range a.AssignedPartitions {
		out.Topics = append(out.Topics, GroupMemberTopic{Topic: tp.Topic, Partitions: intsOf(tp.Partitions)})
	}
	return out, nil
}

// intsOf converts partition or broker IDs; nil stays nil.
func intsOf(ids []int32) []int {
	if ids == nil {
		return nil
	}
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out
}

// int32sOf is the reverse of intsOf.
func int32sOf(ids []int) []int32 {
	if ids == nil {
		return nil
	}
	out := make([]int32, len(ids))
	for i, id := range ids {
		out[i] = int32(id)
	}
	return out
}
