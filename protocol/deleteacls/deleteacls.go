// Package deleteacls holds the DeleteAcls messages (API key 31), which
// delete the ACLs matching filters.
package deleteacls

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0-3,flexible=v2"`

	Filters []RequestFilter `kafka:"v0+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.DeleteAcls }

// Broker returns the controller, as upstream does.
func (r *Request) Broker(cluster protocol.Cluster) (protocol.Broker, error) {
	return cluster.Brokers[cluster.Controller], nil
}

// RequestFilter matches ACLs; empty string filters (sent as null) match any
// value.
type RequestFilter struct {
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

	ThrottleTimeMs int32          `kafka:"v0+"`
	FilterResults  []FilterResult `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.DeleteAcls }

// FilterResult lists the ACLs one filter matched (and deleted).
type FilterResult struct {
	ErrorCode    int16         `kafka:"v0+"`
	ErrorMessage string        `kafka:"v0+,nullable"`
	MatchingACLs []MatchingACL `kafka:"v0+"`
}

type MatchingACL struct {
	ErrorCode           int16  `kafka:"v0+"`
	ErrorMessage        string `kafka:"v0+,nullable"`
	ResourceType        int8   `kafka:"v0+"`
	ResourceName        string `kafka:"v0+"`
	ResourcePatternType int8   `kafka:"v1+"`
	Principal           string `kafka:"v0+"`
	Host                string `kafka:"v0+"`
	Operation           int8   `kafka:"v0+"`
	PermissionType      int8   `kafka:"v0+"`
}

var _ protocol.BrokerMessage = (*Request)(nil)
