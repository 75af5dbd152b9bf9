package kafka

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/segmentio/kafka-go/internal/eof"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/apiversions"
	"github.com/segmentio/kafka-go/protocol/saslauthenticate"
	"github.com/segmentio/kafka-go/protocol/saslhandshake"
	"github.com/segmentio/kafka-go/sasl"
)

// This file is the one way a connection of the package is opened and set
// up, whether it becomes a Conn (Dialer) or a Transport's brokerConn:
// resolve and dial (Dialer.dialFunc), then TLS, ApiVersions with its
// fallbacks and SASL (setupConn), all bounded by one context.

// dialConfig is what establishing a connection depends on. The Transport
// copies it out of its fields, so that later changes to them do not race
// with connections being set up; a Dialer builds one per dial.
type dialConfig struct {
	dial func(context.Context, string, string) (net.Conn, error)
	// dialTimeout bounds dial and setup together; zero means no bound
	// besides the context's.
	dialTimeout time.Duration
	clientID    string
	tls         *tls.Config
	sasl        sasl.Mechanism
}

// connSetup is a connection that went through setupConn: TLS done, API
// versions negotiated, SASL done. br reads nc; nothing is buffered in it
// yet, since a broker sends nothing unasked.
type connSetup struct {
	nc net.Conn
	br *bufio.Reader

	// versions holds the version to use for every API usable with this
	// broker; unusable the reason for every API the broker knows that we
	// cannot use; ranges the broker's advertised ranges.
	versions map[protocol.ApiKey]int16
	unusable map[protocol.ApiKey]error
	ranges   map[protocol.ApiKey][2]int16

	// expires is when the broker will end the authenticated session (zero
	// for never).
	expires time.Time
}

// openConn dials address with cfg.dial and sets the connection up as a
// connection to the broker called name (its address before any resolver;
// see setupConn). Dial and setup together are bounded by cfg.dialTimeout
// and by ctx. The connection
// is closed on any failure. A dial failure is returned as the dial function
// gave it, wrapped in a *dialError, so that callers can word it their way.
func openConn(ctx context.Context, cfg *dialConfig, network, address, name string) (*connSetup, error) {
	if cfg.dialTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.dialTimeout)
		defer cancel()
	}
	nc, err := cfg.dial(ctx, network, address)
	if err != nil {
		return nil, &dialError{err: err}
	}
	s, err := setupConn(ctx, cfg, nc, name)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return s, nil
}

// dialError is a failure to open the network connection itself (resolving
// included), as opposed to a failure setting it up.
type dialError struct{ err error }

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// setupConn runs TLS (when configured), then negotiates API versions and
// authenticates (when configured) on nc, synchronously, before anything
// else reads it. ctx's deadline bounds every exchange, and ctx ending
// interrupts a blocked read or write. nc keeps no deadline afterwards.
// address is the broker's address as the user or the cluster metadata names
// it (before any resolver): its host is the TLS server name and the SASL
// host, since a resolver changes where a connection goes, not whom it
// reaches.
func setupConn(ctx context.Context, cfg *dialConfig, nc net.Conn, address string) (*connSetup, error) {
	host, port := splitAddress(address)
	if cfg.tls != nil {
		conf := cfg.tls
		if conf.ServerName == "" {
			conf = conf.Clone()
			conf.ServerName = host
		}
		tc := tls.Client(nc, conf)
		if err := tc.HandshakeContext(ctx); err != nil {
			// A hang-up during the handshake is a lost connection:
			// io.ErrUnexpectedEOF, like any other, never io.EOF.
			return nil, ctxError(ctx, fmt.Errorf("kafka: TLS handshake with %s: %w", address, eof.Unexpected(err)))
		}
		nc = tc
	}

	if d, ok := ctx.Deadline(); ok {
		nc.SetDeadline(d)
	}
	release := interruptOnDone(ctx, func() { nc.SetDeadline(time.Unix(1, 0)) })
	defer release()

	hs := &handshake{nc: nc, br: bufio.NewReaderSize(nc, connReadBufferSize), clientID: cfg.clientID, address: address}
	if err := hs.negotiate(); err != nil {
		return nil, ctxError(ctx, err)
	}
	s := &connSetup{nc: nc, br: hs.br, versions: hs.versions, unusable: hs.unusable, ranges: hs.ranges}
	if cfg.sasl != nil {
		saslCtx := sasl.WithMetadata(ctx, &sasl.Metadata{Host: host, Port: port})
		if err := hs.authenticate(saslCtx, cfg.sasl); err != nil {
			return nil, ctxError(ctx, err)
		}
		if hs.sessionLifetime > 0 {
			// The broker closes the connection when the session ends;
			// stop using it a little before, so that no request is lost
			// to that.
			s.expires = hs.sessionFrom.Add(hs.sessionLifetime * 9 / 10)
		}
	}
	if release() {
		return nil, ctx.Err()
	}
	nc.SetDeadline(time.Time{})
	return s, nil
}

