package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/internal/faultproxy"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/saslauthenticate"
	"github.com/segmentio/kafka-go/protocol/saslhandshake"
	"github.com/segmentio/kafka-go/sasl/plain"
)

// Tests of what callers see when a connection ends under a request: the
// broker goes away (FIN) or resets the connection (RST) before or after
// acting on a request, during the handshake, or refuses the dial. The
// faults are made by internal/faultproxy, reached through Transport.Dial
// and Dialer.DialFunc.

func newFaultProxy(t *testing.T) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.New()
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

// onKey applies action to the first n requests of key, and forwards the
// rest.
func onKey(key protocol.ApiKey, n int32, action faultproxy.Action) faultproxy.Rule {
	var seen atomic.Int32
	return func(r faultproxy.Request) faultproxy.Action {
		if r.ApiKey == int16(key) && seen.Add(1) <= n {
			return action
		}
		return faultproxy.Forward
	}
}

// checkLost checks the error of a request whose connection ended: upstream
// returns io.ErrUnexpectedEOF itself for an end of stream; a reset is
// ECONNRESET. Either is transient for the Writer.
func checkLost(t *testing.T, action faultproxy.Action, err error) {
	t.Helper()
	require.Error(t, err)
	require.NotErrorIs(t, err, io.EOF, "a bare io.EOF reached the caller: %v", err)
	require.True(t, writerRetriable(err), "not retriable: %v", err)
	if action == faultproxy.CloseBefore || action == faultproxy.CloseAfter {
		require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	}
}

func TestTransportConnectionLostUnderRequest(t *testing.T) {
	for _, action := range []faultproxy.Action{faultproxy.CloseBefore, faultproxy.ResetBefore, faultproxy.CloseAfter, faultproxy.ResetAfter} {
		t.Run(action.String(), func(t *testing.T) {
			fc := fakebroker.New(t, 1)
			fc.SetHandler(func(r *fakebroker.Request) {
				if r.Msg.ApiKey() == protocol.Produce {
					tpProduceReply(r, 0)
				}
			})
			p := newFaultProxy(t)
			p.SetRule(onKey(protocol.Produce, 1, action))
			tr := tpNewTransport(t)
			tr.Dial = p.Dial
			ctx := testContext(t)

			_, err := tr.RoundTrip(ctx, fc.Addr(), tpProduceRequest(0, -1))
			checkLost(t, action, err)
			if action == faultproxy.CloseBefore || action == faultproxy.ResetBefore {
				require.Equal(t, 0, fc.Count(protocol.Produce, 0), "the broker saw a request dropped before it")
			} else {
				require.Equal(t, 1, fc.Count(protocol.Produce, 0), "the broker did not see the request whose answer was lost")
				require.Equal(t, 1, p.Stats().Dropped)
			}
			// The next request gets a new connection.
			_, err = tr.RoundTrip(ctx, fc.Addr(), tpProduceRequest(0, -1))
			require.NoError(t, err)
			require.Equal(t, 1, p.Stats().Fired[action])
		})
	}
}

// A connection the broker closed while idle fails the next request sent on
// it with io.ErrUnexpectedEOF (its reader saw the end first), not io.EOF.
func TestBrokerConnClosedWhileIdle(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.SetHandler(func(r *fakebroker.Request) { tpProduceReply(r, 0) })
	p := newFaultProxy(t)
	cfg := &dialConfig{dial: p.Dial, dialTimeout: 10 * time.Second, clientID: "test"}
	c, err := dialBroker(testContext(t), cfg, "tcp", fc.Addr().String(), fc.Addr().String(), false)
	require.NoError(t, err)
	defer c.close(errConnClosed)
	p.CloseAll()
	<-c.done
	_, err = c.roundTrip(testContext(t), tpProduceRequest(0, -1))
	require.Equal(t, io.ErrUnexpectedEOF, err)
}

