// Package alterconfigs holds the AlterConfigs messages (API key 33), which
// replace the whole configuration of topics or brokers.
package alterconfigs

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0-2,flexible=v2"`

	Resources    []RequestResources `kafka:"v0+"`
	ValidateOnly bool               `kafka:"v0+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.AlterConfigs }

// Broker returns the controller, as upstream does.
func (r *Request) Broker(cluster protocol.Cluster) (protocol.Broker, error) {
	return cluster.Brokers[cluster.Controller], nil
}

type RequestResources struct {
	ResourceType int8            `kafka:"v0+"`
	ResourceName string          `kafka:"v0+"`
	Configs      []RequestConfig `kafka:"v0+"`
}

type RequestConfig struct {
	Name  string `kafka:"v0+"`
	Value string `kafka:"v0+,nullable"`
}

type Response struct {
	_ struct{} `kafka:"versions=v0-2,flexible=v2"`

	ThrottleTimeMs int32               `kafka:"v0+"`
	Responses      []ResponseResponses `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.AlterConfigs }

type ResponseResponses struct {
	ErrorCode    int16  `kafka:"v0+"`
	ErrorMessage string `kafka:"v0+,nullable"`
	ResourceType int8   `kafka:"v0+"`
	ResourceName string `kafka:"v0+"`
}

var _ protocol.BrokerMessage = (*Request)(nil)
