// Package incrementalalterconfigs holds the IncrementalAlterConfigs messages
// (API key 44), which set, delete, append to or subtract from individual
// configuration entries.
package incrementalalterconfigs

import (
	"errors"
	"strconv"

	"github.com/segmentio/kafka-go/protocol"
)

// brokerResource is the resource type of a broker's own configuration,
// which only that broker can change.
const brokerResource int8 = 4

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0-1,flexible=v1"`

	Resources    []RequestResource `kafka:"v0+"`
	ValidateOnly bool              `kafka:"v0+"`
}

type RequestResource struct {
	ResourceType int8            `kafka:"v0+"`
	ResourceName string          `kafka:"v0+"`
	Configs      []RequestConfig `kafka:"v0+"`
}

type RequestConfig struct {
	Name            string `kafka:"v0+"`
	ConfigOperation int8   `kafka:"v0+"`
	Value           string `kafka:"v0+,nullable"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.IncrementalAlterConfigs }

// Broker returns the broker whose configuration the request changes, or the
// controller when it changes no broker's. One request can change at most one
// broker's configuration.
func (r *Request) Broker(cluster protocol.Cluster) (protocol.Broker, error) {
	name, found := "", false
	for _, res := range r.Resources {
		if res.ResourceType != brokerResource {
			continue
		}
		if found && res.ResourceName != name {
			//lint:ignore ST1005 upstream's exact text, which callers may match
			return protocol.Broker{}, errors.New("Updating more than one broker in a single request is not supported yet")
		}
		name, found = res.ResourceName, true
	}
	if !found {
		return cluster.Brokers[cluster.Controller], nil
	}
	id, err := strconv.Atoi(name)
	if err != nil {
		return protocol.Broker{}, err
	}
	return cluster.Brokers[int32(id)], nil
}

type Response struct {
	_ struct{} `kafka:"versions=v0-1,flexible=v1"`

	ThrottleTimeMs int32                   `kafka:"v0+"`
	Responses      []ResponseAlterResponse `kafka:"v0+"`
}

type ResponseAlterResponse struct {
	ErrorCode    int16  `kafka:"v0+"`
	ErrorMessage string `kafka:"v0+,nullable"`
	ResourceType int8   `kafka:"v0+"`
	ResourceName string `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.IncrementalAlterConfigs }

var _ protocol.BrokerMessage = (*Request)(nil)
