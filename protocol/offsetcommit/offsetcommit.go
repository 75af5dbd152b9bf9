// Package offsetcommit holds the OffsetCommit messages (API key 8), which
// store a consumer group's committed offsets on its coordinator.
package offsetcommit

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0-9,flexible=v8"`

	GroupID string `kafka:"v0+"`
	// GenerationID is the member epoch in v9+ for groups using the
	// consumer rebalance protocol.
	GenerationID    int32          `kafka:"v1+"`
	MemberID        string         `kafka:"v1+"`
	GroupInstanceID string         `kafka:"v7+,nullable"`
	RetentionTimeMs int64          `kafka:"v2-4"`
	Topics          []RequestTopic `kafka:"v0+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.OffsetCommit }

func (r *Request) Group() string { return r.GroupID }

type RequestTopic struct {
	Name       string             `kafka:"v0+"`
	Partitions []RequestPartition `kafka:"v0+"`
}

type RequestPartition struct {
	PartitionIndex       int32  `kafka:"v0+"`
	CommittedOffset      int64  `kafka:"v0+"`
	CommittedLeaderEpoch int32  `kafka:"v6+"`
	CommitTimestamp      int64  `kafka:"v1"`
	CommittedMetadata    string `kafka:"v0+,nullable"`
}

var _ protocol.GroupMessage = (*Request)(nil)

type Response struct {
	_ struct{} `kafka:"versions=v0-9,flexible=v8"`

	ThrottleTimeMs int32           `kafka:"v3+"`
	Topics         []ResponseTopic `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.OffsetCommit }

type ResponseTopic struct {
	Name       string              `kafka:"v0+"`
	Partitions []ResponsePartition `kafka:"v0+"`
}

type ResponsePartition struct {
	PartitionIndex int32 `kafka:"v0+"`
	ErrorCode      int16 `kafka:"v0+"`
}
