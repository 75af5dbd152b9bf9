package kafka

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol/describeclientquotas"
)

// DescribeClientQuotasRequest lists the quotas of the entities matching
// filter components.
type DescribeClientQuotasRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr

	// Components filter the entities, one per entity type.
	Components []DescribeClientQuotasRequestComponent

	// Strict excludes entities with components of types not filtered.
	Strict bool
}

// DescribeClientQuotasRequestComponent filters entities on one entity type.
type DescribeClientQuotasRequestComponent struct {
	// EntityType is the entity type filtered, such as "user".
	EntityType string

	// MatchType is 0 to match Match exactly, 1 for the default entity,
	// 2 for any entity of the type.
	MatchType int8

	// Match is the name to match (MatchType 0 only).
	Match string
}

// DescribeClientQuotasResponse is the answer to a
// DescribeClientQuotasRequest.
type DescribeClientQuotasResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Error is the error reported by the broker, nil on success; errors.Is
	// matches it against the Error codes.
	Error error

	// Entries are the matching entities and their quotas.
	Entries []DescribeClientQuotasResponseQuotas
}

// DescribeClientQuotasEntity is one component of a quota entity.
type DescribeClientQuotasEntity struct {
	// EntityType is "user", "client-id" or "ip".
	EntityType string

	// EntityName is the name, empty for the default entity of the type.
	EntityName string
}

// DescribeClientQuotasValue is one quota.
type DescribeClientQuotasValue struct {
	// Key is the quota, such as "consumer_byte_rate".
	Key string

	// Value is the quota's value.
	Value float64
}

// DescribeClientQuotasResponseQuotas is an entity and its quotas.
type DescribeClientQuotasResponseQuotas struct {
	// Entities identify the entity.
	Entities []DescribeClientQuotasEntity

	// Values are the entity's quotas.
	Values []DescribeClientQuotasValue
}

// DescribeClientQuotas lists client quotas.
func (c *Client) DescribeClientQuotas(ctx context.Context, req *DescribeClientQuotasRequest) (*DescribeClientQuotasResponse, error) {
	msg := &describeclientquotas.Request{
		Components: make([]describeclientquotas.Component, len(req.Components)),
		Strict:     req.Strict,
	}
	for i, comp := range req.Components {
		msg.Components[i] = describeclientquotas.Component{EntityType: comp.EntityType, MatchType: comp.MatchType, Match: comp.Match}
	}

	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).DescribeClientQuotas: %w", err)
	}
	res := m.(*describeclientquotas.Response)
	out := &DescribeClientQuotasResponse{
		Throttle: makeDuration(res.ThrottleTimeMs),
		Error:    makeError(res.ErrorCode, res.ErrorMessage),
		Entries:  make([]DescribeClientQuotasResponseQuotas, len(res.Entries)),
	}
	for i, e := range res.Entries {
		q := DescribeClientQuotasResponseQuotas{
			Entities: make([]DescribeClientQuotasEntity, len(e.Entities)),
			Values:   make([]DescribeClientQuotasValue, len(e.Values)),
		}
		for j, ent := range e.Entities {
			q.Entities[j] = DescribeClientQuotasEntity{EntityType: ent.EntityType, EntityName: ent.EntityName}
		}
		for j, v := range e.Values {
			q.Values[j] = DescribeClientQuotasValue{Key: v.Key, Value: v.Value}
		}
		out.Entries[i] = q
	}
	return out, nil
}