// dialFunc is the one adapter from a Dialer's settings to a dial function:
// the Dialer's Resolver applied by resolveAddress (a *net.Resolver too: as
// in v0.4.51, only its first answer is dialed), then its DialFunc, or a
// net.Dialer with its network settings. Conn (through Dialer), the Reader,
// the ConsumerGroup and the Writer made by NewWriter all dial through it.
func (d *Dialer) dialFunc() func(ctx context.Context, network, address string) (net.Conn, error) {
	resolver := d.Resolver
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
	if resolver == nil {
		return dial
	}
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		resolved, err := resolveAddress(ctx, resolver, address)
		if err != nil {
			return nil, err
		}
		return dial(ctx, network, resolved)
	}
}

// resolveAddress applies a Dialer's Resolver to address ("host:port" or a
// bare host): the first address the resolver gives replaces the host; the
// port of address is kept when it has one, else the resolver's is used,
// else Kafka's 9092. A resolver with no answer leaves the host as it was.
func resolveAddress(ctx context.Context, r Resolver, address string) (string, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		host, port = address, ""
	}
	answers, err := r.LookupHost(ctx, host)
	if err != nil {
		return "", fmt.Errorf("failed to resolve host %s: %w", host, err)
	}
	if len(answers) > 0 {
		rhost, rport, err := net.SplitHostPort(answers[0])
		if err != nil {
			rhost, rport = answers[0], ""
		}
		host = rhost
		if port == "" {
			port = rport
		}
	}
	if port == "" {
		port = "9092"
	}
	return net.JoinHostPort(host, port), nil
}

// handshake runs the exchanges of a connection's setup, one at a time.
type handshake struct {
	nc       net.Conn
	br       *bufio.Reader
	clientID string
	address  string
	id       int32

	versions map[protocol.ApiKey]int16
	unusable map[protocol.ApiKey]error
	ranges   map[protocol.ApiKey][2]int16

	// sessionLifetime is how long the broker keeps the authenticated
	// session (KIP-368), zero when it does not say; sessionFrom is when the
	// SaslAuthenticate request that said so was sent: no later than the
	// broker's start of the session, from which it counts.
	sessionLifetime time.Duration
	sessionFrom     time.Time
}

func (h *handshake) exchange(req protocol.Message, version int16) (protocol.Message, error) {
	h.id++
	var buf bytes.Buffer
	if err := protocol.WriteRequest(&buf, version, h.id, h.clientID, req); err != nil {
		return nil, err
	}
	if _, err := h.nc.Write(buf.Bytes()); err != nil {
		return nil, err
	}
	id, res, err := protocol.ReadResponse(h.br, req.ApiKey(), version)
	if err != nil {
		return nil, err
	}
	if id != h.id {
		return nil, fmt.Errorf("kafka: broker %s answered correlation ID %d to request %d", h.address, id, h.id)
	}
	return res, nil
}

// negotiate asks the broker for its API versions, at the highest version we
// know. A broker that does not know that version answers UNSUPPORTED_VERSION,
// usually with the range of ApiVersions versions it does know (see
// apiVersions for the layouts); we ask again in the highest version of that
// range below the one refused, or one version lower when the answer does not
// say. Every retry asks a lower version, so this ends after at most
// MaxVersion+1 exchanges.
func (h *handshake) negotiate() error {
	version := protocol.ApiVersions.MaxVersion()
	for {
		res, err := h.apiVersions(version)
		if err != nil {
			return fmt.Errorf("kafka: negotiating API versions with %s: %w", h.address, err)
		}
		if res.ErrorCode == int16(UnsupportedVersion) && version > 0 {
			next := version - 1
			for _, k := range res.ApiKeys {
				if protocol.ApiKey(k.ApiKey) == protocol.ApiVersions && k.MaxVersion >= 0 {
					next = min(k.MaxVersion, next)
				}
			}
			version = next
			continue
		}
		if res.ErrorCode != 0 {
			return fmt.Errorf("kafka: negotiating API versions with %s (v%d): %w", h.address, version, Error(res.ErrorCode))
		}
		h.setVersions(res.ApiKeys)
		return nil
	}
}

