// Package listgroups holds the ListGroups messages (API key 16). Each broker
// lists only the groups it coordinates, so a request is split into one per
// broker.
//
// We stop at v3: v4 and v5 add state and type filters, slice fields that
// would make Request no longer comparable (as upstream's is), for features
// upstream's API does not offer.
package listgroups

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0-3,flexible=v3"`

	// brokerID is the broker a request made by Split goes to.
	brokerID int32
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.ListGroups }

func (r *Request) Broker(cluster protocol.Cluster) (protocol.Broker, error) {
	return cluster.Brokers[r.brokerID], nil
}

// Split makes one request per broker of the cluster.
func (r *Request) Split(cluster protocol.Cluster) ([]protocol.Message, protocol.Merger, error) {
	ids := cluster.BrokerIDs()
	msgs := make([]protocol.Message, len(ids))
	for i, id := range ids {
		msgs[i] = &Request{
			brokerID: id,
		}
	}
	return msgs, new(Response), nil
}

type Response struct {
	_ struct{} `kafka:"versions=v0-3,flexible=v3"`

	ThrottleTimeMs int32           `kafka:"v1+"`
	ErrorCode      int16           `kafka:"v0+"`
	Groups         []ResponseGroup `kafka:"v0+"`
}

type ResponseGroup struct {
	GroupID      string `kafka:"v0+"`
	ProtocolType string `kafka:"v0+"`

	// BrokerID is the broker that listed the group (its coordinator); Merge
	// sets it, it is not on the wire.
	BrokerID int32 `kafka:"-"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.ListGroups }

// Merge concatenates the groups listed by each broker, recording which
// broker listed each; any failed request fails the whole.
func (r *Response) Merge(requests []protocol.Message, results []interface{}) (protocol.Message, error) {
	merged := &Response{}
	for i, result := range results {
		msg, err := protocol.Result(result)
		if err != nil {
			return nil, err
		}
		res := msg.(*Response)
		broker := requests[i].(*Request).brokerID
		for _, g := range res.Groups {
			g.BrokerID = broker
			merged.Groups = append(merged.Groups, g)
		}
	}
	return merged, nil
}

var (
	_ protocol.BrokerMessage = (*Request)(nil)
	_ protocol.Splitter      = (*Request)(nil)
	_ protocol.Merger        = (*Response)(nil)
)
