package kafka

import (
	"net"
	"strings"
)

// TCP returns the address of one or more kafka brokers reachable over TCP.
// Addresses without a port get kafka's default port 9092. With several
// addresses, the result lists them all (comma-separated in String) and
// clients try them as alternative bootstrap servers. TCP() returns nil.
func TCP(address ...string) net.Addr { return makeNetAddr("tcp", address) }

func makeNetAddr(network string, addresses []string) net.Addr {
	switch len(addresses) {
	case 0:
		return nil
	case 1:
		return makeAddr(network, addresses[0])
	}
	m := make(multiAddr, len(addresses))
	for i, a := range addresses {
		m[i] = makeAddr(network, a)
	}
	return m
}

func makeAddr(network, address string) net.Addr {
	return &networkAddress{network: network, address: withDefaultPort(address)}
}

// withDefaultPort normalizes address to host:port, adding port 9092 when
// address has no port.
func withDefaultPort(address string) string {
	host, port, err := net.SplitHostPort(address)
	if err != nil || (host == "" && port == "") {
		host, port = address, "9092"
	}
	return net.JoinHostPort(host, port)
}

// networkAddress is a net.Addr made of plain strings. It is comparable, so
// that it can key maps of per-broker state.
type networkAddress struct {
	network string
	address string
}

func (a *networkAddress) Network() string { return a.network }

func (a *networkAddress) String() string { return a.address }

// multiAddr is a list of alternative addresses of the same cluster.
type multiAddr []net.Addr

func (m multiAddr) Network() string { return m.join(net.Addr.Network) }

func (m multiAddr) String() string { return m.join(net.Addr.String) }

func (m multiAddr) join(part func(net.Addr) string) string {
	parts := make([]string, len(m))
	for i, a := range m {
		parts[i] = part(a)
	}
	return strings.Join(parts, ",")
}
