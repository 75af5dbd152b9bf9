// Package describegroups holds the DescribeGroups messages (API key 15),
// which return the state and members of consumer groups.
package describegroups

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0-5,flexible=v5"`

	Groups                      []string `kafka:"v0+"`
	IncludeAuthorizedOperations bool     `kafka:"v3+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.DescribeGroups }

// Group returns the first group: requests produced by Split name exactly
// one group, whose coordinator must answer.
func (r *Request) Group() string {
	if len(r.Groups) == 0 {
		return ""
	}
	return r.Groups[0]
}

// Split makes one request per group, since each group may have a different
// coordinator.
func (r *Request) Split(cluster protocol.Cluster) ([]protocol.Message, protocol.Merger, error) {
	msgs := make([]protocol.Message, len(r.Groups))
	for i, g := range r.Groups {
		msgs[i] = &Request{
			Groups:                      []string{g},
			IncludeAuthorizedOperations: r.IncludeAuthorizedOperations,
		}
	}
	return msgs, new(Response), nil
}

type Response struct {
	_ struct{} `kafka:"versions=v0-5,flexible=v5"`

	ThrottleTimeMs int32           `kafka:"v1+"`
	Groups         []ResponseGroup `kafka:"v0+"`
}

type ResponseGroup struct {
	ErrorCode            int16                 `kafka:"v0+"`
	GroupID              string                `kafka:"v0+"`
	GroupState           string                `kafka:"v0+"`
	ProtocolType         string                `kafka:"v0+"`
	ProtocolData         string                `kafka:"v0+"`
	Members              []ResponseGroupMember `kafka:"v0+"`
	AuthorizedOperations int32                 `kafka:"v3+"`
}

type ResponseGroupMember struct {
	MemberID         string `kafka:"v0+"`
	GroupInstanceID  string `kafka:"v4+,nullable"`
	ClientID         string `kafka:"v0+"`
	ClientHost       string `kafka:"v0+"`
	MemberMetadata   []byte `kafka:"v0+"`
	MemberAssignment []byte `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.DescribeGroups }

// Merge concatenates the groups of the responses to the requests of Split;
// any failed request fails the whole.
func (r *Response) Merge(requests []protocol.Message, results []interface{}) (protocol.Message, error) {
	merged := &Response{}
	for _, result := range results {
		msg, err := protocol.Result(result)
		if err != nil {
			return nil, err
		}
		res := msg.(*Response)
		if res.ThrottleTimeMs > merged.ThrottleTimeMs {
			merged.ThrottleTimeMs = res.ThrottleTimeMs
		}
		merged.Groups = append(merged.Groups, res.Groups...)
	}
	return merged, nil
}

var (
	_ protocol.GroupMessage = (*Request)(nil)
	_ protocol.Splitter     = (*Request)(nil)
	_ protocol.Merger       = (*Response)(nil)
)
