package kafka

import (
	"context"
	"errors"
	"net"
	"testing"
)

func TestBrokerResolverLiteralIP(t *testing.T) {
	// IP literals resolve without any DNS traffic.
	r := NewBrokerResolver(nil)
	addrs, err := r.LookupBrokerIPAddr(context.Background(), Broker{Host: "127.0.0.1", Port: 9092, ID: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(addrs) != 1 || !addrs[0].IP.Equal(net.IPv4(127, 0, 0, 1)) {
		t.Fatalf("got %v", addrs)
	}
}

func TestBrokerResolverError(t *testing.T) {
	// A resolver whose DNS server refuses connections makes lookups fail;
	// the error is returned as is.
	r := NewBrokerResolver(&net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			return nil, errors.New("no dns in tests")
		},
	})
	_, err := r.LookupBrokerIPAddr(context.Background(), Broker{Host: "broker-1.invalid-for-tests"})
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) {
		t.Fatalf("got %v", err)
	}
}

var _ Resolver = net.DefaultResolver
