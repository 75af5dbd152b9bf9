// Package initproducerid holds the InitProducerId messages (API key 22),
// which hand a producer its ID and epoch (for idempotence and transactions).
package initproducerid

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0-5,flexible=v2"`

	TransactionalID      string `kafka:"v0+,nullable"`
	TransactionTimeoutMs int32  `kafka:"v0+"`
	ProducerID           int64  `kafka:"v3+"`
	ProducerEpoch        int16  `kafka:"v3+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.InitProducerId }

// Transaction routes the request to the transaction coordinator of
// TransactionalID.
func (r *Request) Transaction() string { return r.TransactionalID }

var _ protocol.TransactionalMessage = (*Request)(nil)

type Response struct {
	_ struct{} `kafka:"versions=v0-5,flexible=v2"`

	ThrottleTimeMs int32 `kafka:"v0+"`
	ErrorCode      int16 `kafka:"v0+"`
	ProducerID     int64 `kafka:"v0+"`
	ProducerEpoch  int16 `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.InitProducerId }
