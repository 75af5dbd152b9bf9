package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/saslhandshake"
	"github.com/segmentio/kafka-go/sasl"
)

// dialRecorder is a Dialer.DialFunc that records the addresses dialed and
// fails every dial, so that nothing but the address matters.
type dialRecorder struct {
	mu     sync.Mutex
	dialed map[string]bool
}

func (r *dialRecorder) dial(ctx context.Context, network, address string) (net.Conn, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dialed == nil {
		r.dialed = make(map[string]bool)
	}
	r.dialed[address] = true
	return nil, errors.New("no network in this test")
}

func (r *dialRecorder) addresses() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for a := range r.dialed {
		out = append(out, a)
	}
	return out
}

// Every client applies a Dialer's Resolver by the same rule: the resolved
// host wins, the port given in the broker address is kept. A Reader, a
// ConsumerGroup, a Writer made by NewWriter and a Conn given the same
// Dialer dial the same address; a Client, whose Transport takes a
// BrokerResolver instead, dials that address too for the same host.
func TestResolverRuleSameForEveryClient(t *testing.T) {
	const want = "10.0.0.7:9092"
	newDialer := func(rec *dialRecorder) *Dialer {
		return &Dialer{Resolver: fixedResolver{"10.0.0.7:1234"}, DialFunc: rec.dial}
	}
	check := func(t *testing.T, rec *dialRecorder) {
		t.Helper()
		got := rec.addresses()
		if len(got) != 1 || got[0] != want {
			t.Errorf("dialed %v, want only %s", got, want)
		}
	}
	ctx := func(t *testing.T) context.Context {
		c, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		t.Cleanup(cancel)
		return c
	}

	t.Run("Conn", func(t *testing.T) {
		rec := new(dialRecorder)
		if _, err := newDialer(rec).DialContext(ctx(t), "tcp", "b:9092"); err == nil {
			t.Fatal("dial succeeded")
		}
		check(t, rec)
	})
	t.Run("Reader", func(t *testing.T) {
		rec := new(dialRecorder)
		r := NewReader(ReaderConfig{Brokers: []string{"b:9092"}, Topic: "t", Dialer: newDialer(rec), MaxWait: 10 * time.Millisecond})
		defer r.Close()
		if _, err := r.ReadMessage(ctx(t)); err == nil {
			t.Fatal("read succeeded")
		}
		check(t, rec)
	})
	t.Run("ConsumerGroup", func(t *testing.T) {
		rec := new(dialRecorder)
		cg, err := NewConsumerGroup(ConsumerGroupConfig{ID: "g", Brokers: []string{"b:9092"}, Topics: []string{"t"}, Dialer: newDialer(rec)})
		if err != nil {
			t.Fatal(err)
		}
		defer cg.Close()
		if _, err := cg.Next(ctx(t)); err == nil {
			t.Fatal("joined a group")
		}
		check(t, rec)
	})
	t.Run("Writer", func(t *testing.T) {
		rec := new(dialRecorder)
		w := NewWriter(WriterConfig{Brokers: []string{"b:9092"}, Topic: "t", Dialer: newDialer(rec), MaxAttempts: 1})
		defer w.Close()
		if err := w.WriteMessages(ctx(t), Message{Value: []byte("v")}); err == nil {
			t.Fatal("write succeeded")
		}
		check(t, rec)
	})
	t.Run("Client", func(t *testing.T) {
		rec := new(dialRecorder)
		c := &Client{Addr: TCP("b:9092"), Transport: &Transport{Dial: rec.dial, Resolver: ipResolver("10.0.0.7")}}
		if _, err := c.Metadata(ctx(t), &MetadataRequest{}); err == nil {
			t.Fatal("metadata request succeeded")
		}
		check(t, rec)
	})
}

type ipResolver string

func (r ipResolver) LookupBrokerIPAddr(context.Context, Broker) ([]net.IPAddr, error) {
	return []net.IPAddr{{IP: net.ParseIP(string(r))}}, nil
}

