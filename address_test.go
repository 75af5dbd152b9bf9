package kafka

import (
	"net"
	"testing"
)

func TestTCP(t *testing.T) {
	if TCP() != nil {
		t.Fatal("TCP() must be nil")
	}
	tests := map[string]string{
		"localhost":      "localhost:9092",
		"localhost:9093": "localhost:9093",
		"10.0.0.1":       "10.0.0.1:9092",
		"[::1]:9094":     "[::1]:9094",
		":9095":          ":9095",
	}
	for in, want := range tests {
		a := TCP(in)
		if a.Network() != "tcp" || a.String() != want {
			t.Errorf("TCP(%q) = %s/%s, want tcp/%s", in, a.Network(), a.String(), want)
		}
	}
	multi := TCP("a", "b:1", "c:2")
	if multi.Network() != "tcp,tcp,tcp" || multi.String() != "a:9092,b:1,c:2" {
		t.Fatalf("got %s %s", multi.Network(), multi.String())
	}
	if addrs, ok := multi.(addrList); !ok || len(addrs) != 3 || addrs[1].String() != "b:1" {
		t.Fatalf("unexpected %#v", multi)
	}
	// brokerAddr values are comparable map keys.
	m := map[brokerAddr]int{*TCP("x").(*brokerAddr): 1}
	if m[brokerAddr{network: "tcp", address: "x:9092"}] != 1 {
		t.Fatal("brokerAddr as map key")
	}
	var _ net.Addr = addrList(nil)
}
