package kafka

import (
	"net"
	"strings"
)

// TCP returns the address of one or more kafka brokers reachable over TCP.
// Addresses without a port get kafka's default port 9092. With several
// addresses, the result lists them all (comma-separated in String) and
// clients try them as alternative bootstrap servers. TCP() returns nil.
func TCP(address ...string) net.Addr {
	if len(address) == 0 {
		return nil
	}
	if len(address) == 1 {
		return tcpAddr(address[0])
	}
	list := addrList{}
	for _, a := range address {
		list = append(list, tcpAddr(a))
	}
	return list
}

func tcpAddr(address string) *brokerAddr {
	return &brokerAddr{network: "tcp", address: hostPort(address)}
}

// hostPort returns address in host:port form, with the default kafka port
// 9092 when address names none.
func hostPort(address string) string {
	if host, port, err := net.SplitHostPort(address); err == nil && (host != "" || port != "") {
		return net.JoinHostPort(host, port)
	}
	return net.JoinHostPort(address, "9092")
}

// brokerAddr is a net.Addr held as two strings. Values are comparable, so
// per-broker state can be kept in maps keyed by them.
type brokerAddr struct {
	network string
	address string
}

func (a *brokerAddr) Network() string { return a.network }

func (a *brokerAddr) String() string { return a.address }

// addrList holds alternative addresses of one cluster; each method answers
// with the members' answers separated by commas.
type addrList []net.Addr

func (l addrList) Network() string { return l.join(net.Addr.Network) }

func (l addrList) String() string { return l.join(net.Addr.String) }

func (l addrList) join(part func(net.Addr) string) string {
	var b strings.Builder
	for i, a := range l {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(part(a))
	}
	return b.String()
}
