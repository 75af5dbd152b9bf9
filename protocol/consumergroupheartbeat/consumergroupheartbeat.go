// Package consumergroupheartbeat holds the ConsumerGroupHeartbeat messages
// (API key 68, KIP-848): with the "consumer" group protocol a member joins,
// stays, acknowledges its assignment and leaves with this one request, and
// the coordinator answers with the partitions it assigned.
package consumergroupheartbeat

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

// Member epochs with a meaning of their own in Request.MemberEpoch.
const (
	JoinEpoch        = 0  // join, or rejoin after being fenced
	LeaveEpoch       = -1 // leave the group
	StaticLeaveEpoch = -2 // a static member leaves and will come back
)

// Request is a heartbeat. The nullable fields are null when they did not
// change since the previous heartbeat; a join (and every heartbeat that
// must resend the member's state) fills them.
type Request struct {
	_ struct{} `kafka:"versions=v0-1,flexible=v0"`

	GroupID     string `kafka:"v0+"`
	MemberID    string `kafka:"v0+"`
	MemberEpoch int32  `kafka:"v0+"`
	InstanceID  string `kafka:"v0+,nullable"`
	RackID      string `kafka:"v0+,nullable"`
	// RebalanceTimeoutMs is -1 when unchanged.
	RebalanceTimeoutMs   int32    `kafka:"v0+"`
	SubscribedTopicNames []string `kafka:"v0+,nullable"`
	SubscribedTopicRegex string   `kafka:"v1+,nullable"`
	ServerAssignor       string   `kafka:"v0+,nullable"`
	// TopicPartitions are the partitions the member owns: nil when
	// unchanged, empty (not nil) when joining.
	TopicPartitions []TopicPartitions `kafka:"v0+,nullable"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.ConsumerGroupHeartbeat }

// Group routes the heartbeat to the group coordinator.
func (r *Request) Group() string { return r.GroupID }

var _ protocol.GroupMessage = (*Request)(nil)

// TopicPartitions are partitions of one topic, named by its ID.
type TopicPartitions struct {
	TopicID    [16]byte `kafka:"v0+"`
	Partitions []int32  `kafka:"v0+"`
}

type Response struct {
	_ struct{} `kafka:"versions=v0-1,flexible=v0"`

	ThrottleTimeMs int32  `kafka:"v0+"`
	ErrorCode      int16  `kafka:"v0+"`
	ErrorMessage   string `kafka:"v0+,nullable"`
	// MemberID is the member's ID, set when it joined with epoch 0.
	MemberID            string `kafka:"v0+,nullable"`
	MemberEpoch         int32  `kafka:"v0+"`
	HeartbeatIntervalMs int32  `kafka:"v0+"`
	// Assignment is nil when the member's partitions did not change.
	Assignment *Assignment `kafka:"v0+,nullable"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.ConsumerGroupHeartbeat }

// Assignment is the whole set of partitions the member may read now.
type Assignment struct {
	TopicPartitions []TopicPartitions `kafka:"v0+"`
}