// apiVersions sends one ApiVersions request and decodes the answer. An answer
// with UNSUPPORTED_VERSION is decoded by apiVersionsRefusal, since brokers do
// not agree on its layout; any other answer is decoded at the version asked.
func (h *handshake) apiVersions(version int16) (*apiversions.Response, error) {
	h.id++
	req := &apiversions.Request{}
	if version >= 3 {
		req.ClientSoftwareName = clientSoftwareName
		req.ClientSoftwareVersion = clientSoftwareVersion
	}
	var buf bytes.Buffer
	if err := protocol.WriteRequest(&buf, version, h.id, h.clientID, req); err != nil {
		return nil, err
	}
	if _, err := h.nc.Write(buf.Bytes()); err != nil {
		return nil, err
	}
	frame, err := readRawFrame(h.br)
	if err != nil {
		return nil, err
	}
	// The ApiVersions response header is never flexible: the size, the
	// correlation ID, then the body, which starts with the error code in
	// every version and layout.
	if len(frame) >= 10 {
		body := frame[8:]
		if int16(binary.BigEndian.Uint16(body)) == int16(UnsupportedVersion) {
			id := int32(binary.BigEndian.Uint32(frame[4:]))
			return apiVersionsRefusal(body, version), checkID(id, h.id)
		}
	}
	id, msg, err := protocol.ReadResponse(bytes.NewReader(frame), protocol.ApiVersions, version)
	if err != nil {
		return nil, err
	}
	return msg.(*apiversions.Response), checkID(id, h.id)
}

// apiVersionsRefusal decodes the body of an UNSUPPORTED_VERSION answer to an
// ApiVersions request of the given version. Three layouts are in use:
//
//   - v0, whatever version was asked: Kafka brokers (KIP-511), with the
//     broker's ApiVersions range as the only entry;
//   - the version asked, as the protocol specifies it;
//   - librdkafka's mock cluster, for a flexible version: the error code, a
//     one-byte entry count (not count+1), entries without tagged fields, the
//     throttle time, and no tagged fields at the end.
//
// The first layout that accounts for every byte of the body and names the
// ApiVersions API wins. The result always carries UNSUPPORTED_VERSION; its
// ApiKeys are empty when no layout fits, and the caller then simply tries a
// lower version: a refusal is never a decoding error.
func apiVersionsRefusal(body []byte, version int16) *apiversions.Response {
	res := &apiversions.Response{ErrorCode: int16(UnsupportedVersion)}
	fits := func(keys []apiversions.ApiKeyResponse, ok bool) bool {
		if !ok || !namesApiVersions(keys) {
			return false
		}
		res.ApiKeys = keys
		return true
	}
	switch {
	case fits(refusalEntries(body, 4, 0)): // v0
	case version >= 1 && version <= 2 && fits(refusalEntries(body, 4, 4)): // asked, the throttle time last
	case version >= 3 && fits(refusalFlexible(body, version)): // asked, flexible
	case version >= 3 && fits(refusalEntries(body, 1, 4)): // librdkafka's mock
	}
	return res
}

// refusalEntries decodes a refusal body laid out as the error code, an
// entry count of countSize bytes (4: int32, 1: one byte), fixed 6-byte
// entries, and trailer more bytes; ok is false unless that accounts for
// every byte.
func refusalEntries(body []byte, countSize, trailer int) (keys []apiversions.ApiKeyResponse, ok bool) {
	rest := body[2:]
	if len(rest) < countSize {
		return nil, false
	}
	var n int
	if countSize == 4 {
		n = int(int32(binary.BigEndian.Uint32(rest)))
	} else {
		n = int(rest[0])
	}
	rest = rest[countSize:]
	if n < 0 || len(rest) != 6*n+trailer {
		return nil, false
	}
	keys = make([]apiversions.ApiKeyResponse, n)
	for i := range keys {
		e := rest[6*i:]
		keys[i] = apiversions.ApiKeyResponse{
			ApiKey:     int16(binary.BigEndian.Uint16(e)),
			MinVersion: int16(binary.BigEndian.Uint16(e[2:])),
			MaxVersion: int16(binary.BigEndian.Uint16(e[4:])),
		}
	}
	return keys, true
}

// refusalFlexible decodes a refusal body in the flexible layout of the
// version asked, as the protocol specifies it.
func refusalFlexible(body []byte, version int16) ([]apiversions.ApiKeyResponse, bool) {
	frame := make([]byte, 8+len(body))
	binary.BigEndian.PutUint32(frame, uint32(4+len(body)))
	copy(frame[8:], body)
	_, msg, err := protocol.ReadResponse(bytes.NewReader(frame), protocol.ApiVersions, version)
	if err != nil {
		return nil, false
	}
	return msg.(*apiversions.Response).ApiKeys, true
}

func namesApiVersions(keys []apiversions.ApiKeyResponse) bool {
	for _, k := range keys {
		if protocol.ApiKey(k.ApiKey) == protocol.ApiVersions {
			return true
		}
	}
	return false
}

