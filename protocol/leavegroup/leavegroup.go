// Package leavegroup holds the LeaveGroup messages (API key 13), by which
// members leave a group without waiting for their session to time out.
package leavegroup

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

// Request removes one member (MemberID, up to v2) or several (Members, v3+).
// Prepare moves one form into the other for the version in use.
type Request struct {
	_ struct{} `kafka:"versions=v0-5,flexible=v4"`

	GroupID  string          `kafka:"v0+"`
	MemberID string          `kafka:"v0-2"`
	Members  []RequestMember `kafka:"v3+"`
}

func (r *Request) Prepare(apiVersion int16) {
	switch {
	case apiVersion < 3 && r.MemberID == "" && len(r.Members) > 0:
		r.MemberID = r.Members[0].MemberID
	case apiVersion >= 3 && len(r.Members) == 0 && r.MemberID != "":
		r.Members = []RequestMember{{MemberID: r.MemberID}}
	}
}

type RequestMember struct {
	MemberID        string `kafka:"v3+"`
	GroupInstanceID string `kafka:"v3+,nullable"`
	Reason          string `kafka:"v5+,nullable"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.LeaveGroup }

func (r *Request) Group() string { return r.GroupID }

var (
	_ protocol.GroupMessage    = (*Request)(nil)
	_ protocol.PreparedMessage = (*Request)(nil)
)

// Response follows the spec's field order (throttle time first), which
// differs from the order of upstream's struct.
type Response struct {
	_ struct{} `kafka:"versions=v0-5,flexible=v4"`

	ThrottleTimeMS int32            `kafka:"v1+"`
	ErrorCode      int16            `kafka:"v0+"`
	Members        []ResponseMember `kafka:"v3+"`
}

type ResponseMember struct {
	MemberID        string `kafka:"v3+"`
	GroupInstanceID string `kafka:"v3+,nullable"`
	ErrorCode       int16  `kafka:"v3+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.LeaveGroup }
