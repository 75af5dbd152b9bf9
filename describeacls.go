package kafka

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/segmentio/kafka-go/protocol/describeacls"
)

// DescribeACLsRequest lists the ACLs matching a filter.
type DescribeACLsRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr

	// Filter selects the ACLs.
	Filter ACLFilter
}

// ACLFilter matches ACLs. Empty strings match any value; the Any values of
// the enumerations match any type.
type ACLFilter struct {
	ResourceTypeFilter ResourceType
	ResourceNameFilter string
	// ResourcePatternTypeFilter is sent to brokers speaking v1+ only.
	ResourcePatternTypeFilter PatternType
	PrincipalFilter           string
	HostFilter                string
	Operation                 ACLOperationType
	PermissionType            ACLPermissionType
}

// DescribeACLsResponse is the answer to a DescribeACLsRequest.
type DescribeACLsResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Error is the error reported by the broker, nil on success.
	Error error

	// Resources are the resource patterns with ACLs matching the filter.
	Resources []ACLResource
}

// ACLResource is a resource pattern and the ACLs on it.
type ACLResource struct {
	ResourceType ResourceType
	ResourceName string
	PatternType  PatternType
	ACLs         []ACLDescription
}

// ACLDescription is one ACL of an ACLResource.
type ACLDescription struct {
	Principal      string
	Host           string
	Operation      ACLOperationType
	PermissionType ACLPermissionType
}

// DescribeACLs lists ACLs.
func (c *Client) DescribeACLs(ctx context.Context, req *DescribeACLsRequest) (*DescribeACLsResponse, error) {
	f := &req.Filter
	msg := &describeacls.Request{Filter: describeacls.ACLFilter{
		ResourceTypeFilter:        int8(f.ResourceTypeFilter),
		ResourceNameFilter:        f.ResourceNameFilter,
		ResourcePatternTypeFilter: int8(f.ResourcePatternTypeFilter),
		PrincipalFilter:           f.PrincipalFilter,
		HostFilter:                f.HostFilter,
		Operation:                 int8(f.Operation),
		PermissionType:            int8(f.PermissionType),
	}}

	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).DescribeACLs: %w", err)
	}
	res := m.(*describeacls.Response)
	out := &DescribeACLsResponse{
		Throttle:  makeDuration(res.ThrottleTimeMs),
		Error:     makeError(res.ErrorCode, res.ErrorMessage),
		Resources: make([]ACLResource, len(res.Resources)),
	}
	for i, r := range res.Resources {
		acls := make([]ACLDescription, len(r.ACLs))
		for j, a := range r.ACLs {
			acls[j] = ACLDescription{
				Principal:      a.Principal,
				Host:           a.Host,
				Operation:      ACLOperationType(a.Operation),
				PermissionType: ACLPermissionType(a.PermissionType),
			}
		}
		out.Resources[i] = ACLResource{
			ResourceType: ResourceType(r.ResourceType),
			ResourceName: r.ResourceName,
			PatternType:  PatternType(r.PatternType),
			ACLs:         acls,
		}
	}
	return out, nil
}

// enumName returns names[i], or names[0] (the unknown value's name) when i
// is out of range.
func enumName(names []string, i int) string {
	if i < 0 || i >= len(names) {
		return names[0]
	}
	return names[i]
}

// enumParse finds text among names without regard to case. It returns the
// index (0, the unknown value, when not found), the lower-cased text for
// error messages, and whether it was found.
func enumParse(names []string, text []byte) (int, string, bool) {
	name := strings.ToLower(string(text))
	for i, n := range names {
		if strings.ToLower(n) == name {
			return i, name, true
		}
	}
	return 0, name, false
}