func TestTransportConnectionLostInHandshake(t *testing.T) {
	saslBroker := func(b *fakebroker.Broker) {
		b.Intercept = func(c *fakebroker.Conn, r *fakebroker.Request) bool {
			switch r.Msg.ApiKey() {
			case protocol.SaslHandshake:
				r.Reply(&saslhandshake.Response{Mechanisms: []string{"PLAIN"}})
				return true
			case protocol.SaslAuthenticate:
				r.Reply(&saslauthenticate.Response{})
				return true
			}
			return false
		}
	}
	for _, tc := range []struct {
		key    protocol.ApiKey
		action faultproxy.Action
		want   string
	}{
		{protocol.ApiVersions, faultproxy.CloseBefore, "negotiating API versions"},
		{protocol.ApiVersions, faultproxy.CloseAfter, "negotiating API versions"},
		{protocol.ApiVersions, faultproxy.ResetBefore, "negotiating API versions"},
		{protocol.SaslHandshake, faultproxy.CloseBefore, "SASL PLAIN"},
		{protocol.SaslHandshake, faultproxy.ResetAfter, "SASL PLAIN"},
		{protocol.SaslAuthenticate, faultproxy.CloseBefore, "SASL PLAIN"},
		{protocol.SaslAuthenticate, faultproxy.CloseAfter, "SASL PLAIN"},
	} {
		t.Run(tc.key.String()+"/"+tc.action.String(), func(t *testing.T) {
			fc := fakebroker.New(t, 1)
			fc.SetHandler(func(r *fakebroker.Request) { tpProduceReply(r, 0) })
			p := newFaultProxy(t)
			p.SetRule(onKey(tc.key, 1, tc.action))
			tr := tpNewTransport(t)
			tr.Dial = p.Dial
			if tc.key != protocol.ApiVersions {
				saslBroker(fc.Brokers[0])
				tr.SASL = plain.Mechanism{Username: "u", Password: "p"}
			}
			ctx := testContext(t)
			_, err := tr.RoundTrip(ctx, fc.Addr(), tpProduceRequest(0, -1))
			checkLost(t, tc.action, err)
			require.Contains(t, err.Error(), tc.want)
			if tc.key != protocol.ApiVersions {
				// Still recognisable as a failed login, as before.
				require.ErrorIs(t, err, SASLAuthenticationFailed)
			}
			require.Equal(t, 1, p.Stats().Fired[tc.action])
			_, err = tr.RoundTrip(ctx, fc.Addr(), tpProduceRequest(0, -1))
			require.NoError(t, err)
		})
	}
}

func TestTransportDialRefused(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.SetHandler(func(r *fakebroker.Request) { tpProduceReply(r, 0) })
	p := newFaultProxy(t)
	var refuse atomic.Bool
	refuse.Store(true)
	p.SetRefuse(func(string) bool { return refuse.Load() })
	tr := tpNewTransport(t)
	tr.Dial = p.Dial
	_, err := tr.RoundTrip(testContext(t), fc.Addr(), tpProduceRequest(0, -1))
	require.Error(t, err)
	require.True(t, writerRetriable(err), "a refused dial is not retriable: %v", err)
	refuse.Store(false)
	_, err = tr.RoundTrip(testContext(t), fc.Addr(), tpProduceRequest(0, -1))
	require.NoError(t, err)
}

// Client.Produce reports the lost answer as upstream does: an error that
// is io.ErrUnexpectedEOF.
func TestClientProduceConnectionLost(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.SetHandler(func(r *fakebroker.Request) {
		if r.Msg.ApiKey() == protocol.Produce {
			tpProduceReply(r, 0)
		}
	})
	p := newFaultProxy(t)
	p.SetRule(onKey(protocol.Produce, 1, faultproxy.CloseAfter))
	tr := tpNewTransport(t)
	tr.Dial = p.Dial
	client := &Client{Addr: fc.Addr(), Transport: tr}
	_, err := client.Produce(testContext(t), &ProduceRequest{
		Topic: "t", Partition: 0, RequiredAcks: RequireAll,
		Records: NewRecordReader(Record{Value: NewBytes([]byte("v"))}),
	})
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	require.True(t, strings.HasSuffix(err.Error(), ": unexpected EOF"), err.Error())
}

// Conn, through Dialer.DialFunc: the same faults, the same errors.
func TestConnConnectionLost(t *testing.T) {
	newCluster := func(t *testing.T) *fakebroker.Cluster {
		fc := fakebroker.New(t, 1)
		fc.SetHandler(func(r *fakebroker.Request) {
			if r.Msg.ApiKey() == protocol.Produce {
				tpProduceReply(r, 0)
			}
		})
		return fc
	}
	for _, action := range []faultproxy.Action{faultproxy.CloseBefore, faultproxy.CloseAfter, faultproxy.ResetAfter} {
		t.Run("produce/"+action.String(), func(t *testing.T) {
			fc := newCluster(t)
			p := newFaultProxy(t)
			p.SetRule(onKey(protocol.Produce, 1, action))
			d := &Dialer{DialFunc: p.Dial, Timeout: 10 * time.Second}
			conn, err := d.DialLeader(testContext(t), "tcp", fc.Addr().String(), "t", 0)
			require.NoError(t, err)
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			_, err = conn.WriteMessages(Message{Value: []byte("v")})
			checkLost(t, action, err)
		})
	}
	t.Run("handshake", func(t *testing.T) {
		fc := newCluster(t)
		p := newFaultProxy(t)
		p.SetRule(onKey(protocol.ApiVersions, 1, faultproxy.CloseBefore))
		d := &Dialer{DialFunc: p.Dial, Timeout: 10 * time.Second}
		conn, err := d.DialContext(testContext(t), "tcp", fc.Addr().String())
		if err == nil {
			// The Conn may negotiate lazily, on its first request.
			defer conn.Close()
			_, err = conn.ApiVersions()
		}
		checkLost(t, faultproxy.CloseBefore, err)
	})
	for _, key := range []protocol.ApiKey{protocol.SaslHandshake, protocol.SaslAuthenticate} {
		t.Run("sasl/"+key.String(), func(t *testing.T) {
			fc := newCluster(t)
			fc.Brokers[0].Intercept = func(c *fakebroker.Conn, r *fakebroker.Request) bool {
				switch r.Msg.ApiKey() {
				case protocol.SaslHandshake:
					r.Reply(&saslhandshake.Response{Mechanisms: []string{"PLAIN"}})
					return true
				case protocol.SaslAuthenticate:
					r.Reply(&saslauthenticate.Response{})
					return true
				}
				return false
			}
			p := newFaultProxy(t)
			p.SetRule(onKey(key, 1, faultproxy.CloseBefore))
			d := &Dialer{DialFunc: p.Dial, Timeout: 10 * time.Second, SASLMechanism: plain.Mechanism{Username: "u", Password: "p"}}
			conn, err := d.DialContext(testContext(t), "tcp", fc.Addr().String())
			if err == nil {
				conn.Close()
			}
			checkLost(t, faultproxy.CloseBefore, err)
			require.ErrorIs(t, err, SASLAuthenticationFailed)
			require.False(t, errors.Is(err, context.DeadlineExceeded))
		})
	}
}

