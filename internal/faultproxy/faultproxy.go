// Package faultproxy is a Kafka-frame-aware TCP proxy for tests. It sits
// between a client and the brokers through the client's dial function
// (Transport.Dial, Dialer.DialFunc): every connection the client opens goes
// through the proxy, which reads the client's requests frame by frame and,
// as a Rule decides, forwards them, or closes the connection before the
// request reaches the broker, or lets the broker process the request and
// closes the connection instead of delivering the answer (an answer lost
// after the broker acted on the request). Closing is done with a FIN (the
// client reads the end of the stream) or with a RST (SO_LINGER 0: the
// client reads ECONNRESET). Dials can be refused too.
//
// The client's side of every connection is a real loopback TCP socket, so
// that the client sees the same errors as with a broker going away.
package faultproxy

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/produce"
)

// Action is what the proxy does with one request.
type Action int

const (
	// Forward sends the request to the broker and its answer back.
	Forward Action = iota
	// CloseBefore closes the connection (FIN) instead of forwarding the
	// request: the broker never sees it.
	CloseBefore
	// ResetBefore is CloseBefore with a RST.
	ResetBefore
	// CloseAfter forwards the request, waits for the broker's answer and
	// closes the connection (FIN) instead of delivering it: the broker
	// acted on the request, the client never learns it.
	CloseAfter
	// ResetAfter is CloseAfter with a RST.
	ResetAfter
	numActions
)

