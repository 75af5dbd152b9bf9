// Package syncgroup holds the SyncGroup messages (API key 14): the group
// leader sends the partition assignments, every member receives its own.
package syncgroup

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0-5,flexible=v4"`

	GroupID         string              `kafka:"v0+"`
	GenerationID    int32               `kafka:"v0+"`
	MemberID        string              `kafka:"v0+"`
	GroupInstanceID string              `kafka:"v3+,nullable"`
	ProtocolType    string              `kafka:"v5+,nullable"`
	ProtocolName    string              `kafka:"v5+,nullable"`
	Assignments     []RequestAssignment `kafka:"v0+"`
}

// RequestAssignment is the opaque assignment of one member, sent by the
// leader only.
type RequestAssignment struct {
	MemberID   string `kafka:"v0+"`
	Assignment []byte `kafka:"v0+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.SyncGroup }

func (r *Request) Group() string { return r.GroupID }

var _ protocol.GroupMessage = (*Request)(nil)

type Response struct {
	_ struct{} `kafka:"versions=v0-5,flexible=v4"`

	ThrottleTimeMS int32  `kafka:"v1+"`
	ErrorCode      int16  `kafka:"v0+"`
	ProtocolType   string `kafka:"v5+,nullable"`
	ProtocolName   string `kafka:"v5+,nullable"`
	// Assignments is this member's assignment (the spec's Assignment field).
	Assignments []byte `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.SyncGroup }
