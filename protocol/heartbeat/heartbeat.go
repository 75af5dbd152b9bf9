// Package heartbeat holds the Heartbeat messages (API key 12), which keep a
// group member's session alive and tell it when the group rebalances.
package heartbeat

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0-4,flexible=v4"`

	GroupID         string `kafka:"v0+"`
	GenerationID    int32  `kafka:"v0+"`
	MemberID        string `kafka:"v0+"`
	GroupInstanceID string `kafka:"v3+,nullable"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.Heartbeat }

// Group routes heartbeats to the group coordinator, the only broker that
// accepts them.
func (r *Request) Group() string { return r.GroupID }

var _ protocol.GroupMessage = (*Request)(nil)

// Response follows the spec's field order (throttle time first), which
// differs from the order of upstream's struct.
type Response struct {
	_ struct{} `kafka:"versions=v0-4,flexible=v4"`

	ThrottleTimeMs int32 `kafka:"v1+"`
	ErrorCode      int16 `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.Heartbeat }
