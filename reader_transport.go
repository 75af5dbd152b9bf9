package kafka

import (
	"context"
	"net"
	"time"
)

// newDialerTransport builds the Transport that a Reader or ConsumerGroup
// sends all its requests through, configured from the Dialer the program
// gave (or DefaultDialer). The transport belongs to its Reader or group:
// cancelling ctx closes all of its connections.
func newDialerTransport(ctx context.Context, d *Dialer) *Transport {
	if d == nil {
		d = DefaultDialer
	}
	dial := d.DialFunc
	if dial == nil {
		nd := &net.Dialer{
			Timeout:       d.Timeout,
			Deadline:      d.Deadline,
			LocalAddr:     d.LocalAddr,
			FallbackDelay: d.FallbackDelay,
			KeepAlive:     d.KeepAlive,
		}
		dial = nd.DialContext
	}
	resolver := d.Resolver
	t := &Transport{
		ClientID: d.ClientID,
		TLS:      d.TLS,
		SASL:     d.SASLMechanism,
		Context:  ctx,
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			if resolver != nil {
				if host, port, err := net.SplitHostPort(address); err == nil {
					addrs, err := resolver.LookupHost(ctx, host)
					if err != nil {
						return nil, err
					}
					if len(addrs) > 0 {
						address = net.JoinHostPort(addrs[0], port)
					}
				}
			}
			return dial(ctx, network, address)
		},
	}
	if d.Timeout > 0 {
		t.DialTimeout = d.Timeout
	}
	return t
}

// sleepContext waits for d, and reports false if ctx ended first.
func sleepContext(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// retryDelay grows quadratically with the number of attempts already made:
// none before the first retry, then lo, 4*lo, 9*lo, ... capped at hi.
func retryDelay(attempt int, lo, hi time.Duration) time.Duration {
	if attempt <= 0 {
		return 0
	}
	if lo <= 0 {
		return 0
	}
	n := int64(attempt)
	if n > 1<<20 || n*n > int64(hi/lo) {
		return hi
	}
	return time.Duration(n*n) * lo
}
