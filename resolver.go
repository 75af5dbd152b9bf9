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
	return brokerResolver{r}
}

type brokerResolver struct {
	*net.Resolver // nil-safe: net.Resolver methods use the defaults on nil
}

func (r brokerResolver) LookupBrokerIPAddr(ctx context.Context, broker Broker) ([]net.IPAddr, error) {
	addrs, err := r.LookupIPAddr(ctx, broker.Host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		// A resolver may succeed with an empty answer; callers need at least
		// one address, so report it as a temporary not-found DNS error.
		return nil, &net.DNSError{
			Err:         "no addresses were returned by the resolver",
			Name:        broker.Host,
			IsNotFound:  true,
			IsTemporary: true,
		}
	}
	return addrs, nil
}
