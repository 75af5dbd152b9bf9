// Package describeconfigs holds the DescribeConfigs messages (API key 32).
package describeconfigs

import (
	"strconv"

	"github.com/segmentio/kafka-go/protocol"
)

// brokerResource is the resource type of a broker's own configuration,
// which only that broker can describe.
const brokerResource int8 = 4

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0-4,flexible=v4"`

	Resources            []RequestResource `kafka:"v0+"`
	IncludeSynonyms      bool              `kafka:"v1+"`
	IncludeDocumentation bool              `kafka:"v3+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.DescribeConfigs }

// Broker returns the broker named by the first broker resource of the
// request, or else the controller.
func (r *Request) Broker(cluster protocol.Cluster) (protocol.Broker, error) {
	for _, res := range r.Resources {
		if res.ResourceType != brokerResource {
			continue
		}
		id, err := strconv.Atoi(res.ResourceName)
		if err != nil {
			return protocol.Broker{}, err
		}
		return cluster.Brokers[int32(id)], nil
	}
	return cluster.Brokers[cluster.Controller], nil
}

// Split sends each broker resource to its broker and the other resources
// together in one request.
func (r *Request) Split(cluster protocol.Cluster) ([]protocol.Message, protocol.Merger, error) {
	var msgs []protocol.Message
	var rest []RequestResource
	for _, res := range r.Resources {
		if res.ResourceType == brokerResource {
			msgs = append(msgs, &Request{
				Resources:            []RequestResource{res},
				IncludeSynonyms:      r.IncludeSynonyms,
				IncludeDocumentation: r.IncludeDocumentation,
			})
		} else {
			rest = append(rest, res)
		}
	}
	if len(rest) > 0 {
		msgs = append(msgs, &Request{
			Resources:            rest,
			IncludeSynonyms:      r.IncludeSynonyms,
			IncludeDocumentation: r.IncludeDocumentation,
		})
	}
	return msgs, new(Response), nil
}

type RequestResource struct {
	ResourceType int8   `kafka:"v0+"`
	ResourceName string `kafka:"v0+"`
	// ConfigNames nil (sent as null) asks for every configuration entry.
	ConfigNames []string `kafka:"v0+,nullable"`
}

type Response struct {
	_ struct{} `kafka:"versions=v0-4,flexible=v4"`

	ThrottleTimeMs int32              `kafka:"v0+"`
	Resources      []ResponseResource `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.DescribeConfigs }

// Merge concatenates the resources of the responses to the requests of
// Split; any failed request fails the whole.
func (r *Response) Merge(requests []protocol.Message, results []interface{}) (protocol.Message, error) {
	merged := &Response{}
	for _, result := range results {
		msg, err := protocol.Result(result)
		if err != nil {
			return nil, err
		}
		res := msg.(*Response)
		if res.ThrottleTimeMs > merged.ThrottleTimeMs {
			merged.ThrottleTimeMs = res.ThrottleTimeMs
		}
		merged.Resources = append(merged.Resources, res.Resources...)
	}
	return merged, nil
}

type ResponseResource struct {
	ErrorCode     int16                 `kafka:"v0+"`
	ErrorMessage  string                `kafka:"v0+,nullable"`
	ResourceType  int8                  `kafka:"v0+"`
	ResourceName  string                `kafka:"v0+"`
	ConfigEntries []ResponseConfigEntry `kafka:"v0+"`
}

type ResponseConfigEntry struct {
	ConfigName          string                  `kafka:"v0+"`
	ConfigValue         string                  `kafka:"v0+,nullable"`
	ReadOnly            bool                    `kafka:"v0+"`
	IsDefault           bool                    `kafka:"v0"`
	ConfigSource        int8                    `kafka:"v1+"`
	IsSensitive         bool                    `kafka:"v0+"`
	ConfigSynonyms      []ResponseConfigSynonym `kafka:"v1+"`
	ConfigType          int8                    `kafka:"v3+"`
	ConfigDocumentation string                  `kafka:"v3+,nullable"`
}

type ResponseConfigSynonym struct {
	ConfigName   string `kafka:"v1+"`
	ConfigValue  string `kafka:"v1+,nullable"`
	ConfigSource int8   `kafka:"v1+"`
}

var (
	_ protocol.BrokerMessage = (*Request)(nil)
	_ protocol.Splitter      = (*Request)(nil)
	_ protocol.Merger        = (*Response)(nil)
)
