// Package joingroup holds the JoinGroup messages (API key 11), by which a
// consumer enters a group and the coordinator elects the group's leader.
package joingroup

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0-9,flexible=v6"`

	GroupID            string            `kafka:"v0+"`
	SessionTimeoutMS   int32             `kafka:"v0+"`
	RebalanceTimeoutMS int32             `kafka:"v1+"`
	MemberID           string            `kafka:"v0+"`
	GroupInstanceID    string            `kafka:"v5+,nullable"`
	ProtocolType       string            `kafka:"v0+"`
	Protocols          []RequestProtocol `kafka:"v0+"`
	Reason             string            `kafka:"v8+,nullable"`
}

// RequestProtocol is an assignment strategy the member supports, with its
// opaque (assignor-defined) subscription metadata.
type RequestProtocol struct {
	Name     string `kafka:"v0+"`
	Metadata []byte `kafka:"v0+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.JoinGroup }

func (r *Request) Group() string { return r.GroupID }

var _ protocol.GroupMessage = (*Request)(nil)

type Response struct {
	_ struct{} `kafka:"versions=v0-9,flexible=v6"`

	ThrottleTimeMS int32            `kafka:"v2+"`
	ErrorCode      int16            `kafka:"v0+"`
	GenerationID   int32            `kafka:"v0+"`
	ProtocolType   string           `kafka:"v7+,nullable"`
	ProtocolName   string           `kafka:"v0+,nullable=v7+"`
	LeaderID       string           `kafka:"v0+"`
	SkipAssignment bool             `kafka:"v9+"`
	MemberID       string           `kafka:"v0+"`
	Members        []ResponseMember `kafka:"v0+"`
}

// ResponseMember is a member of the group, listed only in the leader's
// response, with the metadata it joined with.
type ResponseMember struct {
	MemberID        string `kafka:"v0+"`
	GroupInstanceID string `kafka:"v5+,nullable"`
	Metadata        []byte `kafka:"v0+"`
}

// ResponseMemberMetadata is kept for compatibility; it carries nothing.
type ResponseMemberMetadata struct{}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.JoinGroup }
