// Package alterclientquotas holds the AlterClientQuotas messages (API key
// 49), which set or remove quotas of users and client IDs.
package alterclientquotas

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0-1,flexible=v1"`

	Entries      []Entry `kafka:"v0+"`
	ValidateOnly bool    `kafka:"v0+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.AlterClientQuotas }

// Broker returns the controller, which applies quota changes.
func (r *Request) Broker(cluster protocol.Cluster) (protocol.Broker, error) {
	return cluster.Brokers[cluster.Controller], nil
}

// Entry is a set of quota operations on one entity (a combination of user,
// client ID, ...).
type Entry struct {
	Entities []Entity `kafka:"v0+"`
	Ops      []Ops    `kafka:"v0+"`
}

// Entity is one component of a quota entity; an empty EntityName (sent as
// null) stands for the default entity of that type.
type Entity struct {
	EntityType string `kafka:"v0+"`
	EntityName string `kafka:"v0+,nullable"`
}

// Ops sets the quota Key to Value, or removes it.
type Ops struct {
	Key    string  `kafka:"v0+"`
	Value  float64 `kafka:"v0+"`
	Remove bool    `kafka:"v0+"`
}

type Response struct {
	_ struct{} `kafka:"versions=v0-1,flexible=v1"`

	ThrottleTimeMs int32            `kafka:"v0+"`
	Results        []ResponseQuotas `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.AlterClientQuotas }

type ResponseQuotas struct {
	ErrorCode    int16    `kafka:"v0+"`
	ErrorMessage string   `kafka:"v0+,nullable"`
	Entities     []Entity `kafka:"v0+"`
}

var _ protocol.BrokerMessage = (*Request)(nil)
