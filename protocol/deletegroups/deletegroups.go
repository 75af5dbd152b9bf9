// Package deletegroups holds the DeleteGroups messages (API key 42).
package deletegroups

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0-2,flexible=v2"`

	GroupIDs []string `kafka:"v0+"`
}

// Group returns the first group: the request goes to its coordinator, so
// groups with different coordinators need separate requests.
func (r *Request) Group() string {
	if len(r.GroupIDs) == 0 {
		return ""
	}
	return r.GroupIDs[0]
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.DeleteGroups }

var _ protocol.GroupMessage = (*Request)(nil)

type Response struct {
	_ struct{} `kafka:"versions=v0-2,flexible=v2"`

	ThrottleTimeMs int32           `kafka:"v0+"`
	Responses      []ResponseGroup `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.DeleteGroups }

type ResponseGroup struct {
	GroupID   string `kafka:"v0+"`
	ErrorCode int16  `kafka:"v0+"`
}
