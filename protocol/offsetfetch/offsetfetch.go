// Package offsetfetch holds the OffsetFetch messages (API key 9), which read
// a consumer group's committed offsets from its coordinator.
package offsetfetch

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

// Request asks for the committed offsets of one group (GroupID and Topics,
// up to v7) or of several (Groups, v8+). Topics nil means all the group's
// partitions (from v2). Prepare turns the single-group form into a one-entry
// Groups for v8+, and the reverse below v8.
type Request struct {
	_ struct{} `kafka:"versions=v0-9,flexible=v6"`

	GroupID       string         `kafka:"v0-7"`
	Topics        []RequestTopic `kafka:"v0-7,nullable=v2+"`
	Groups        []RequestGroup `kafka:"v8+"`
	RequireStable bool           `kafka:"v7+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.OffsetFetch }

// Group returns the group whose coordinator receives the request; with
// several Groups (v8+), all must share that coordinator.
func (r *Request) Group() string {
	if r.GroupID == "" && len(r.Groups) > 0 {
		return r.Groups[0].GroupID
	}
	return r.GroupID
}

func (r *Request) Prepare(apiVersion int16) {
	switch {
	case apiVersion >= 8 && len(r.Groups) == 0 && r.GroupID != "":
		// MemberEpoch -1 (with a null MemberID) says the caller is not a
		// member of a group using the consumer rebalance protocol.
		r.Groups = []RequestGroup{{GroupID: r.GroupID, MemberEpoch: -1, Topics: r.Topics}}
	case apiVersion < 8 && r.GroupID == "" && len(r.Groups) > 0:
		r.GroupID = r.Groups[0].GroupID
		r.Topics = r.Groups[0].Topics
	}
}

type RequestTopic struct {
	Name             string  `kafka:"v0+"`
	PartitionIndexes []int32 `kafka:"v0+"`
}

// RequestGroup is one group of a v8+ request.
type RequestGroup struct {
	GroupID     string         `kafka:"v8+"`
	MemberID    string         `kafka:"v9+,nullable"`
	MemberEpoch int32          `kafka:"v9+"`
	Topics      []RequestTopic `kafka:"v8+,nullable"`
}

var (
	_ protocol.GroupMessage    = (*Request)(nil)
	_ protocol.PreparedMessage = (*Request)(nil)
)

// Response carries the offsets of one group in Topics and ErrorCode (up to
// v7), or of each group in Groups (v8+). Use Group to read either form.
type Response struct {
	_ struct{} `kafka:"versions=v0-9,flexible=v6"`

	ThrottleTimeMs int32           `kafka:"v3+"`
	Topics         []ResponseTopic `kafka:"v0-7"`
	ErrorCode      int16           `kafka:"v2-7"`
	Groups         []ResponseGroup `kafka:"v8+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.OffsetFetch }

// Group returns the topics and error code for groupID: its entry of Groups
// when the response has any, else the top-level fields.
func (r *Response) Group(groupID string) (topics []ResponseTopic, errorCode int16, ok bool) {
	if len(r.Groups) == 0 {
		return r.Topics, r.ErrorCode, true
	}
	for _, g := range r.Groups {
		if g.GroupID == groupID {
			return g.Topics, g.ErrorCode, true
		}
	}
	return nil, 0, false
}

type ResponseTopic struct {
	Name       string              `kafka:"v0+"`
	Partitions []ResponsePartition `kafka:"v0+"`
}

type ResponsePartition struct {
	PartitionIndex      int32  `kafka:"v0+"`
	CommittedOffset     int64  `kafka:"v0+"`
	ComittedLeaderEpoch int32  `kafka:"v5+"`
	Metadata            string `kafka:"v0+,nullable"`
	ErrorCode           int16  `kafka:"v0+"`
}

// ResponseGroup is one group of a v8+ response.
type ResponseGroup struct {
	GroupID   string          `kafka:"v8+"`
	Topics    []ResponseTopic `kafka:"v8+"`
	ErrorCode int16           `kafka:"v8+"`
}
