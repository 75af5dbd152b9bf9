package kafka

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol/deleteacls"
)

// DeleteACLsRequest deletes the ACLs matching filters.
type DeleteACLsRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr

	// Filters select the ACLs to delete.
	Filters []DeleteACLsFilter
}

// DeleteACLsFilter matches ACLs to delete. Empty strings match any value;
// the Any values of the enumerations match any type.
type DeleteACLsFilter struct {
	ResourceTypeFilter ResourceType
	ResourceNameFilter string
	// ResourcePatternTypeFilter is sent to brokers speaking v1+ only.
	ResourcePatternTypeFilter PatternType
	PrincipalFilter           string
	HostFilter                string
	Operation                 ACLOperationType
	PermissionType            ACLPermissionType
}

// DeleteACLsResponse is the answer to a DeleteACLsRequest.
type DeleteACLsResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Results has one entry per filter of the request, in order.
	Results []DeleteACLsResult
}

// DeleteACLsResult is the outcome of one filter.
type DeleteACLsResult struct {
	// Error is the error applying the filter, nil on success.
	Error error

	// MatchingACLs are the ACLs the filter matched.
	MatchingACLs []DeleteACLsMatchingACLs
}

// DeleteACLsMatchingACLs is an ACL matched by a filter, and the outcome of
// deleting it.
type DeleteACLsMatchingACLs struct {
	// Error is nil when the ACL was deleted.
	Error error

	// The ACL's resource pattern.
	ResourceType        ResourceType
	ResourceName        string
	ResourcePatternType PatternType

	// Who the ACL applies to, and what it allows or denies.
	Principal      string
	Host           string
	Operation      ACLOperationType
	PermissionType ACLPermissionType
}

// DeleteACLs deletes ACLs.
func (c *Client) DeleteACLs(ctx context.Context, req *DeleteACLsRequest) (*DeleteACLsResponse, error) {
	msg := &deleteacls.Request{Filters: make([]deleteacls.RequestFilter, len(req.Filters))}
	for i := range req.Filters {
		f := &req.Filters[i]
		msg.Filters[i] = deleteacls.RequestFilter{
			ResourceTypeFilter:        int8(f.ResourceTypeFilter),
			ResourceNameFilter:        f.ResourceNameFilter,
			ResourcePatternTypeFilter: int8(f.ResourcePatternTypeFilter),
			PrincipalFilter:           f.PrincipalFilter,
			HostFilter:                f.HostFilter,
			Operation:                 int8(f.Operation),
			PermissionType:            int8(f.PermissionType),
		}
	}

	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).DeleteACLs: %w", err)
	}
	res := m.(*deleteacls.Response)
	out := &DeleteACLsResponse{
		Throttle: makeDuration(res.ThrottleTimeMs),
		Results:  make([]DeleteACLsResult, len(res.FilterResults)),
	}
	for i, fr := range res.FilterResults {
		matched := make([]DeleteACLsMatchingACLs, len(fr.MatchingACLs))
		for j, a := range fr.MatchingACLs {
			matched[j] = DeleteACLsMatchingACLs{
				Error:               makeError(a.ErrorCode, a.ErrorMessage),
				ResourceType:        ResourceType(a.ResourceType),
				ResourceName:        a.ResourceName,
				ResourcePatternType: PatternType(a.ResourcePatternType),
				Principal:           a.Principal,
				Host:                a.Host,
				Operation:           ACLOperationType(a.Operation),
				PermissionType:      ACLPermissionType(a.PermissionType),
			}
		}
		out.Results[i] = DeleteACLsResult{Error: makeError(fr.ErrorCode, fr.ErrorMessage), MatchingACLs: matched}
	}
	return out, nil
}
