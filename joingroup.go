package kafka

import (
	"context"
	"fmt"
	"net"
	"sort"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/consumer"
	"github.com/segmentio/kafka-go/protocol/joingroup"
)

// JoinGroupRequest asks a group's coordinator to add a member to the group
// (or to keep a member through a rebalance). The coordinator answers when
// every member has (re)joined, which may take up to the rebalance timeout.
type JoinGroupRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	// The request is routed to the group's coordinator.
	Addr net.Addr

	// GroupID is the group to join.
	GroupID string

	// SessionTimeout is how long the coordinator waits for a heartbeat
	// before it considers the member dead.
	SessionTimeout time.Duration

	// RebalanceTimeout is how long the coordinator waits for the members
	// to rejoin during a rebalance.
	RebalanceTimeout time.Duration

	// MemberID is the ID the coordinator gave the member, empty on the
	// first join. Brokers speaking JoinGroup v4+ answer a first join with
	// MemberIDRequired and the ID to join again with.
	MemberID string

	// GroupInstanceID makes the member static: it keeps its assignment
	// across restarts within the session timeout.
	GroupInstanceID string

	// ProtocolType is the kind of group, "consumer" for consumer groups.
	ProtocolType string

	// Protocols are the assignment protocols the member supports, in order
	// of preference.
	Protocols []GroupProtocol
}

// GroupProtocol is an assignment protocol a member supports, with the
// subscription it sends along with it.
type GroupProtocol struct {
	// Name is the protocol (balancer) name, such as "range".
	Name string

	// Metadata is the member's subscription, sent in the consumer
	// protocol's format.
	Metadata GroupProtocolSubscription
}

// GroupProtocolSubscription is the subscription of a consumer group member.
type GroupProtocolSubscription struct {
	// Topics are the topics the member consumes.
	Topics []string

	// UserData is opaque data for the assignment protocol.
	UserData []byte

	// OwnedPartitions maps topics to the partitions the member holds now,
	// for cooperative protocols.
	OwnedPartitions map[string][]int
}

// JoinGroupResponse is the answer to a JoinGroupRequest.
type JoinGroupResponse struct {
	// Error is the error reported by the coordinator, nil on success;
	// errors.Is matches it against the Error codes.
	Error error

	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// GenerationID is the generation of the group the member joined.
	GenerationID int

	// ProtocolName is the assignment protocol the coordinator chose.
	ProtocolName string

	// ProtocolType is the kind of group (JoinGroup v7+; empty before).
	ProtocolType string

	// LeaderID is the member that computes the assignments.
	LeaderID string

	// MemberID is this member's ID.
	MemberID string

	// Members lists the members of the group with their subscriptions;
	// only the leader receives it.
	Members []JoinGroupResponseMember
}

// JoinGroupResponseMember is one member of a group, as seen by the leader.
type JoinGroupResponseMember struct {
	// ID is the member's ID.
	ID string

	// GroupInstanceID is the member's static instance ID, if any.
	GroupInstanceID string

	// Metadata is the subscription the member sent.
	Metadata GroupProtocolSubscription
}

// JoinGroup sends a JoinGroup request to the group's coordinator.
func (c *Client) JoinGroup(ctx context.Context, req *JoinGroupRequest) (*JoinGroupResponse, error) {
	msg := &joingroup.Request{
		GroupID:            req.GroupID,
		SessionTimeoutMS:   int32(req.SessionTimeout / time.Millisecond),
		RebalanceTimeoutMS: int32(req.RebalanceTimeout / time.Millisecond),
		MemberID:           req.MemberID,
		GroupInstanceID:    req.GroupInstanceID,
		ProtocolType:       req.ProtocolType,
		Protocols:          make([]joingroup.RequestProtocol, len(req.Protocols)),
	}
	for i := range req.Protocols {
		p := &req.Protocols[i]
		b, err := p.Metadata.marshal()
		if err != nil {
			return nil, fmt.Errorf("kafka.(*Client).JoinGroup: %w", err)
		}
		msg.Protocols[i] = joingroup.RequestProtocol{Name: p.Name, Metadata: b}
	}

	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).JoinGroup: %w", err)
	}
	res := m.(*joingroup.Response)
	out := &JoinGroupResponse{
		Error:        makeError(res.ErrorCode, ""),
		Throttle:     makeDuration(res.ThrottleTimeMS),
		GenerationID: int(res.GenerationID),
		ProtocolName: res.ProtocolName,
		ProtocolType: res.ProtocolType,
		LeaderID:     res.LeaderID,
		MemberID:     res.MemberID,
		Members:      make([]JoinGroupResponseMember, len(res.Members)),
	}
	for i, member := range res.Members {
		sub, err := unmarshalGroupSubscription(member.Metadata)
		if err != nil {
			return nil, fmt.Errorf("kafka.(*Client).JoinGroup: metadata of member %s: %w", member.MemberID, err)
		}
		out.Members[i] = JoinGroupResponseMember{
			ID:              member.MemberID,
			GroupInstanceID: member.GroupInstanceID,
			Metadata:        sub,
		}
	}
	return out, nil
}

