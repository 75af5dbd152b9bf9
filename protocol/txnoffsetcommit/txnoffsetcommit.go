// Package txnoffsetcommit holds the TxnOffsetCommit messages (API key 28),
// which commit a consumer group's offsets as part of a transaction.
package txnoffsetcommit

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0-4,flexible=v3"`

	TransactionalID string         `kafka:"v0+"`
	GroupID         string         `kafka:"v0+"`
	ProducerID      int64          `kafka:"v0+"`
	ProducerEpoch   int16          `kafka:"v0+"`
	GenerationID    int32          `kafka:"v3+"`
	MemberID        string         `kafka:"v3+"`
	GroupInstanceID string         `kafka:"v3+,nullable"`
	Topics          []RequestTopic `kafka:"v0+"`
}

type RequestTopic struct {
	Name       string             `kafka:"v0+"`
	Partitions []RequestPartition `kafka:"v0+"`
}

type RequestPartition struct {
	Partition            int32  `kafka:"v0+"`
	CommittedOffset      int64  `kafka:"v0+"`
	CommittedLeaderEpoch int32  `kafka:"v2+"`
	CommittedMetadata    string `kafka:"v0+,nullable"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.TxnOffsetCommit }

// Group routes the request to the group's coordinator, which writes the
// offsets.
func (r *Request) Group() string { return r.GroupID }

var _ protocol.GroupMessage = (*Request)(nil)

type Response struct {
	_ struct{} `kafka:"versions=v0-4,flexible=v3"`

	ThrottleTimeMs int32           `kafka:"v0+"`
	Topics         []ResponseTopic `kafka:"v0+"`
}

type ResponseTopic struct {
	Name       string              `kafka:"v0+"`
	Partitions []ResponsePartition `kafka:"v0+"`
}

type ResponsePartition struct {
	Partition int32 `kafka:"v0+"`
	ErrorCode int16 `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.TxnOffsetCommit }
