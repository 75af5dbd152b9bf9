package kafka

import (
	"context"
	"net"

	"github.com/segmentio/kafka-go/protocol/listgroups"
)

// ListGroupsRequest lists the groups of the cluster; every broker is asked
// for the groups it coordinates.
type ListGroupsRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr
}

// ListGroupsResponse is the answer to a ListGroupsRequest.
type ListGroupsResponse struct {
	// Error is the error reported for the request, if any.
	Error error

	// Groups are the groups of all brokers.
	Groups []ListGroupsResponseGroup
}

// ListGroupsResponseGroup is one group.
type ListGroupsResponseGroup struct {
	// GroupID is the group's ID.
	GroupID string

	// Coordinator is the ID of the broker coordinating the group.
	Coordinator int

	// ProtocolType is the kind of group, such as "consumer" or "connect".
	ProtocolType string
}

// ListGroups lists the groups of the cluster.
func (c *Client) ListGroups(ctx context.Context, req *ListGroupsRequest) (*ListGroupsResponse, error) {
	m, err := c.roundTrip(ctx, req.Addr, &listgroups.Request{})
	if err != nil {
		return nil, err
	}
	res := m.(*listgroups.Response)
	out := &ListGroupsResponse{Error: makeError(res.ErrorCode, "")}
	if len(res.Groups) > 0 {
		out.Groups = make([]ListGroupsResponseGroup, len(res.Groups))
	}
	for i, g := range res.Groups {
		out.Groups[i] = ListGroupsResponseGroup{
			GroupID:      g.GroupID,
			Coordinator:  int(g.BrokerID),
			ProtocolType: g.ProtocolType,
		}
	}
	return out, nil
}
