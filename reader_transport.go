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
	clientID := d.ClientID
	if clientID == "" {
		// As the Dialer's own connections (and v0.4.51's Readers) do.
		clientID = DefaultClientID
	}
	t := &Transport{
		ClientID: clientID,
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
