package kafka

import (
	"context"
	"errors"
	"math/rand"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/kafka-go/protocol"
)

const (
	// A shared connection carries up to this many requests at once before
	// the pool opens another one (up to maxSharedConns of them).
	maxPipelined   = 16
	maxSharedConns = 3
)

// connPool holds the connections to one broker (or, for the seed pool, to
// any of the bootstrap addresses). Most requests share connections and are
// pipelined on them; requests that the broker may hold for a long time get
// a connection of their own, since a broker works on the requests of one
// connection one at a time, in order, and would make everything queued
// behind them wait. See needsOwnConn.
type connPool struct {
	cfg         *dialConfig
	ctx         context.Context // bounds dials; ends when the cluster shuts down
	idleTimeout time.Duration
	resolver    BrokerResolver
	broker      Broker // ID -1 for the seed pool
	network     string // comma separated for a seed pool with several addresses
	address     string

	mu      sync.Mutex
	conns   []*brokerConn
	dialing *dialCall
	closed  bool // connections are closed as soon as they are idle
}

type dialCall struct {
	done chan struct{}
	err  error
}

func newConnPool(ctx context.Context, cfg *dialConfig, idle time.Duration, rslv BrokerResolver, b Broker, network, address string) *connPool {
	return &connPool{cfg: cfg, ctx: ctx, idleTimeout: idle, resolver: rslv, broker: b, network: network, address: address}
}

// needsOwnConn tells requests that may be held by the broker and must not
// delay other requests: long polls, group rebalances, and produce requests,
// which wait for replicas (acks=all) or a busy disk. The Writer sends one
// produce request per partition, so the partitions a broker leads only
// make progress side by side on connections of their own; pipelined on
// one, each would wait for all the others.
func needsOwnConn(req protocol.Message) bool {
	switch req.ApiKey() {
	case protocol.Fetch, protocol.JoinGroup, protocol.SyncGroup, protocol.Produce:
		return true
	}
	return false
}

// roundTrip sends req on one of the pool's connections.
func (p *connPool) roundTrip(ctx context.Context, req protocol.Message) (protocol.Message, error) {
	res, _, err := p.tryRoundTrip(ctx, req)
	return res, err
}

// tryRoundTrip is roundTrip, also telling whether the request may have
// reached the broker: it did not when no connection could be opened.
func (p *connPool) tryRoundTrip(ctx context.Context, req protocol.Message) (res protocol.Message, sent bool, err error) {
	if needsOwnConn(req) {
		l, err := p.lease(ctx)
		if err != nil {
			return nil, false, err
		}
		defer l.release()
		res, err = l.roundTrip(ctx, req)
		return res, true, err
	}
	c, err := p.acquire(ctx, false)
	if err != nil {
		return nil, false, err
	}
	res, err = c.roundTrip(ctx, req)
	p.release(c, err != nil && ctx.Err() != nil)
	return res, true, err
}

