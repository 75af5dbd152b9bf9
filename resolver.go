package kafka

import (
	"context"
	"net"
)

// Resolver looks up the addresses of the hosts of a kafka cluster, for
// service discovery. *net.Resolver implements it.
type Resolver interface {
	// LookupHost returns the addresses of host.
	LookupHost(ctx context.Context, host string) (addrs []string, err error)
}

// BrokerResolver translates brokers, as the cluster metadata describes
// them, into IP addresses. Unlike Resolver it sees the whole Broker (ID and
// rack included), so that implementations can map brokers however the
// deployment requires.
//
// Implementations must be safe for concurrent use.
type BrokerResolver interface {
	// LookupBrokerIPAddr returns the IP addresses of broker.
	LookupBrokerIPAddr(ctx context.Context, broker Broker) ([]net.IPAddr, error)
}

// NewBrokerResolver returns a BrokerResolver that looks up the broker's Host
// with r, or with net.DefaultResolver when r is nil.
func NewBrokerResolver(r *net.Resolver) BrokerResolver {
	return &dnsBrokerResolver{dns: r}
}

// dnsBrokerResolver ignores everything about a broker but its Host.
type dnsBrokerResolver struct {
	dns *net.Resolver // nil is fine: net.Resolver's methods fall back to the default
}

func (d *dnsBrokerResolver) LookupBrokerIPAddr(ctx context.Context, broker Broker) ([]net.IPAddr, error) {
	ips, err := d.dns.LookupIPAddr(ctx, broker.Host)
	if err == nil && len(ips) == 0 {
		// Dialing needs at least one address. An empty but successful answer
		// is reported as a DNS miss worth retrying rather than as success.
		err = &net.DNSError{
			Name:        broker.Host,
			Err:         "no addresses were returned by the resolver",
			IsTemporary: true,
			IsNotFound:  true,
		}
	}
	if err != nil {
		return nil, err
	}
	return ips, nil
}
