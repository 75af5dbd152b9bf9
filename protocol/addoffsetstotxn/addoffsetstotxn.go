// Package addoffsetstotxn holds the AddOffsetsToTxn messages (API key 25),
// which add a consumer group's offset commits to a transaction.
package addoffsetstotxn

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0-4,flexible=v3"`

	TransactionalID string `kafka:"v0+"`
	ProducerID      int64  `kafka:"v0+"`
	ProducerEpoch   int16  `kafka:"v0+"`
	GroupID         string `kafka:"v0+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.AddOffsetsToTxn }

func (r *Request) Transaction() string { return r.TransactionalID }

var _ protocol.TransactionalMessage = (*Request)(nil)

type Response struct {
	_ struct{} `kafka:"versions=v0-4,flexible=v3"`

	ThrottleTimeMs int32 `kafka:"v0+"`
	ErrorCode      int16 `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.AddOffsetsToTxn }