func TestResolveAddress(t *testing.T) {
	for _, c := range []struct {
		address string
		answers fixedResolver
		want    string
	}{
		{"b:9093", fixedResolver{"10.0.0.7:1234"}, "10.0.0.7:9093"}, // the port asked for is kept
		{"b", fixedResolver{"10.0.0.7:1234"}, "10.0.0.7:1234"},      // else the resolver's
		{"b", fixedResolver{"10.0.0.7"}, "10.0.0.7:9092"},           // else Kafka's
		{"b:9093", fixedResolver{"10.0.0.7"}, "10.0.0.7:9093"},
		{"b:9093", fixedResolver{"::1"}, "[::1]:9093"},
		{"b:9093", fixedResolver{"[::1]:1234"}, "[::1]:9093"},
		{"b:9093", fixedResolver{"x", "y"}, "x:9093"}, // the first answer
		{"b:9093", fixedResolver{}, "b:9093"},         // no answer: unchanged
		{"b", fixedResolver{}, "b:9092"},
	} {
		got, err := resolveAddress(context.Background(), c.answers, c.address)
		if err != nil || got != c.want {
			t.Errorf("resolveAddress(%q) with %v = %q, %v; want %q", c.address, c.answers, got, err, c.want)
		}
	}
	failing := failingResolver{errors.New("dns down")}
	if _, err := resolveAddress(context.Background(), failing, "b:9092"); err == nil || !errors.Is(err, failing.err) {
		t.Errorf("a resolver error is returned: %v", err)
	}
}

type failingResolver struct{ err error }

func (r failingResolver) LookupHost(context.Context, string) ([]string, error) { return nil, r.err }

// hostRecorder is a SASL mechanism that records the host it is told it
// authenticates with, then aborts the exchange.
type hostRecorder struct {
	mu    sync.Mutex
	hosts []string
}

func (h *hostRecorder) Name() string { return "PLAIN" }

func (h *hostRecorder) Start(ctx context.Context) (sasl.StateMachine, []byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if m := sasl.MetadataFromContext(ctx); m != nil {
		h.hosts = append(h.hosts, m.Host)
	} else {
		h.hosts = append(h.hosts, "<no metadata>")
	}
	return nil, nil, errors.New("recorded")
}

func (h *hostRecorder) seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.hosts...)
}

// A resolver changes where a connection goes, not whom it talks to: the TLS
// certificate is checked against the broker's host name and SASL is told
// that name, for a Transport (BrokerResolver, seed and metadata brokers
// alike) and for a Dialer (Resolver).
func TestResolverKeepsBrokerNameForTLSAndSASL(t *testing.T) {
	const name = "kafka.invalid"
	serverConf, clientConf := tpSelfSignedTLS(t)
	fc := fakebroker.NewTLS(t, 1, serverConf)
	fc.Brokers[0].Host = name // the metadata names the broker by host name
	fc.SetHandler(func(r *fakebroker.Request) {
		if r.Msg.ApiKey() == protocol.SaslHandshake {
			r.Reply(&saslhandshake.Response{Mechanisms: []string{"PLAIN"}})
		}
	})
	_, port, _ := net.SplitHostPort(fc.Addr().String())

	// The client checks the certificate (issued to 127.0.0.1) itself and
	// records the name it was told to expect.
	var mu sync.Mutex
	var serverNames []string
	tlsConf := clientConf.Clone()
	tlsConf.InsecureSkipVerify = true
	tlsConf.VerifyConnection = func(cs tls.ConnectionState) error {
		mu.Lock()
		serverNames = append(serverNames, cs.ServerName)
		mu.Unlock()
		return nil
	}
	checkNames := func(t *testing.T, mech *hostRecorder) {
		t.Helper()
		mu.Lock()
		got := append([]string(nil), serverNames...)
		serverNames = nil
		mu.Unlock()
		if len(got) == 0 {
			t.Fatal("no TLS handshake")
		}
		for _, n := range got {
			if n != name {
				t.Errorf("TLS server name %q, want %q", n, name)
			}
		}
		hosts := mech.seen()
		if len(hosts) == 0 {
			t.Fatal("no SASL exchange")
		}
		for _, h := range hosts {
			if h != name {
				t.Errorf("SASL host %q, want %q", h, name)
			}
		}
	}

	t.Run("Transport", func(t *testing.T) {
		mech := new(hostRecorder)
		tr := &Transport{
			TLS:         tlsConf,
			SASL:        mech,
			MetadataTTL: time.Hour,
			Resolver:    &tpMapResolver{ips: map[string]string{name: "127.0.0.1"}},
		}
		defer tr.CloseIdleConnections()
		if _, err := tr.RoundTrip(testContext(t), TCP(name+":"+port), tpProduceRequest(0, -1)); err == nil {
			t.Fatal("the exchange succeeded although SASL failed")
		}
		checkNames(t, mech)
	})
	t.Run("Dialer", func(t *testing.T) {
		mech := new(hostRecorder)
		d := &Dialer{TLS: tlsConf, SASLMechanism: mech, Resolver: fixedResolver{"127.0.0.1"}, Timeout: 10 * time.Second}
		if c, err := d.DialContext(testContext(t), "tcp", name+":"+port); err == nil {
			c.Close()
			t.Fatal("the dial succeeded although SASL failed")
		}
		checkNames(t, mech)
	})
}

