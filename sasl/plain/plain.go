// Package plain implements the SASL PLAIN mechanism (RFC 4616), which sends
// the credentials as they are: use it only over TLS.
package plain

import (
	"context"

	"github.com/segmentio/kafka-go/sasl"
)

// Mechanism authenticates with a user name and password. The exchange has a
// single message, so the value also serves as its own StateMachine.
type Mechanism struct {
	Username string
	Password string
}

// Name implements sasl.Mechanism.
func (Mechanism) Name() string { return "PLAIN" }

// Start implements sasl.Mechanism. The initial response is
// NUL username NUL password, with an empty authorization identity.
func (m Mechanism) Start(ctx context.Context) (sasl.StateMachine, []byte, error) {
	msg := make([]byte, 0, 2+len(m.Username)+len(m.Password))
	msg = append(msg, 0)
	msg = append(msg, m.Username...)
	msg = append(msg, 0)
	msg = append(msg, m.Password...)
	return m, msg, nil
}

// Next implements sasl.StateMachine. The broker answers the initial response
// with an error when the credentials are wrong, so reaching Next means
// authentication succeeded.
func (m Mechanism) Next(ctx context.Context, challenge []byte) (bool, []byte, error) {
	return true, nil, nil
}
