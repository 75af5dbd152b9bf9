// Package saslhandshake holds the SaslHandshake messages (API key 17), which
// pick the SASL mechanism of a connection before authentication.
package saslhandshake

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

// Request names the SASL mechanism. With v0 the SASL tokens that follow are
// exchanged without Kafka framing; with v1 they are SaslAuthenticate
// requests.
type Request struct {
	_ struct{} `kafka:"versions=v0-1,flexible=none"`

	Mechanism string `kafka:"v0+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.SaslHandshake }

type Response struct {
	_ struct{} `kafka:"versions=v0-1,flexible=none"`

	ErrorCode  int16    `kafka:"v0+"`
	Mechanisms []string `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.SaslHandshake }
