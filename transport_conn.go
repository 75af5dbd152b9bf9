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
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/apiversions"
	"github.com/segmentio/kafka-go/protocol/saslauthenticate"
	"github.com/segmentio/kafka-go/protocol/saslhandshake"
	"github.com/segmentio/kafka-go/sasl"
)

// Name and version this client reports in ApiVersions v3+. Brokers only use
// them for metrics, but reject values outside [a-zA-Z0-9.-].
const (
	clientSoftwareName    = "segmentio-kafka-go"
	clientSoftwareVersion = "0.4.51"
)

// dialConfig is what establishing a connection depends on; it is copied out
// of the Transport so that later changes to the Transport's fields do not
// race with connections being set up.
type dialConfig struct {
	dial        func(context.Context, string, string) (net.Conn, error)
	dialTimeout time.Duration
	clientID    string
	tls         *tls.Config
	sasl        sasl.Mechanism
}

// brokerConn is one network connection to a broker, negotiated and
// authenticated. Any number of requests may be in flight on it: writes are
// serialized by wsem and a single reader goroutine hands each response to
// the request with the same correlation ID.
type brokerConn struct {
	nc       net.Conn
	network  string
	address  string
	clientID string

	// versions holds the version to use for every API usable with this
	// broker; unusable holds the reason for every API the broker knows but
	// that we cannot talk to it with.
	versions map[protocol.ApiKey]int16
	unusable map[protocol.ApiKey]error
	ranges   map[protocol.ApiKey][2]int16

	wsem   chan struct{} // one-slot semaphore guarding writes to nc
	nextID atomic.Int32

	mu      sync.Mutex
	pending map[int32]*pendingCall
	err     error         // why the connection is unusable, once it is
	done    chan struct{} // closed when the reader goroutine exits

	// expires is when the broker will end the authenticated session (zero
	// for never); the pool retires the connection then.
	expires time.Time

	// Fields below are owned by the connPool (guarded by its mutex).
	inflight  int
	exclusive bool
	retired   bool
	idleTimer *time.Timer
	idleSince time.Time
}

type pendingCall struct {
	key     protocol.ApiKey
	version int16
	result  chan callResult // buffered, receives exactly one value
	// stream is set for a streamedRequest: the read loop hands it the
	// connection positioned on the response body instead of decoding it.
	stream bool
}

type callResult struct {
	msg  protocol.Message
	err  error
	body *responseBody // for a stream call; released by its receiver
}

// errConnClosed is reported to requests still waiting on a connection that
// the transport closed.
var errConnClosed = errors.New("kafka: connection closed by the transport")

// connReadBufferSize is the read buffer of a broker connection. It only
// needs to hold frame headers and small responses: the protocol package
// reads a larger frame into a buffer of its own, which bufio then fills
// straight from the socket. A consumer keeps a connection to each broker it
// talks to (the bootstrap one included), and the collector lets the heap
// grow to twice what is live: 64 KiB per connection cost a 3-partition
// consumer about 1 MB of heap for nothing (upstream's Conn uses bufio's
// default 4 KiB).
const connReadBufferSize = 4 << 10

// dialBroker opens a connection to address, negotiates API versions and
// authenticates. The whole setup is bounded by the dial timeout and by ctx.
func dialBroker(ctx context.Context, cfg *dialConfig, network, address string) (*brokerConn, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.dialTimeout)
	defer cancel()

	nc, err := cfg.dial(ctx, network, address)
	if err != nil {
		return nil, err
	}
	c, err := setupConn(ctx, cfg, nc, network, address)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

func setupConn(ctx context.Context, cfg *dialConfig, nc net.Conn, network, address string) (*brokerConn, error) {
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
			return nil, fmt.Errorf("kafka: TLS handshake with %s: %w", address, noEOF(err))
		}
		nc = tc
	}

	// The handshake below is done synchronously on the raw stream, before
	// the reader goroutine starts; the deadline (and cancellation of ctx)
	// interrupt any blocked read or write.
	if d, ok := ctx.Deadline(); ok {
		nc.SetDeadline(d)
	}
	release := interruptOnDone(ctx, func() { nc.SetDeadline(time.Unix(1, 0)) })
	defer release()

	hs := &handshake{nc: nc, br: bufio.NewReaderSize(nc, connReadBufferSize), clientID: cfg.clientID, address: address}
	if err := hs.negotiate(); err != nil {
		return nil, ctxError(ctx, err)
	}
	c := &brokerConn{
		nc:       nc,
		network:  network,
		address:  address,
		clientID: cfg.clientID,
		versions: hs.versions,
		unusable: hs.unusable,
		ranges:   hs.ranges,
		wsem:     make(chan struct{}, 1),
		pending:  make(map[int32]*pendingCall),
		done:     make(chan struct{}),
	}
	if cfg.sasl != nil {
		start := time.Now()
		saslCtx := sasl.WithMetadata(ctx, &sasl.Metadata{Host: host, Port: port})
		if err := hs.authenticate(saslCtx, cfg.sasl); err != nil {
			return nil, ctxError(ctx, err)
		}
		if hs.sessionLifetime > 0 {
			// The broker closes the connection when the session ends;
			// stop using it a little before, so that no request is lost
			// to that.
			c.expires = start.Add(hs.sessionLifetime * 9 / 10)
		}
	}
	if release() {
		return nil, ctx.Err()
	}
	nc.SetDeadline(time.Time{})
	go c.readLoop(hs.br)
	return c, nil
}