// acquire returns a connection reserved for one request (a connection of
// its own when exclusive, see connLease); release must be called when the
// request is done.
func (p *connPool) acquire(ctx context.Context, exclusive bool) (*brokerConn, error) {
	addrs, err := p.resolve(ctx)
	if err != nil {
		return nil, err
	}
	for {
		p.mu.Lock()
		if c := p.pick(exclusive, addrs); c != nil {
			c.inflight++
			p.mu.Unlock()
			return c, nil
		}
		if exclusive {
			p.mu.Unlock()
			return p.dialExclusive(ctx, addrs)
		}
		call := p.dialing
		if call == nil {
			call = &dialCall{done: make(chan struct{})}
			p.dialing = call
			go p.dial(call, addrs)
		}
		p.mu.Unlock()

		select {
		case <-call.done:
			if call.err != nil {
				return nil, call.err
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// pick chooses a connection for a request, or returns nil when a new one
// should be opened. p.mu must be held.
func (p *connPool) pick(exclusive bool, addrs map[string]string) *brokerConn {
	var best *brokerConn
	shared := 0
	live := p.conns[:0]
	now := time.Now()
	for _, c := range p.conns {
		if c.sessionOver(now) {
			c.retired = true
		}
		if c.broken() != nil {
			if c.inflight == 0 {
				c.close(errConnClosed)
				continue
			}
			c.retired = true
		}
		if c.retired && c.inflight == 0 {
			c.close(errConnClosed)
			continue
		}
		live = append(live, c)
		if c.retired || (addrs != nil && addrs[c.address] == "") {
			continue
		}
		if c.own != exclusive {
			continue
		}
		if exclusive {
			if best == nil && c.inflight == 0 {
				best = c
			}
			continue
		}
		shared++
		if best == nil || c.inflight < best.inflight {
			best = c
		}
	}
	for i := len(live); i < len(p.conns); i++ {
		p.conns[i] = nil
	}
	p.conns = live
	if best == nil || exclusive {
		return best
	}
	if best.inflight >= maxPipelined && shared < maxSharedConns {
		return nil
	}
	return best
}

// dialExclusive opens a connection for one request that needs its own.
// Such requests do not wait for each other's dials: a consumer fetching
// many partitions opens its connections in parallel.
func (p *connPool) dialExclusive(ctx context.Context, addrs map[string]string) (*brokerConn, error) {
	type result struct {
		c   *brokerConn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		c, err := p.connect(addrs, true)
		if err == nil {
			p.mu.Lock()
			p.conns = append(p.conns, c)
			c.inflight++
			p.mu.Unlock()
		}
		ch <- result{c, err}
	}()
	select {
	case r := <-ch:
		return r.c, r.err
	case <-ctx.Done():
		// The connection, if it opens, goes to the pool as an idle one.
		go func() {
			if r := <-ch; r.err == nil {
				p.release(r.c, false)
			}
		}()
		return nil, ctx.Err()
	}
}

// dial opens a connection in the background, so that requests waiting for
// it may give up (their context ending) without wasting the work done for
// the others.
func (p *connPool) dial(call *dialCall, addrs map[string]string) {
	c, err := p.connect(addrs, false)
	p.mu.Lock()
	p.dialing = nil
	if err == nil {
		p.conns = append(p.conns, c)
		// Armed in case every request that waited for it gave up.
		p.markIdle(c)
	}
	p.mu.Unlock()
	call.err = err
	close(call.done)
}

func (p *connPool) connect(addrs map[string]string, own bool) (*brokerConn, error) {
	// A target is dialed at address; name is the broker's address before
	// any resolver, which TLS and SASL are given.
	type target struct{ network, address, name string }
	var targets []target
	if addrs != nil {
		network := strings.Split(p.network, ",")[0]
		for a, name := range addrs {
			targets = append(targets, target{network, a, name})
		}
	} else {
		networks := strings.Split(p.network, ",")
		for i, a := range strings.Split(p.address, ",") {
			n := networks[0]
			if i < len(networks) {
				n = networks[i]
			}
			a = strings.TrimSpace(a)
			targets = append(targets, target{n, a, a})
		}
	}
	// Spread the connections of many clients over the bootstrap servers.
	rand.Shuffle(len(targets), func(i, j int) { targets[i], targets[j] = targets[j], targets[i] })
	var firstErr error
	for _, t := range targets {
		c, err := dialSession(p.ctx, p.cfg, t.network, t.address, t.name, own)
		if err == nil {
			return c, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if p.ctx.Err() != nil || isAuthError(err) {
			break
		}
	}
	if firstErr == nil {
		firstErr = errors.New("kafka: no address to connect to")
	}
	return nil, firstErr
}

// sessionDials is how many times a pool dials a broker whose SASL session
// is over by the time the connection is set up (a token about to expire
// gives a short one) before it gives up on the call.
const sessionDials = 3

// errSessionTooShort is a temporary error: a later dial (a new token) may
// get a longer session.
type errSessionTooShort struct{ address string }

func (e *errSessionTooShort) Error() string {
	return "kafka: SASL sessions with broker " + e.address + " ended as soon as they began"
}

func (e *errSessionTooShort) Temporary() bool { return true }

// dialSession is dialBroker for a pool: a connection whose SASL session is
// already past sessionOver would be retired at once and dialed again
// without end; it is closed and dialed again, sessionDials times at most.
func dialSession(ctx context.Context, cfg *dialConfig, network, address, name string, own bool) (*brokerConn, error) {
	for i := 0; ; i++ {
		c, err := dialBroker(ctx, cfg, network, address, name, own)
		if err != nil || !c.sessionOver(time.Now()) {
			return c, err
		}
		c.close(errConnClosed)
		if i+1 == sessionDials {
			return nil, &errSessionTooShort{address: address}
		}
	}
}

func isAuthError(err error) bool {
	return errors.Is(err, SASLAuthenticationFailed) || errors.Is(err, UnsupportedSASLMechanism) || errors.Is(err, IllegalSASLState)
}

// resolve returns the addresses the resolver allows for this pool, each
// mapped to the address of the broker it was resolved from, or nil when
// there is no resolver (any connection of the pool will do).
func (p *connPool) resolve(ctx context.Context) (map[string]string, error) {
	if p.resolver == nil {
		return nil, nil
	}
	brokers := []Broker{p.broker}
	if p.broker.ID < 0 {
		brokers = brokers[:0]
		for _, a := range strings.Split(p.address, ",") {
			host, port := splitAddress(strings.TrimSpace(a))
			brokers = append(brokers, Broker{Host: host, Port: port, ID: -1})
		}
	}
	addrs := make(map[string]string)
	var lastErr error
	for _, b := range brokers {
		ips, err := p.resolver.LookupBrokerIPAddr(ctx, b)
		if err != nil {
			lastErr = err
			continue
		}
		for _, ip := range ips {
			port := strconv.Itoa(b.Port)
			addrs[net.JoinHostPort(ip.String(), port)] = net.JoinHostPort(b.Host, port)
		}
	}
	if len(addrs) == 0 {
		if lastErr == nil {
			lastErr = errors.New("kafka: the broker resolver returned no address for " + p.address)
		}
		return nil, lastErr
	}
	return addrs, nil
}

// release returns a connection acquired for a request. abandoned tells that
// the request gave up waiting for its response: the connection is then
// retired, since a broker that does not answer in time may never answer.
func (p *connPool) release(c *brokerConn, abandoned bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c.inflight--
	if abandoned {
		c.retired = true
	}
	if c.inflight > 0 {
		return
	}
	if p.closed || c.retired || c.broken() != nil {
		p.remove(c)
		c.close(errConnClosed)
		return
	}
	p.markIdle(c)
}

// markIdle arms the idle timer of a connection nobody uses. p.mu must be
// held.
func (p *connPool) markIdle(c *brokerConn) {
	c.idleSince = time.Now()
	if c.idleTimer == nil {
		c.idleTimer = time.AfterFunc(p.idleTimeout, func() { p.expire(c) })
	} else {
		c.idleTimer.Reset(p.idleTimeout)
	}
}

// expire closes c if it has stayed idle for the idle timeout; the timer is
// never stopped, so a stale firing re-arms it for the time left.
func (p *connPool) expire(c *brokerConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.inflight > 0 {
		return
	}
	if left := p.idleTimeout - time.Since(c.idleSince); left > 0 {
		c.idleTimer.Reset(left)
		return
	}
	p.remove(c)
	c.close(errConnClosed)
}

func (p *connPool) remove(c *brokerConn) {
	for i, x := range p.conns {
		if x == c {
			copy(p.conns[i:], p.conns[i+1:])
			p.conns[len(p.conns)-1] = nil
			p.conns = p.conns[:len(p.conns)-1]
			return
		}
	}
}

// closeIdle closes the idle connections now and the others when their
// requests are done.
func (p *connPool) closeIdle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, c := range append([]*brokerConn(nil), p.conns...) {
		if c.inflight == 0 {
			p.remove(c)
			c.close(errConnClosed)
		}
	}
}

// shutdown closes every connection at once, failing the requests in flight
// with err.
func (p *connPool) shutdown(err error) {
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.closed = true
	p.mu.Unlock()
	for _, c := range conns {
		c.close(err)
	}
}
