// Package sasl defines the interfaces through which the client runs a SASL
// authentication exchange with a Kafka broker, and the metadata passed to
// mechanisms about the broker being authenticated to.
package sasl

import "context"

// Mechanism is a SASL mechanism (PLAIN, SCRAM-SHA-256, ...). One Mechanism
// value serves every connection, so implementations must be reusable and
// safe for concurrent use.
type Mechanism interface {
	// Name is the mechanism name sent in the SaslHandshake request; it must
	// be one the broker has enabled.
	Name() string

	// Start opens an exchange for one connection. It returns the state
	// machine for the rest of the exchange and the initial response to send
	// to the broker. A nil ir means the mechanism has no initial response,
	// which is not the same as an empty one (sent as zero bytes). A non-nil
	// error aborts authentication.
	Start(ctx context.Context) (sess StateMachine, ir []byte, err error)
}

// StateMachine carries one connection's exchange after Start: each broker
// challenge is passed to Next, and the returned response sent back, until
// Next reports done (authenticated) or an error (abort). It is used by a
// single goroutine.
type StateMachine interface {
	// Next consumes a challenge from the broker and produces the response.
	Next(ctx context.Context, challenge []byte) (done bool, response []byte, err error)
}

// Metadata describes the broker an exchange authenticates to, for
// mechanisms whose messages depend on it.
type Metadata struct {
	// Host is the broker's host name or address, Port its port.
	Host string
	Port int
}

type metadataKey struct{}

// WithMetadata returns a child of ctx carrying m.
func WithMetadata(ctx context.Context, m *Metadata) context.Context {
	return context.WithValue(ctx, metadataKey{}, m)
}

// MetadataFromContext returns the Metadata attached by WithMetadata, or nil.
func MetadataFromContext(ctx context.Context) *Metadata {
	if m, ok := ctx.Value(metadataKey{}).(*Metadata); ok {
		return m
	}
	return nil
}
