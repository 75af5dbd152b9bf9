package kafka

import (
	"context"
)

// newDialerTransport builds the Transport that a Reader or ConsumerGroup
// sends all its requests through, configured from the Dialer the program
// gave (or DefaultDialer). The transport belongs to its Reader or group:
// cancelling ctx closes all of its connections.
func newDialerTransport(ctx context.Context, d *Dialer) *Transport {
	if d == nil {
		d = DefaultDialer
	}
	t := &Transport{
		ClientID: d.ClientID,
		TLS:      d.TLS,
		SASL:     d.SASLMechanism,
		Context:  ctx,
		Dial:     d.dialFunc(),
	}
	if d.Timeout > 0 {
		t.DialTimeout = d.Timeout
	}
	return t
}