// interruptOnDone calls interrupt when ctx ends, until the returned release
// function is called. release reports whether interrupt ran, and when it did,
// returns only after it has completed, so that the caller can undo its
// effect without racing with it.
func interruptOnDone(ctx context.Context, interrupt func()) (release func() bool) {
	if ctx.Done() == nil {
		return func() bool { return false } // the context never ends
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		interrupt()
		close(fired)
	})
	// release is only ever called from the goroutine that set up the
	// interruption, possibly twice (once deferred).
	var released, ran bool
	return func() bool {
		if !released {
			released = true
			if !stop() {
				<-fired
				ran = true
			}
		}
		return ran
	}
}

// ctxError prefers the context's error when the context ended, since the
// I/O error it caused (a deadline exceeded on the socket) says less.
func ctxError(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		if errors.Is(cerr, context.DeadlineExceeded) {
			return fmt.Errorf("%w (%v)", cerr, err)
		}
		return cerr
	}
	return err
}

func splitAddress(address string) (string, int) {
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return address, 0
	}
	port, _ := strconv.Atoi(portStr)
	return host, port
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
	// session (KIP-368), zero when it does not say.
	sessionLifetime time.Duration
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
		return nil, noEOF(err)
	}
	size := int32(binary.BigEndian.Uint32(hdr[:]))
	if size < 4 {
		return nil, fmt.Errorf("kafka: invalid response frame size %d", size)
	}
	var buf bytes.Buffer
	buf.Grow(4 + min(int(size), 1<<20))
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
			mech, h.address, SASLAuthenticationFailed, noEOF(err))
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

// version returns the version to send key with on this connection.
func (c *brokerConn) version(key protocol.ApiKey) (int16, error) {
	if v, ok := c.versions[key]; ok {
		return v, nil
	}
	if err := c.unusable[key]; err != nil {
		return 0, fmt.Errorf("kafka: broker %s: %w", c.address, err)
	}
	return 0, fmt.Errorf("kafka: broker %s does not support the %s API: %w", c.address, key, protocol.ErrNoVersionOverlap)
}

// broken reports why the connection can no longer be used, or nil.
func (c *brokerConn) broken() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// close shuts the connection down; requests waiting on it fail with err.
// It does not block (pools call it with their lock held): closing a TLS
// connection writes an alert, which can take a while on a stuck socket.
func (c *brokerConn) close(err error) {
	c.mu.Lock()
	first := c.err == nil
	if first {
		c.err = err
	}
	c.mu.Unlock()
	if first {
		go c.nc.Close()
	}
}

// roundTrip sends req and waits for its response. Cancelling ctx abandons
// the wait (the response is then discarded by the reader) and interrupts a
// write in progress, which leaves the connection unusable.
func (c *brokerConn) roundTrip(ctx context.Context, req protocol.Message) (protocol.Message, error) {
	key := req.ApiKey()
	version, err := c.version(key)
	if err != nil {
		return nil, err
	}
	if p, ok := req.(protocol.PreparedMessage); ok {
		p.Prepare(version)
	}
	if av, ok := req.(*apiversions.Request); ok && version >= 3 && av.ClientSoftwareName == "" {
		// Brokers reject v3+ requests that do not name the client.
		av.ClientSoftwareName = clientSoftwareName
		av.ClientSoftwareVersion = clientSoftwareVersion
	}
	id := c.nextID.Add(1)
	wire := req
	streamed, isStream := req.(streamedRequest)
	if isStream {
		wire = streamed.wireMessage()
	}
	// Encoding first keeps a request that cannot be encoded from touching
	// the connection at all, and lets concurrent requests encode in
	// parallel rather than under the write lock.
	frame := getFrameBuffer()
	defer putFrameBuffer(frame)
	if err := protocol.WriteRequest(frame, version, id, c.clientID, wire); err != nil {
		return nil, err
	}

	var call *pendingCall
	if expectsResponse(wire) {
		call = &pendingCall{key: key, version: version, result: make(chan callResult, 1), stream: isStream}
	}

	select {
	case c.wsem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.done:
		return nil, c.broken()
	}
	err = c.write(ctx, id, call, frame.b)
	<-c.wsem
	if err != nil {
		return nil, err
	}
	if call == nil {
		return nil, nil
	}

	select {
	case r := <-call.result:
		if r.body != nil {
			return c.consume(streamed, r.body, version)
		}
		return r.msg, r.err
	case <-ctx.Done():
		c.mu.Lock()
		_, waiting := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if !waiting && call.stream {
			// The read loop took the call: the result is on its way, and
			// a body holds the read loop until released.
			if r := <-call.result; r.body != nil {
				r.body.release()
			}
		}
		return nil, ctx.Err()
	}
}

