package protocol

import (
	"bufio"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Conn is a connection to a broker that exchanges whole messages, choosing
// for each API the version set by SetVersions.
type Conn struct {
	conn     net.Conn
	rbuf     *bufio.Reader
	clientID string
	ids      atomic.Int32
	versions atomic.Pointer[map[ApiKey]int16]
	// exchange keeps one request/response exchange at a time on the
	// connection, so that concurrent RoundTrips cannot interleave frames.
	exchange sync.Mutex
}

// NewConn wraps conn, naming the client clientID in every request.
func NewConn(conn net.Conn, clientID string) *Conn {
	return &Conn{conn: conn, rbuf: bufio.NewReader(conn), clientID: clientID}
}

// String describes the connection as kafka://client@local->remote.
func (c *Conn) String() string {
	return fmt.Sprintf("kafka://%s@%s->%s", c.clientID, c.LocalAddr(), c.RemoteAddr())
}

func (c *Conn) Close() error { return c.conn.Close() }

// Discard skips n buffered or incoming bytes.
func (c *Conn) Discard(n int) (int, error) { return c.rbuf.Discard(n) }

// Peek returns the next n bytes without consuming them.
func (c *Conn) Peek(n int) ([]byte, error) { return c.rbuf.Peek(n) }

func (c *Conn) Read(b []byte) (int, error)  { return c.rbuf.Read(b) }
func (c *Conn) Write(b []byte) (int, error) { return c.conn.Write(b) }

func (c *Conn) LocalAddr() net.Addr  { return c.conn.LocalAddr() }
func (c *Conn) RemoteAddr() net.Addr { return c.conn.RemoteAddr() }

func (c *Conn) SetDeadline(t time.Time) error      { return c.conn.SetDeadline(t) }
func (c *Conn) SetReadDeadline(t time.Time) error  { return c.conn.SetReadDeadline(t) }
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.conn.SetWriteDeadline(t) }

// SetVersions sets the version used for each API (a copy of versions is
// kept).
func (c *Conn) SetVersions(versions map[ApiKey]int16) {
	m := make(map[ApiKey]int16, len(versions))
	for k, v := range versions {
		m[k] = v
	}
	c.versions.Store(&m)
}

func (c *Conn) currentVersions() map[ApiKey]int16 {
	if p := c.versions.Load(); p != nil {
		return *p
	}
	return nil
}

// RoundTrip sends msg and returns the response. The version is the one set
// by SetVersions for msg's API, or the highest registered one when none was
// set. Messages that do their own exchange (RawExchanger) take over the
// connection when they say so.
func (c *Conn) RoundTrip(msg Message) (Message, error) {
	c.exchange.Lock()
	defer c.exchange.Unlock()

	versions := c.currentVersions()
	key := msg.ApiKey()
	version, ok := versions[key]
	if !ok {
		version = key.MaxVersion()
		if mt, err := currentRegistry().encodeType(msg); err == nil {
			version = mt.max
		}
	}
	if p, ok := msg.(PreparedMessage); ok {
		p.Prepare(version)
	}
	if raw, ok := msg.(RawExchanger); ok && raw.Required(versions) {
		return raw.RawExchange(c)
	}
	return RoundTrip(c, version, c.ids.Add(1), c.clientID, msg)
}

var _ net.Conn = (*Conn)(nil)