func (a Action) String() string {
	switch a {
	case Forward:
		return "forward"
	case CloseBefore:
		return "close-before"
	case ResetBefore:
		return "reset-before"
	case CloseAfter:
		return "close-after"
	case ResetAfter:
		return "reset-after"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Request describes one request frame read from a client.
type Request struct {
	Conn    int    // connection number, from 1, in dial order
	Addr    string // the broker address the client dialled
	Index   int    // number of this request on its connection, from 1
	ApiKey  int16  // -1 when the frame is too short to have a header (raw SASL tokens)
	Version int16
	ID      int32 // correlation ID
	Size    int   // frame size, without the 4-byte size prefix
}

// Rule decides what happens to a request. It is called from the
// connection's goroutine, one request at a time per connection, and from
// several connections at once. It may block: the request (and those after
// it on the same connection) then reaches the broker that much later,
// which makes a slow broker.
type Rule func(Request) Action

// Stats counts what the proxy did.
type Stats struct {
	Dials   int // dials that reached a broker
	Refused int // dials refused
	// Fired counts the requests each action was applied to.
	Fired [numActions]int
	// Dropped counts the answers the broker sent and the client never got
	// (CloseAfter and ResetAfter whose answer arrived). For a Produce,
	// each is a batch that may be in the log twice once retried.
	Dropped int
	// Unanswered counts, by API key, the requests that reached the broker
	// and whose answer the client never got because the proxy closed the
	// connection (the dropped answers, and those of requests still
	// waiting on a connection when it was closed). It bounds how many
	// requests the broker may have acted on while the client saw a
	// failure: for a Produce, each may put its batch twice in the log.
	Unanswered map[int16]int
	// UnansweredBatches counts the partition batches carried by the
	// unanswered Produce requests. A Produce request carries a batch for
	// each of its partitions, and each of them may be in the log twice
	// once retried: this, not the number of requests, bounds the runs of
	// duplicates a client without idempotence may cause.
	UnansweredBatches int
}

// Proxy routes a client's connections. The zero value is not usable; call
// New.
type Proxy struct {
	ln     net.Listener
	dialMu sync.Mutex // one dial pairs with one Accept at a time

	mu     sync.Mutex
	rule   Rule
	refuse func(addr string) bool
	conns  map[*conn]struct{}
	nconn  int
	stats  Stats
	closed bool
	wg     sync.WaitGroup
}

// New starts a proxy. Close it when done.
func New() (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return &Proxy{ln: ln, conns: map[*conn]struct{}{}, stats: Stats{Unanswered: map[int16]int{}}}, nil
}

// SetRule makes r decide the fate of every request read from now on; nil
// forwards everything.
func (p *Proxy) SetRule(r Rule) {
	p.mu.Lock()
	p.rule = r
	p.mu.Unlock()
}

// SetRefuse makes the proxy refuse (ECONNREFUSED) the dials to the
// addresses for which f returns true; nil accepts every dial.
func (p *Proxy) SetRefuse(f func(addr string) bool) {
	p.mu.Lock()
	p.refuse = f
	p.mu.Unlock()
}

// Stats returns a copy of the counters.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Unanswered = make(map[int16]int, len(p.stats.Unanswered))
	for k, v := range p.stats.Unanswered {
		s.Unanswered[k] = v
	}
	return s
}

// Dial has the signature of Transport.Dial and Dialer.DialFunc: it opens a
// connection to the broker at address and returns the client's end of a
// proxied connection to it.
func (p *Proxy) Dial(ctx context.Context, network, address string) (net.Conn, error) {
	p.mu.Lock()
	closed, refuse := p.closed, p.refuse != nil && p.refuse(address)
	if refuse {
		p.stats.Refused++
	}
	p.mu.Unlock()
	if closed {
		return nil, errors.New("faultproxy: closed")
	}
	if refuse {
		return nil, &net.OpError{Op: "dial", Net: network, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	var d net.Dialer
	up, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	client, server, err := p.pair(ctx)
	if err != nil {
		up.Close()
		return nil, err
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		up.Close()
		client.Close()
		server.Close()
		return nil, errors.New("faultproxy: closed")
	}
	p.nconn++
	p.stats.Dials++
	c := &conn{p: p, num: p.nconn, addr: address, client: server.(*net.TCPConn), broker: up, doomed: map[int32]doom{}, waiting: map[int32]unanswered{}, done: make(chan struct{})}
	p.conns[c] = struct{}{}
	p.wg.Add(2)
	p.mu.Unlock()
	go c.requests()
	go c.answers()
	return client, nil
}

// pair returns both ends of a fresh loopback TCP connection.
func (p *Proxy) pair(ctx context.Context) (client, server net.Conn, err error) {
	p.dialMu.Lock()
	defer p.dialMu.Unlock()
	var d net.Dialer
	client, err = d.DialContext(ctx, "tcp", p.ln.Addr().String())
	if err != nil {
		return nil, nil, err
	}
	// Only one dial is in progress (dialMu), so the next connection
	// accepted is this one; check anyway.
	server, err = p.ln.Accept()
	if err != nil {
		client.Close()
		return nil, nil, err
	}
	if server.RemoteAddr().String() != client.LocalAddr().String() {
		client.Close()
		server.Close()
		return nil, nil, errors.New("faultproxy: accepted a connection that is not ours")
	}
	return client, server, nil
}

// Close closes every proxied connection and waits for their goroutines.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	conns := make([]*conn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	err := p.ln.Close()
	for _, c := range conns {
		c.kill(false)
	}
	p.wg.Wait()
	return err
}

// CloseAll closes (FIN) every connection open now, as a broker restart
// would, without counting it as a fired action.
func (p *Proxy) CloseAll() {
	p.mu.Lock()
	conns := make([]*conn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		c.kill(false)
	}
}

// conn is one proxied connection.
type conn struct {
	p      *Proxy
	num    int
	addr   string
	client *net.TCPConn // the proxy's end of the client's connection
	broker net.Conn

	mu      sync.Mutex
	doomed  map[int32]doom       // by correlation ID
	waiting map[int32]unanswered // forwarded, not answered, by correlation ID
	killed  bool

	once sync.Once
	done chan struct{}
}

// unanswered is a request forwarded and not answered yet: its API key and,
// for a Produce, the number of partitions it carries.
type unanswered struct {
	key        int16
	partitions int
}

// doom is an answer to drop: how to close, and the request's API key.
type doom struct {
	action Action
	key    int16
}

// kill closes both sides; with reset the client gets a RST.
func (c *conn) kill(reset bool) {
	c.once.Do(func() {
		// Count first: once the client sees the connection end, Stats
		// must already tell what was lost with it.
		c.mu.Lock()
		c.killed = true
		waiting := c.waiting
		c.waiting = nil
		c.mu.Unlock()
		c.p.mu.Lock()
		delete(c.p.conns, c)
		for _, w := range waiting {
			c.p.stats.Unanswered[w.key]++
			c.p.stats.UnansweredBatches += w.partitions
		}
		c.p.mu.Unlock()
		if reset {
			c.client.SetLinger(0)
		}
		c.client.Close()
		c.broker.Close()
		close(c.done)
	})
}

// requests reads the client's frames and applies the rule to each.
func (c *conn) requests() {
	defer c.p.wg.Done()
	defer c.kill(false)
	for index := 1; ; index++ {
		frame, err := readFrame(c.client)
		if err != nil {
			return
		}
		req := Request{Conn: c.num, Addr: c.addr, Index: index, ApiKey: -1, Size: len(frame) - 4}
		if len(frame) >= 12 {
			req.ApiKey = int16(binary.BigEndian.Uint16(frame[4:]))
			req.Version = int16(binary.BigEndian.Uint16(frame[6:]))
			req.ID = int32(binary.BigEndian.Uint32(frame[8:]))
		}
		c.p.mu.Lock()
		rule := c.p.rule
		c.p.mu.Unlock()
		action := Forward
		if rule != nil {
			action = rule(req)
		}
		c.p.mu.Lock()
		if action >= 0 && action < numActions {
			c.p.stats.Fired[action]++
		}
		c.p.mu.Unlock()
		switch action {
		case CloseBefore, ResetBefore:
			c.kill(action == ResetBefore)
			return
		}
		c.mu.Lock()
		if c.killed {
			c.mu.Unlock()
			return
		}
		if action == CloseAfter || action == ResetAfter {
			c.doomed[req.ID] = doom{action, req.ApiKey}
		}
		if req.ApiKey >= 0 {
			// Counted as unanswered if the connection dies before the
			// answer is through. Raw SASL tokens (no header) cannot be
			// matched with their answers and are left out.
			c.waiting[req.ID] = unanswered{key: req.ApiKey, partitions: producePartitions(req.ApiKey, frame)}
		}
		c.mu.Unlock()
		if _, err := c.broker.Write(frame); err != nil {
			return
		}
	}
}

// answers forwards the broker's frames, except a doomed answer, which
// kills the connection instead.
func (c *conn) answers() {
	defer c.p.wg.Done()
	defer c.kill(false)
	for {
		frame, err := readFrame(c.broker)
		if err != nil {
			return
		}
		if len(frame) >= 8 {
			id := int32(binary.BigEndian.Uint32(frame[4:]))
			c.mu.Lock()
			d, ok := c.doomed[id]
			delete(c.doomed, id)
			if !ok {
				// Delivered below. If that write fails the client never
				// reads it, but then the client's side is gone too and
				// the failure is the client's own.
				delete(c.waiting, id)
			}
			c.mu.Unlock()
			if ok {
				c.p.mu.Lock()
				c.p.stats.Dropped++
				c.p.mu.Unlock()
				c.kill(d.action == ResetAfter)
				return
			}
		}
		if _, err := c.client.Write(frame); err != nil {
			return
		}
	}
}

// producePartitions is the number of partitions of a Produce request frame
// (prefix included), 0 for any other request.
func producePartitions(key int16, frame []byte) int {
	if key != int16(protocol.Produce) {
		return 0
	}
	_, _, _, msg, err := protocol.ReadRequest(bytes.NewReader(frame))
	r, ok := msg.(*produce.Request)
	if err != nil || !ok {
		return 1 // undecodable: count the request as one batch at least
	}
	n := 0
	for _, t := range r.Topics {
		n += len(t.Partitions)
	}
	return n
}

// readFrame reads one size-prefixed frame, prefix included.
func readFrame(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	size := int32(binary.BigEndian.Uint32(hdr[:]))
	if size < 0 || size > 256<<20 {
		return nil, fmt.Errorf("faultproxy: frame size %d", size)
	}
	frame := make([]byte, 4+int(size))
	copy(frame, hdr[:])
	if _, err := io.ReadFull(r, frame[4:]); err != nil {
		return nil, err
	}
	return frame, nil
}