func (c *brokerConn) write(ctx context.Context, id int32, call *pendingCall, frame []byte) error {
	if err := ctx.Err(); err != nil {
		return err // nothing written: the connection stays usable
	}
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	if call != nil {
		c.pending[id] = call
	}
	c.mu.Unlock()

	// Most requests go out in one non-blocking write, which needs no
	// deadline nor interruption; the rest, if any, is written below.
	n := writeNow(c.nc, frame)
	if n == len(frame) {
		return nil
	}
	frame = frame[n:]

	_, hasDeadline := ctx.Deadline()
	if hasDeadline {
		d, _ := ctx.Deadline()
		c.nc.SetWriteDeadline(d)
	}
	release := interruptOnDone(ctx, func() { c.nc.SetWriteDeadline(time.Unix(1, 0)) })
	_, err := c.nc.Write(frame)
	interrupted := release()
	if err == nil {
		if hasDeadline || interrupted {
			// The write completed: the deadline must not hit the next one.
			c.nc.SetWriteDeadline(time.Time{})
		}
		return nil
	}
	// A partial frame may be on the wire: nothing else can be sent here.
	if cerr := ctx.Err(); cerr != nil {
		err = cerr
	}
	c.close(fmt.Errorf("kafka: write to broker %s interrupted: %w", c.address, err))
	return err
}

// readLoop delivers responses to the requests waiting for them until the
// connection fails or is closed.
func (c *brokerConn) readLoop(br *bufio.Reader) {
	err := c.readResponses(br)
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	} else {
		err = c.err
	}
	pending := c.pending
	c.pending = map[int32]*pendingCall{}
	c.mu.Unlock()
	c.nc.Close()
	for _, call := range pending {
		call.result <- callResult{err: err}
	}
	close(c.done)
}

func (c *brokerConn) readResponses(br *bufio.Reader) error {
	for {
		hdr, err := br.Peek(8)
		if err != nil {
			// Even at a frame boundary the end of the stream is
			// unexpected for the requests waiting on it, and for any
			// sent on the connection later (they get c.err): as in
			// upstream, they all see io.ErrUnexpectedEOF, which callers
			// retry on, never a bare io.EOF.
			return noEOF(err)
		}
		size := int32(binary.BigEndian.Uint32(hdr[:4]))
		id := int32(binary.BigEndian.Uint32(hdr[4:]))
		if size < 4 {
			return fmt.Errorf("kafka: invalid response frame size %d from broker %s", size, c.address)
		}
		c.mu.Lock()
		call := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if call == nil {
			// Nobody waits for it any more (its context ended).
			if _, err := br.Discard(4 + int(size)); err != nil {
				return noEOF(err)
			}
			continue
		}
		if call.stream {
			if err := c.handOver(br, call, int(size)-4); err != nil {
				return err
			}
			continue
		}
		fr := &frameReader{r: br, left: 4 + int(size)}
		_, msg, err := protocol.ReadResponse(fr, call.key, call.version)
		if fr.err == nil && fr.left > 0 {
			// The decoder gave up before the end of the frame.
			_, fr.err = br.Discard(fr.left)
		}
		if fr.err != nil {
			serr := noEOF(fr.err)
			call.result <- callResult{err: serr}
			return serr
		}
		// The frame was consumed whole, so even when it failed to decode
		// only this request fails and the stream stays usable.
		call.result <- callResult{msg: msg, err: err}
	}
}

// frameReader reads the bytes of one frame from the connection, recording
// whether the connection itself failed.
type frameReader struct {
	r    io.Reader
	left int
	err  error
}

func (f *frameReader) Read(p []byte) (int, error) {
	if f.left == 0 {
		return 0, io.EOF
	}
	if len(p) > f.left {
		p = p[:f.left]
	}
	n, err := f.r.Read(p)
	f.left -= n
	if err != nil {
		f.err = err
	}
	return n, err
}

func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

type responseExpecter interface{ HasResponse() bool }

func expectsResponse(req protocol.Message) bool {
	r, ok := req.(responseExpecter)
	return !ok || r.HasResponse()
}

// frameBuffer collects an encoded request frame (which the protocol
// package hands over in a single Write).
type frameBuffer struct{ b []byte }

func (f *frameBuffer) Write(p []byte) (int, error) {
	f.b = append(f.b, p...)
	return len(p), nil
}

var frameBuffers = sync.Pool{New: func() any { return new(frameBuffer) }}

func getFrameBuffer() *frameBuffer { return frameBuffers.Get().(*frameBuffer) }

func putFrameBuffer(f *frameBuffer) {
	if cap(f.b) > 1<<20 {
		return // do not keep the memory of exceptionally large requests
	}
	f.b = f.b[:0]
	frameBuffers.Put(f)
}
