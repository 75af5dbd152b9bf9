package kafka

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol/deletegroups"
)

// DeleteGroupsRequest deletes consumer groups (which must have no members).
type DeleteGroupsRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr

	// GroupIDs are the groups to delete. The request goes to the
	// coordinator of the first group: all the groups must share it.
	GroupIDs []string
}

// DeleteGroupsResponse is the answer to a DeleteGroupsRequest.
type DeleteGroupsResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Errors maps every group of the answer to the error deleting it, nil
	// on success; errors.Is matches them against the Error codes.
	Errors map[string]error
}

// DeleteGroups deletes consumer groups.
func (c *Client) DeleteGroups(ctx context.Context, req *DeleteGroupsRequest) (*DeleteGroupsResponse, error) {
	m, err := c.roundTrip(ctx, req.Addr, &deletegroups.Request{GroupIDs: req.GroupIDs})
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).DeleteGroups: %w", err)
	}
	res := m.(*deletegroups.Response)
	errs := make(map[string]error, len(res.Responses))
	for _, g := range res.Responses {
		errs[g.GroupID] = makeError(g.ErrorCode, "")
	}
	return &DeleteGroupsResponse{Throttle: makeDuration(res.ThrottleTimeMs), Errors: errs}, nil
}
