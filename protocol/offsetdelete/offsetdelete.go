// Package offsetdelete holds the OffsetDelete messages (API key 47), which
// remove committed offsets of a group that no longer consumes the topics.
package offsetdelete

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0,flexible=none"`

	GroupID string         `kafka:"v0+"`
	Topics  []RequestTopic `kafka:"v0+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.OffsetDelete }

func (r *Request) Group() string { return r.GroupID }

type RequestTopic struct {
	Name       string             `kafka:"v0+"`
	Partitions []RequestPartition `kafka:"v0+"`
}

type RequestPartition struct {
	PartitionIndex int32 `kafka:"v0+"`
}

var _ protocol.GroupMessage = (*Request)(nil)

type Response struct {
	_ struct{} `kafka:"versions=v0,flexible=none"`

	ErrorCode      int16           `kafka:"v0+"`
	ThrottleTimeMs int32           `kafka:"v0+"`
	Topics         []ResponseTopic `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.OffsetDelete }

type ResponseTopic struct {
	Name       string              `kafka:"v0+"`
	Partitions []ResponsePartition `kafka:"v0+"`
}

type ResponsePartition struct {
	PartitionIndex int32 `kafka:"v0+"`
	ErrorCode      int16 `kafka:"v0+"`
}
