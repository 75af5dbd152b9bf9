package kafka

import (
	"context"
	"net"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/apiversions"
)

// ApiVersionsRequest asks a broker which versions of each API it supports.
type ApiVersionsRequest struct {
	// Addr is the address of the broker; Client.Addr is used when nil.
	Addr net.Addr
}

// ApiVersionsResponse is the answer to an ApiVersionsRequest.
type ApiVersionsResponse struct {
	// Error is the error the broker reported, if any.
	Error error

	// ApiKeys lists the APIs the broker supports.
	ApiKeys []ApiVersionsResponseApiKey
}

// ApiVersionsResponseApiKey is the range of versions of one API a broker
// supports.
type ApiVersionsResponseApiKey struct {
	ApiKey     int
	ApiName    string
	MinVersion int
	MaxVersion int
}

// ApiVersions returns the API versions the broker supports.
func (c *Client) ApiVersions(ctx context.Context, req *ApiVersionsRequest) (*ApiVersionsResponse, error) {
	m, err := c.roundTrip(ctx, req.Addr, &apiversions.Request{})
	if err != nil {
		return nil, err
	}
	res := m.(*apiversions.Response)
	ret := &ApiVersionsResponse{Error: makeError(res.ErrorCode, "")}
	for _, k := range res.ApiKeys {
		ret.ApiKeys = append(ret.ApiKeys, ApiVersionsResponseApiKey{
			ApiKey:     int(k.ApiKey),
			ApiName:    protocol.ApiKey(k.ApiKey).String(),
			MinVersion: int(k.MinVersion),
			MaxVersion: int(k.MaxVersion),
		})
	}
	return ret, nil
}
