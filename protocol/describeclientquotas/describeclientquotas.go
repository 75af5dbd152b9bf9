// Package describeclientquotas holds the DescribeClientQuotas messages (API
// key 48).
package describeclientquotas

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0-1,flexible=v1"`

	Components []Component `kafka:"v0+"`
	Strict     bool        `kafka:"v0+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.DescribeClientQuotas }

// Broker returns the controller, as upstream does.
func (r *Request) Broker(cluster protocol.Cluster) (protocol.Broker, error) {
	return cluster.Brokers[cluster.Controller], nil
}

// Component matches entities of one type: MatchType 0 matches Match exactly,
// 1 the default entity, 2 any entity.
type Component struct {
	EntityType string `kafka:"v0+"`
	MatchType  int8   `kafka:"v0+"`
	Match      string `kafka:"v0+,nullable"`
}

type Response struct {
	_ struct{} `kafka:"versions=v0-1,flexible=v1"`

	ThrottleTimeMs int32            `kafka:"v0+"`
	ErrorCode      int16            `kafka:"v0+"`
	ErrorMessage   string           `kafka:"v0+,nullable"`
	Entries        []ResponseQuotas `kafka:"v0+,nullable"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.DescribeClientQuotas }

type Entity struct {
	EntityType string `kafka:"v0+"`
	EntityName string `kafka:"v0+,nullable"`
}

type Value struct {
	Key   string  `kafka:"v0+"`
	Value float64 `kafka:"v0+"`
}

type ResponseQuotas struct {
	Entities []Entity `kafka:"v0+"`
	Values   []Value  `kafka:"v0+"`
}

var _ protocol.BrokerMessage = (*Request)(nil)
