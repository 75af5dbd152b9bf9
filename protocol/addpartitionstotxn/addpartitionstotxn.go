// Package addpartitionstotxn holds the AddPartitionsToTxn messages (API key
// 24), which add partitions to a producer's ongoing transaction.
//
// We stop at v3: v4 and later batch several transactions and are reserved to
// brokers (a client sending them is refused with a cluster authorization
// error).
package addpartitionstotxn

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0-3,flexible=v3"`

	TransactionalID string         `kafka:"v0+"`
	ProducerID      int64          `kafka:"v0+"`
	ProducerEpoch   int16          `kafka:"v0+"`
	Topics          []RequestTopic `kafka:"v0+"`
}

type RequestTopic struct {
	Name       string  `kafka:"v0+"`
	Partitions []int32 `kafka:"v0+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.AddPartitionsToTxn }

func (r *Request) Transaction() string { return r.TransactionalID }

var _ protocol.TransactionalMessage = (*Request)(nil)

type Response struct {
	_ struct{} `kafka:"versions=v0-3,flexible=v3"`

	ThrottleTimeMs int32            `kafka:"v0+"`
	Results        []ResponseResult `kafka:"v0+"`
}

// ResponseResult holds the per-partition outcome for one topic.
type ResponseResult struct {
	Name    string              `kafka:"v0+"`
	Results []ResponsePartition `kafka:"v0+"`
}

type ResponsePartition struct {
	PartitionIndex int32 `kafka:"v0+"`
	ErrorCode      int16 `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.AddPartitionsToTxn }