func checkID(got, want int32) error {
	if got != want {
		return fmt.Errorf("kafka: correlation ID mismatch (expected %d, found %d)", want, got)
	}
	return nil
}

// readRawFrame reads one size-prefixed frame, the size included.
func readRawFrame(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		// The frame is the answer to a request we sent: the stream may
		// not end before it.
		return nil, eof.Unexpected(err)
	}
	size, err := responseFrameSize(hdr[:], "")
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(4 + min(size, 1<<20))
	buf.Write(hdr[:])
	if _, err := io.CopyN(&buf, r, int64(size)); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf.Bytes(), nil
}

func (h *handshake) setVersions(keys []apiversions.ApiKeyResponse) {
	h.versions = make(map[protocol.ApiKey]int16, len(keys))
	h.unusable = make(map[protocol.ApiKey]error)
	h.ranges = make(map[protocol.ApiKey][2]int16, len(keys))
	for _, k := range keys {
		key := protocol.ApiKey(k.ApiKey)
		h.ranges[key] = [2]int16{k.MinVersion, k.MaxVersion}
		v, err := protocol.NegotiateVersion(key, k.MinVersion, k.MaxVersion)
		if err != nil {
			h.unusable[key] = err
			continue
		}
		h.versions[key] = v
	}
}

// authenticate runs the SASL exchange: SaslHandshake, then the mechanism's
// tokens in SaslAuthenticate requests, or raw on the socket when the broker
// only speaks SaslHandshake v0.
func (h *handshake) authenticate(ctx context.Context, mech sasl.Mechanism) error {
	name := mech.Name()
	hv, ok := h.versions[protocol.SaslHandshake]
	if !ok {
		return fmt.Errorf("kafka: broker %s does not support SASL (no usable SaslHandshake version)", h.address)
	}
	res, err := h.exchange(&saslhandshake.Request{Mechanism: name}, hv)
	if err != nil {
		return h.authError(name, err)
	}
	if hs := res.(*saslhandshake.Response); hs.ErrorCode != 0 {
		return fmt.Errorf("kafka: SASL mechanism %s refused by broker %s (enabled: %v): %w",
			name, h.address, hs.Mechanisms, Error(hs.ErrorCode))
	}

	sess, token, err := mech.Start(ctx)
	if err != nil {
		return fmt.Errorf("kafka: SASL %s: %w", name, err)
	}
	for {
		challenge, err := h.saslToken(token)
		if err != nil {
			return h.authError(name, err)
		}
		done, next, err := sess.Next(ctx, challenge)
		if err != nil {
			return fmt.Errorf("kafka: SASL %s authentication with broker %s: %w", name, h.address, err)
		}
		if done {
			return nil
		}
		token = next
	}
}

func (h *handshake) saslToken(token []byte) ([]byte, error) {
	req := &saslauthenticate.Request{AuthBytes: token}
	if req.Required(h.versions) {
		res, err := req.RawExchange(struct {
			io.Reader
			io.Writer
		}{h.br, h.nc})
		if err != nil {
			return nil, err
		}
		return res.(*saslauthenticate.Response).AuthBytes, nil
	}
	v, ok := h.versions[protocol.SaslAuthenticate]
	if !ok {
		return nil, fmt.Errorf("broker %s does not support SaslAuthenticate", h.address)
	}
	sent := time.Now()
	msg, err := h.exchange(req, v)
	if err != nil {
		return nil, err
	}
	res := msg.(*saslauthenticate.Response)
	if res.ErrorCode != 0 {
		return nil, makeError(res.ErrorCode, res.ErrorMessage)
	}
	if res.SessionLifetimeMs > 0 {
		h.sessionLifetime = time.Duration(res.SessionLifetimeMs) * time.Millisecond
		h.sessionFrom = sent
	}
	return res.AuthBytes, nil
}

// authError explains a failure during authentication. Brokers commonly
// report a failed login by closing the connection, which shows up here as
// an end of stream.
func (h *handshake) authError(mech string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || isConnReset(err) {
		// Both are wrapped: errors.Is(err, SASLAuthenticationFailed) for
		// those who check for a refused login, and the network error (an
		// io.ErrUnexpectedEOF, never a bare io.EOF) so that the Writer and
		// Reader retry a connection lost in the middle of the exchange.
		return fmt.Errorf("kafka: SASL %s authentication with broker %s failed: the broker closed the connection (wrong credentials?): %w: %w",
			mech, h.address, SASLAuthenticationFailed, eof.Unexpected(err))
	}
	var kerr Error
	if errors.As(err, &kerr) {
		return fmt.Errorf("kafka: SASL %s authentication with broker %s failed: %w", mech, h.address, err)
	}
	return fmt.Errorf("kafka: SASL %s authentication with broker %s: %w", mech, h.address, err)
}

func isConnReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}
