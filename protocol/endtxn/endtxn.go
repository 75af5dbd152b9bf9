// Package endtxn holds the EndTxn messages (API key 26), which commit or
// abort a transaction.
//
// We stop at v4: v5 opts into transactions version 2, where the coordinator
// bumps the producer epoch at the end of every transaction (returned in the
// v5 response) and expects Produce v12 and later, which this client does
// not speak.
package endtxn

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0-4,flexible=v3"`

	TransactionalID string `kafka:"v0+"`
	ProducerID      int64  `kafka:"v0+"`
	ProducerEpoch   int16  `kafka:"v0+"`
	Committed       bool   `kafka:"v0+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.EndTxn }

func (r *Request) Transaction() string { return r.TransactionalID }

var _ protocol.TransactionalMessage = (*Request)(nil)

type Response struct {
	_ struct{} `kafka:"versions=v0-4,flexible=v3"`

	ThrottleTimeMs int32 `kafka:"v0+"`
	ErrorCode      int16 `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.EndTxn }
