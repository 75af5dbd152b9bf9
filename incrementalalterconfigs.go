package kafka

import (
	"context"
	"net"

	"github.com/segmentio/kafka-go/protocol/incrementalalterconfigs"
)

// ConfigOperation says how IncrementalAlterConfigs changes an entry.
type ConfigOperation int8

const (
	// ConfigOperationSet sets the entry to the value.
	ConfigOperationSet ConfigOperation = iota
	// ConfigOperationDelete removes the entry: it goes back to its default.
	ConfigOperationDelete
	// ConfigOperationAppend adds the value to a list entry.
	ConfigOperationAppend
	// ConfigOperationSubtract removes the value from a list entry.
	ConfigOperationSubtract
)

// IncrementalAlterConfigsRequest changes individual configuration entries
// of topics or brokers, leaving the others as they are.
type IncrementalAlterConfigsRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	// Changes to a broker's configuration go to that broker, others to the
	// controller; one request may change at most one broker.
	Addr net.Addr

	// Resources are the topics or brokers to change.
	Resources []IncrementalAlterConfigsRequestResource

	// ValidateOnly checks the request without changing anything.
	ValidateOnly bool
}

// IncrementalAlterConfigsRequestResource lists the changes to one resource.
type IncrementalAlterConfigsRequestResource struct {
	// ResourceType is ResourceTypeTopic or ResourceTypeBroker.
	ResourceType ResourceType

	// ResourceName is the topic name, or the broker ID in decimal.
	ResourceName string

	// Configs are the changes.
	Configs []IncrementalAlterConfigsRequestConfig
}

// IncrementalAlterConfigsRequestConfig is one change.
type IncrementalAlterConfigsRequestConfig struct {
	// Name is the entry's key.
	Name string

	// Value is the operand of the operation (unused by Delete).
	Value string

	// ConfigOperation is the change to make.
	ConfigOperation ConfigOperation
}

// IncrementalAlterConfigsResponse is the answer to an
// IncrementalAlterConfigsRequest.
type IncrementalAlterConfigsResponse struct {
	// Resources has the outcome for each resource.
	Resources []IncrementalAlterConfigsResponseResource
}

// IncrementalAlterConfigsResponseResource is the outcome for one resource.
type IncrementalAlterConfigsResponseResource struct {
	// Error is nil when the changes were made; errors.Is matches it against
	// the Error codes.
	Error error

	// ResourceType and ResourceName identify the resource.
	ResourceType ResourceType
	ResourceName string
}

// IncrementalAlterConfigs changes configuration entries.
func (c *Client) IncrementalAlterConfigs(ctx context.Context, req *IncrementalAlterConfigsRequest) (*IncrementalAlterConfigsResponse, error) {
	msg := &incrementalalterconfigs.Request{ValidateOnly: req.ValidateOnly}
	for _, r := range req.Resources {
		res := incrementalalterconfigs.RequestResource{
			ResourceType: int8(r.ResourceType),
			ResourceName: r.ResourceName,
		}
		for _, cfg := range r.Configs {
			res.Configs = append(res.Configs, incrementalalterconfigs.RequestConfig{
				Name:            cfg.Name,
				ConfigOperation: int8(cfg.ConfigOperation),
				Value:           cfg.Value,
			})
		}
		msg.Resources = append(msg.Resources, res)
	}

	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, err
	}
	out := &IncrementalAlterConfigsResponse{}
	for _, r := range m.(*incrementalalterconfigs.Response).Responses {
		out.Resources = append(out.Resources, IncrementalAlterConfigsResponseResource{
			Error:        makeError(r.ErrorCode, r.ErrorMessage),
			ResourceType: ResourceType(r.ResourceType),
			ResourceName: r.ResourceName,
		})
	}
	return out, nil
}