// SaslHandshake v0 sends the tokens raw; a broker that hangs up after the
// token (how such brokers refuse a login) gives both errors, and never a
// bare io.EOF: upstream's Dialer says SASLAuthenticationFailed, its
// Transport io.ErrUnexpectedEOF.
func TestTransportSASLRawTokenConnectionClosed(t *testing.T) {
	fc := fakebroker.New(t, 1)
	tpPlainV0Auth(fc.Brokers[0], "u", "p")
	tr := &Transport{SASL: plain.Mechanism{Username: "u", Password: "wrong"}, MetadataTTL: time.Hour}
	defer tr.CloseIdleConnections()
	_, err := tr.RoundTrip(testContext(t), fc.Addr(), tpProduceRequest(0, -1))
	require.ErrorIs(t, err, SASLAuthenticationFailed)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	require.NotErrorIs(t, err, io.EOF)

	d := &Dialer{Timeout: 10 * time.Second, SASLMechanism: plain.Mechanism{Username: "u", Password: "wrong"}}
	_, err = d.DialContext(testContext(t), "tcp", fc.Addr().String())
	require.ErrorIs(t, err, SASLAuthenticationFailed)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	require.NotErrorIs(t, err, io.EOF)
}

// A server that hangs up during the TLS handshake: the Transport and the
// Dialer report a lost connection (io.ErrUnexpectedEOF), which the Writer
// retries, not the io.EOF the TLS package returns.
func TestTLSHandshakeConnectionClosed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			// Read the hello first: closing with unread bytes would send
			// a RST, and this test is about the plain end of stream.
			buf := make([]byte, 64<<10)
			nc.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			for {
				if _, err := nc.Read(buf); err != nil {
					break
				}
			}
			nc.Close()
		}
	}()
	conf := &tls.Config{InsecureSkipVerify: true}
	tr := &Transport{TLS: conf, MetadataTTL: time.Hour}
	defer tr.CloseIdleConnections()
	_, err = tr.RoundTrip(testContext(t), TCP(ln.Addr().String()), tpProduceRequest(0, -1))
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	require.NotErrorIs(t, err, io.EOF)

	d := &Dialer{Timeout: 10 * time.Second, TLS: conf}
	_, err = d.DialContext(testContext(t), "tcp", ln.Addr().String())
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	require.NotErrorIs(t, err, io.EOF)
}

// The Writer over a connection lost before or after the broker appended
// the batch: it dials again and sends the batch again, and the write
// succeeds; after the append, the broker has it twice, as with upstream.
func TestWriterRetriesLostConnection(t *testing.T) {
	for _, action := range []faultproxy.Action{faultproxy.CloseBefore, faultproxy.ResetBefore, faultproxy.CloseAfter, faultproxy.ResetAfter} {
		for _, async := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/async=%v", action, async), func(t *testing.T) {
				fc := fakebroker.New(t, 1)
				fc.SetHandler(func(r *fakebroker.Request) {
					if r.Msg.ApiKey() == protocol.Produce {
						tpProduceReply(r, 0)
					}
				})
				p := newFaultProxy(t)
				p.SetRule(onKey(protocol.Produce, 1, action))
				tr := tpNewTransport(t)
				tr.Dial = p.Dial
				done := make(chan error, 1)
				w := &Writer{
					Addr: fc.Addr(), Topic: "t", Transport: tr, Async: async, RequiredAcks: RequireAll,
					BatchTimeout: time.Millisecond, WriteBackoffMin: time.Millisecond, MaxBufferedBatches: 1,
					Completion: func(_ []Message, err error) { done <- err },
				}
				require.NoError(t, w.WriteMessages(testContext(t), Message{Value: []byte("v")}))
				require.NoError(t, <-done)
				require.NoError(t, w.Close())
				want := 1
				if action == faultproxy.CloseAfter || action == faultproxy.ResetAfter {
					want = 2
				}
				require.Equal(t, want, fc.Count(protocol.Produce, 0))
				require.Equal(t, int64(1), w.Stats().Retries)
			})
		}
	}
}
