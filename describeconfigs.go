package kafka

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol/describeconfigs"
)

// DescribeConfigsRequest reads the configuration of topics or brokers.
type DescribeConfigsRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	// Broker resources are asked of their own broker, others of the
	// controller.
	Addr net.Addr

	// Resources are the topics or brokers to describe.
	Resources []DescribeConfigRequestResource

	// IncludeSynonyms asks for the other sources of each value
	// (DescribeConfigs v1+; ignored by older brokers).
	IncludeSynonyms bool

	// IncludeDocumentation asks for each entry's documentation
	// (DescribeConfigs v3+; ignored by older brokers).
	IncludeDocumentation bool
}

// DescribeConfigRequestResource is one topic or broker to describe.
type DescribeConfigRequestResource struct {
	// ResourceType is ResourceTypeTopic or ResourceTypeBroker.
	ResourceType ResourceType

	// ResourceName is the topic name, or the broker ID in decimal.
	ResourceName string

	// ConfigNames are the entries to return; nil returns them all.
	ConfigNames []string
}

// DescribeConfigsResponse is the answer to a DescribeConfigsRequest.
type DescribeConfigsResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Resources are the configurations of the resources described.
	Resources []DescribeConfigResponseResource
}

// DescribeConfigResponseResource is the configuration of one resource.
type DescribeConfigResponseResource struct {
	// ResourceType is the resource's type (see ResourceType).
	ResourceType int8

	// ResourceName is the resource's name.
	ResourceName string

	// Error is the error describing the resource, nil on success;
	// errors.Is matches it against the Error codes.
	Error error

	// ConfigEntries are the resource's configuration entries.
	ConfigEntries []DescribeConfigResponseConfigEntry
}

// DescribeConfigResponseConfigEntry is one configuration entry.
type DescribeConfigResponseConfigEntry struct {
	ConfigName  string
	ConfigValue string
	ReadOnly    bool

	// IsDefault is only reported by DescribeConfigs v0; later versions
	// report ConfigSource instead.
	IsDefault bool

	// ConfigSource says where the value comes from (v1+).
	ConfigSource int8

	// IsSensitive entries have their value hidden.
	IsSensitive bool

	// ConfigSynonyms are the other sources of the value, most specific
	// first (v1+, with IncludeSynonyms).
	ConfigSynonyms []DescribeConfigResponseConfigSynonym

	// ConfigType is the entry's data type (v3+).
	ConfigType int8

	// ConfigDocumentation describes the entry (v3+, with
	// IncludeDocumentation).
	ConfigDocumentation string
}

// DescribeConfigResponseConfigSynonym is one source of a configuration
// value (DescribeConfigs v1+).
type DescribeConfigResponseConfigSynonym struct {
	ConfigName   string
	ConfigValue  string
	ConfigSource int8
}

// DescribeConfigs reads configurations.
func (c *Client) DescribeConfigs(ctx context.Context, req *DescribeConfigsRequest) (*DescribeConfigsResponse, error) {
	msg := &describeconfigs.Request{
		Resources:            make([]describeconfigs.RequestResource, len(req.Resources)),
		IncludeSynonyms:      req.IncludeSynonyms,
		IncludeDocumentation: req.IncludeDocumentation,
	}
	for i, r := range req.Resources {
		msg.Resources[i] = describeconfigs.RequestResource{
			ResourceType: int8(r.ResourceType),
			ResourceName: r.ResourceName,
			ConfigNames:  r.ConfigNames,
		}
	}

	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).DescribeConfigs: %w", err)
	}
	res := m.(*describeconfigs.Response)
	out := &DescribeConfigsResponse{
		Throttle:  makeDuration(res.ThrottleTimeMs),
		Resources: make([]DescribeConfigResponseResource, len(res.Resources)),
	}
	for i := range res.Resources {
		r := &res.Resources[i]
		entries := make([]DescribeConfigResponseConfigEntry, len(r.ConfigEntries))
		for j := range r.ConfigEntries {
			entries[j] = describedConfigEntry(&r.ConfigEntries[j])
		}
		out.Resources[i] = DescribeConfigResponseResource{
			ResourceType:  r.ResourceType,
			ResourceName:  r.ResourceName,
			Error:         makeError(r.ErrorCode, r.ErrorMessage),
			ConfigEntries: entries,
		}
	}
	return out, nil
}

func describedConfigEntry(e *describeconfigs.ResponseConfigEntry) DescribeConfigResponseConfigEntry {
	synonyms := make([]DescribeConfigResponseConfigSynonym, len(e.ConfigSynonyms))
	for i, s := range e.ConfigSynonyms {
		synonyms[i] = DescribeConfigResponseConfigSynonym{ConfigName: s.ConfigName, ConfigValue: s.ConfigValue, ConfigSource: s.ConfigSource}
	}
	return DescribeConfigResponseConfigEntry{
		ConfigName:          e.ConfigName,
		ConfigValue:         e.ConfigValue,
		ReadOnly:            e.ReadOnly,
		IsDefault:           e.IsDefault,
		ConfigSource:        e.ConfigSource,
		IsSensitive:         e.IsSensitive,
		ConfigSynonyms:      synonyms,
		ConfigType:          e.ConfigType,
		ConfigDocumentation: e.ConfigDocumentation,
	}
}
