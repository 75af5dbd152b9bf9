package kafka

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol/alterclientquotas"
)

// AlterClientQuotasRequest sets or removes quotas of users and client IDs.
type AlterClientQuotasRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr

	// Entries are the changes, one per quota entity.
	Entries []AlterClientQuotaEntry

	// ValidateOnly checks the request without changing anything.
	ValidateOnly bool
}

// AlterClientQuotaEntry lists the quota changes of one entity.
type AlterClientQuotaEntry struct {
	// Entities identify the entity, such as a user, a client ID, or both.
	Entities []AlterClientQuotaEntity

	// Ops are the changes to the entity's quotas.
	Ops []AlterClientQuotaOps
}

// AlterClientQuotaEntity is one component of a quota entity.
type AlterClientQuotaEntity struct {
	// EntityType is "user", "client-id" or "ip".
	EntityType string

	// EntityName is the user, client ID or IP; empty stands for the
	// default entity of the type.
	EntityName string
}

// AlterClientQuotaOps sets or removes one quota.
type AlterClientQuotaOps struct {
	// Key is the quota, such as "producer_byte_rate".
	Key string

	// Value is the quota's new value (ignored when removing).
	Value float64

	// Remove removes the quota instead of setting it.
	Remove bool
}

// AlterClientQuotaResponseQuotas is the outcome for one entity.
type AlterClientQuotaResponseQuotas struct {
	// Error is nil when the entity's quotas were changed; errors.Is
	// matches it against the Error codes.
	Error error

	// Entities identify the entity.
	Entities []AlterClientQuotaEntity
}

// AlterClientQuotasResponse is the answer to an AlterClientQuotasRequest.
type AlterClientQuotasResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Entries has the outcome for each entity.
	Entries []AlterClientQuotaResponseQuotas
}

// AlterClientQuotas sets or removes client quotas.
func (c *Client) AlterClientQuotas(ctx context.Context, req *AlterClientQuotasRequest) (*AlterClientQuotasResponse, error) {
	msg := &alterclientquotas.Request{
		Entries:      make([]alterclientquotas.Entry, len(req.Entries)),
		ValidateOnly: req.ValidateOnly,
	}
	for i, e := range req.Entries {
		entry := alterclientquotas.Entry{
			Entities: make([]alterclientquotas.Entity, len(e.Entities)),
			Ops:      make([]alterclientquotas.Ops, len(e.Ops)),
		}
		for j, ent := range e.Entities {
			entry.Entities[j] = alterclientquotas.Entity{EntityType: ent.EntityType, EntityName: ent.EntityName}
		}
		for j, op := range e.Ops {
			entry.Ops[j] = alterclientquotas.Ops{Key: op.Key, Value: op.Value, Remove: op.Remove}
		}
		msg.Entries[i] = entry
	}

	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).AlterClientQuotas: %w", err)
	}
	res := m.(*alterclientquotas.Response)
	out := &AlterClientQuotasResponse{
		Throttle: makeDuration(res.ThrottleTimeMs),
		Entries:  make([]AlterClientQuotaResponseQuotas, len(res.Results)),
	}
	for i, r := range res.Results {
		entities := make([]AlterClientQuotaEntity, len(r.Entities))
		for j, ent := range r.Entities {
			entities[j] = AlterClientQuotaEntity{EntityType: ent.EntityType, EntityName: ent.EntityName}
		}
		out.Entries[i] = AlterClientQuotaResponseQuotas{Error: makeError(r.ErrorCode, r.ErrorMessage), Entities: entities}
	}
	return out, nil
}
