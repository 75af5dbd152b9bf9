// Package describeacls holds the DescribeAcls messages (API key 29), which
// list the ACLs matching a filter.
package describeacls

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

// Request carries its filter in Filter, as upstream's API does. On the wire
// the filter's fields are part of the request itself, with the request's
// single tagged-field section after them in flexible versions: Filter is
// inline, so encoding reads it and decoding fills it directly.
type Request struct {
	_ struct{} `kafka:"versions=v0-3,flexible=v2"`

	Filter ACLFilter `kafka:"inline"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.DescribeAcls }

// Broker returns the controller, as upstream does.
func (r *Request) Broker(cluster protocol.Cluster) (protocol.Broker, error) {
	return cluster.Brokers[cluster.Controller], nil
}

// ACLFilter matches ACLs; empty string filters (sent as null) match any
// value.
type ACLFilter struct {
	ResourceTypeFilter        int8   `kafka:"v0+"`
	ResourceNameFilter        string `kafka:"v0+,nullable"`
	ResourcePatternTypeFilter int8   `kafka:"v1+"`
	PrincipalFilter           string `kafka:"v0+,nullable"`
	HostFilter                string `kafka:"v0+,nullable"`
	Operation                 int8   `kafka:"v0+"`
	PermissionType            int8   `kafka:"v0+"`
}

type Response struct {
	_ struct{} `kafka:"versions=v0-3,flexible=v2"`

	ThrottleTimeMs int32      `kafka:"v0+"`
	ErrorCode      int16      `kafka:"v0+"`
	ErrorMessage   string     `kafka:"v0+,nullable"`
	Resources      []Resource `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.DescribeAcls }

type Resource struct {
	ResourceType int8          `kafka:"v0+"`
	ResourceName string        `kafka:"v0+"`
	PatternType  int8          `kafka:"v1+"`
	ACLs         []ResponseACL `kafka:"v0+"`
}

type ResponseACL struct {
	Principal      string `kafka:"v0+"`
	Host           string `kafka:"v0+"`
	Operation      int8   `kafka:"v0+"`
	PermissionType int8   `kafka:"v0+"`
}

var _ protocol.BrokerMessage = (*Request)(nil)
