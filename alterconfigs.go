package kafka

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol/alterconfigs"
)

// AlterConfigsRequest replaces the configuration of topics or brokers:
// entries not listed go back to their defaults. IncrementalAlterConfigs
// changes single entries instead.
type AlterConfigsRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr

	// Resources are the topics or brokers to reconfigure.
	Resources []AlterConfigRequestResource

	// ValidateOnly checks the request without changing anything.
	ValidateOnly bool
}

// AlterConfigRequestResource is the new configuration of one resource.
type AlterConfigRequestResource struct {
	// ResourceType is ResourceTypeTopic or ResourceTypeBroker.
	ResourceType ResourceType

	// ResourceName is the topic name, or the broker ID in decimal.
	ResourceName string

	// Configs are the entries of the new configuration.
	Configs []AlterConfigRequestConfig
}

// AlterConfigRequestConfig is one configuration entry.
type AlterConfigRequestConfig struct {
	// Name is the entry's key, such as "retention.ms".
	Name string

	// Value is the entry's value.
	Value string
}

// AlterConfigsResponse is the answer to an AlterConfigsRequest.
type AlterConfigsResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Errors maps every resource of the answer to the error altering it,
	// nil on success; errors.Is matches them against the Error codes.
	Errors map[AlterConfigsResponseResource]error
}

// AlterConfigsResponseResource identifies a resource in
// AlterConfigsResponse.Errors.
type AlterConfigsResponseResource struct {
	Type int8
	Name string
}

// AlterConfigs replaces configurations.
func (c *Client) AlterConfigs(ctx context.Context, req *AlterConfigsRequest) (*AlterConfigsResponse, error) {
	msg := &alterconfigs.Request{
		Resources:    make([]alterconfigs.RequestResources, len(req.Resources)),
		ValidateOnly: req.ValidateOnly,
	}
	for i, r := range req.Resources {
		configs := make([]alterconfigs.RequestConfig, len(r.Configs))
		for j, cfg := range r.Configs {
			configs[j] = alterconfigs.RequestConfig{Name: cfg.Name, Value: cfg.Value}
		}
		msg.Resources[i] = alterconfigs.RequestResources{
			ResourceType: int8(r.ResourceType),
			ResourceName: r.ResourceName,
			Configs:      configs,
		}
	}

	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).AlterConfigs: %w", err)
	}
	res := m.(*alterconfigs.Response)
	errs := make(map[AlterConfigsResponseResource]error, len(res.Responses))
	for _, r := range res.Responses {
		key := AlterConfigsResponseResource{Type: r.ResourceType, Name: r.ResourceName}
		errs[key] = makeError(r.ErrorCode, r.ErrorMessage)
	}
	return &AlterConfigsResponse{Throttle: makeDuration(res.ThrottleTimeMs), Errors: errs}, nil
}