// marshal encodes the subscription in the consumer protocol's format.
func (s *GroupProtocolSubscription) marshal() ([]byte, error) {
	return protocol.Marshal(consumer.MaxVersionSupported, consumer.Subscription{
		Version:         consumer.MaxVersionSupported,
		Topics:          s.Topics,
		UserData:        s.UserData,
		OwnedPartitions: topicPartitionList(s.OwnedPartitions),
	})
}

// unmarshalGroupSubscription decodes a member's subscription; empty
// metadata is an empty subscription.
func unmarshalGroupSubscription(b []byte) (GroupProtocolSubscription, error) {
	out := GroupProtocolSubscription{}
	if len(b) == 0 {
		out.OwnedPartitions = map[string][]int{}
		return out, nil
	}
	sub, err := readGroupSubscription(b)
	if err != nil {
		return out, err
	}
	out.Topics = sub.Topics
	out.UserData = sub.UserData
	out.OwnedPartitions = topicPartitionMap(sub.OwnedPartitions)
	return out, nil
}

// readGroupSubscription decodes a subscription in the consumer protocol's
// format, of any version: each version only adds fields at the end, so the
// fields of the versions this client knows are read, and newer ones
// skipped. Old clients (kafka-go included) wrote version 1 headers without
// the owned partitions; those are read as version 0.
func readGroupSubscription(b []byte) (consumer.Subscription, error) {
	var sub consumer.Subscription
	if len(b) < 2 {
		return sub, fmt.Errorf("subscription of %d byte is too short", len(b))
	}
	v := int16(b[0])<<8 | int16(b[1])
	if v < 0 {
		return sub, fmt.Errorf("invalid subscription version %d", v)
	}
	const newest = 3 // newest version consumer.Subscription describes
	err := protocol.Unmarshal(b, min(v, newest), &sub)
	if err != nil && v > 0 {
		sub = consumer.Subscription{}
		if protocol.Unmarshal(b, 0, &sub) == nil {
			return sub, nil
		}
	}
	return sub, err
}

// topicPartitionList turns a topic -> partitions map into the consumer
// protocol's list, sorted by topic so that the bytes do not depend on map
// iteration order.
func topicPartitionList(m map[string][]int) []consumer.TopicPartition {
	if len(m) == 0 {
		return []consumer.TopicPartition{}
	}
	topics := make([]string, 0, len(m))
	for topic := range m {
		topics = append(topics, topic)
	}
	sort.Strings(topics)
	list := make([]consumer.TopicPartition, len(topics))
	for i, topic := range topics {
		ids := make([]int32, len(m[topic]))
		for j, p := range m[topic] {
			ids[j] = int32(p)
		}
		list[i] = consumer.TopicPartition{Topic: topic, Partitions: ids}
	}
	return list
}

// topicPartitionMap is the reverse of topicPartitionList; it never returns
// a nil map.
func topicPartitionMap(list []consumer.TopicPartition) map[string][]int {
	m := make(map[string][]int, len(list))
	for _, tp := range list {
		ids := m[tp.Topic]
		for _, p := range tp.Partitions {
			ids = append(ids, int(p))
		}
		if ids == nil {
			ids = []int{}
		}
		m[tp.Topic] = ids
	}
	return m
}
