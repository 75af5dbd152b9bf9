// Package findcoordinator holds the FindCoordinator messages (API key 10),
// which locate the broker coordinating a consumer group or a transaction.
//
// Versions 0 to 3 only: from v4 on a request may name several keys, which
// needs slice fields and would make Request and Response incomparable
// (upstream kafka-go's are comparable). Brokers up to Kafka 4.x accept v1-v3.
package findcoordinator

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

// Request looks up the coordinator of one group (KeyType 0) or transaction
// (KeyType 1, v1+).
type Request struct {
	_ struct{} `kafka:"versions=v0-3,flexible=v3"`

	Key     string `kafka:"v0+"`
	KeyType int8   `kafka:"v1+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.FindCoordinator }

// Response describes the coordinator found, or the error.
type Response struct {
	_ struct{} `kafka:"versions=v0-3,flexible=v3"`

	ThrottleTimeMs int32  `kafka:"v1+"`
	ErrorCode      int16  `kafka:"v0+"`
	ErrorMessage   string `kafka:"v1+,nullable"`
	NodeID         int32  `kafka:"v0+"`
	Host           string `kafka:"v0+"`
	Port           int32  `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.FindCoordinator }

// ResponseCoordinator is the coordinator of one key, as Coordinator returns
// it.
type ResponseCoordinator struct {
	Key          string
	NodeID       int32
	Host         string
	Port         int32
	ErrorCode    int16
	ErrorMessage string
}

// Coordinator returns the coordinator the response names for key (the
// response does not repeat the key: it is the one the request asked for).
// ok is always true; it remains from the batched form of v4+, where a
// response could lack the key.
func (r *Response) Coordinator(key string) (c ResponseCoordinator, ok bool) {
	return ResponseCoordinator{
		Key:          key,
		NodeID:       r.NodeID,
		Host:         r.Host,
		Port:         r.Port,
		ErrorCode:    r.ErrorCode,
		ErrorMessage: r.ErrorMessage,
	}, true
}