// dnsAnswers is a DNS server, reached through the *net.Resolver's Dial, that
// answers every A question with ips in that order and every other question
// with nothing.
func dnsAnswers(ips ...string) *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			client, server := net.Pipe()
			go func() {
				defer server.Close()
				buf := make([]byte, 512)
				for {
					n, err := server.Read(buf)
					if err != nil {
						return
					}
					// net.Pipe is no PacketConn, so the resolver frames
					// its messages as over TCP: a two-byte length first.
					q := buf[2:n]
					// The question ends after its name (labels up to a
					// zero byte) and its type and class.
					end := 12
					for end < len(q) && q[end] != 0 {
						end += int(q[end]) + 1
					}
					end += 5
					qtype := int(q[end-4])<<8 | int(q[end-3])
					var answers [][]byte
					if qtype == 1 {
						for _, ip := range ips {
							rr := []byte{0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4}
							answers = append(answers, append(rr, net.ParseIP(ip).To4()...))
						}
					}
					res := append([]byte{q[0], q[1], 0x81, 0x80, 0, 1, 0, byte(len(answers)), 0, 0, 0, 0}, q[12:end]...)
					for _, a := range answers {
						res = append(res, a...)
					}
					res = append([]byte{byte(len(res) >> 8), byte(len(res))}, res...)
					if _, err := server.Write(res); err != nil {
						return
					}
				}
			}()
			return client, nil
		},
	}
}

// A Dialer uses the first address its Resolver answers, and only that one,
// as v0.4.51 does; a *net.Resolver is no exception (v0.4.51 calls its
// LookupHost like any other Resolver's): when the first address refuses
// the connection, the dial fails, although the second would have taken it.
func TestResolverFirstAnswerOnly(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	// 127.0.0.2 is loopback too, but nothing listens there on port.
	r := dnsAnswers("127.0.0.2", "127.0.0.1")
	answers, err := r.LookupHost(testContext(t), "kafka.test")
	if err != nil || len(answers) != 2 || answers[0] != "127.0.0.2" {
		t.Fatalf("the fake DNS answers %v, %v; want [127.0.0.2 127.0.0.1]", answers, err)
	}
	d := &Dialer{Resolver: r, Timeout: 10 * time.Second}
	c, err := d.DialContext(testContext(t), "tcp", "kafka.test:"+port)
	if err == nil {
		c.Close()
		t.Fatal("dialed the resolver's second answer")
	}
	if !strings.Contains(err.Error(), "127.0.0.2:"+port) {
		t.Fatalf("error %v does not name the first answer", err)
	}
}
