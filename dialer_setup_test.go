package kafka

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/saslhandshake"
	"github.com/segmentio/kafka-go/sasl/plain"
)

// A Dialer's Timeout and its context's end each interrupt every stage of a
// connection's setup that a broker can stall: the dial, the TLS handshake,
// ApiVersions, SaslHandshake and SaslAuthenticate. A stalled stage that
// ignored them would hang DialContext forever.
func TestDialerInterruptsEverySetupStage(t *testing.T) {
	// stallOn makes a fake broker never answer requests of key.
	stallOn := func(t *testing.T, key protocol.ApiKey) string {
		fc := fakebroker.New(t, 1)
		fc.Brokers[0].Intercept = func(c *fakebroker.Conn, r *fakebroker.Request) bool {
			switch r.Msg.ApiKey() {
			case key:
				return true // never answered
			case protocol.SaslHandshake:
				r.Reply(&saslhandshake.Response{Mechanisms: []string{"PLAIN"}})
				return true
			}
			return false
		}
		return fc.Addr().String()
	}
	// silent accepts connections and never writes: a TLS client waits for
	// the server's hello forever.
	silent := func(t *testing.T) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				t.Cleanup(func() { c.Close() })
			}
		}()
		return ln.Addr().String()
	}
	// blockingDial waits for its context to end, as a dial to a host that
	// drops packets does.
	blockingDial := func(ctx context.Context, network, address string) (net.Conn, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	_, clientTLS := tpSelfSignedTLS(t)
	mech := plain.Mechanism{Username: "u", Password: "p"}

	stages := []struct {
		name  string
		setup func(t *testing.T, d *Dialer) string // configures d, returns the address
	}{
		{"dial", func(t *testing.T, d *Dialer) string { d.DialFunc = blockingDial; return "127.0.0.1:1" }},
		{"tls", func(t *testing.T, d *Dialer) string { d.TLS = clientTLS; return silent(t) }},
		{"apiversions", func(t *testing.T, d *Dialer) string { return stallOn(t, protocol.ApiVersions) }},
		{"sasl-handshake", func(t *testing.T, d *Dialer) string {
			d.SASLMechanism = mech
			return stallOn(t, protocol.SaslHandshake)
		}},
		{"sasl-authenticate", func(t *testing.T, d *Dialer) string {
			d.SASLMechanism = mech
			return stallOn(t, protocol.SaslAuthenticate)
		}},
	}
	// Neither bound is measured: the test checks that DialContext returns,
	// with the error that names the bound, within a watchdog that only
	// catches a hang.
	dialWithin := func(t *testing.T, d *Dialer, ctx context.Context, address string) error {
		t.Helper()
		done := make(chan error, 1)
		go func() {
			c, err := d.DialContext(ctx, "tcp", address)
			if c != nil {
				c.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil {
				t.Fatal("the dial succeeded against a stalled broker")
			}
			return err
		case <-time.After(20 * time.Second):
			t.Fatal("DialContext did not return")
			return nil
		}
	}
	for _, st := range stages {
		t.Run(st.name+"/Timeout", func(t *testing.T) {
			d := &Dialer{Timeout: 50 * time.Millisecond}
			address := st.setup(t, d)
			err := dialWithin(t, d, context.Background(), address)
			var ne net.Error
			if !errors.Is(err, context.DeadlineExceeded) && !(errors.As(err, &ne) && ne.Timeout()) {
				t.Fatalf("error %v is not a timeout", err)
			}
		})
		t.Run(st.name+"/Cancel", func(t *testing.T) {
			d := &Dialer{}
			address := st.setup(t, d)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			err := dialWithin(t, d, ctx, address)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("error %v does not wrap context.Canceled", err)
			}
		})
	}
}
