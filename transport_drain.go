package kafka

import (
	"errors"
	"net"
	"os"
	"time"
)

// A broker works through the requests of a connection in order, and keeps
// working through those it has read after the client closes the connection.
// A holder that must know when the broker is done with what it wrote (a
// Writer's acks=0 lane, whose next request may go on another connection)
// marks its own connection with drainOnClose: closing it then stops the
// writes only, and reads until the broker closes its side, which a broker
// does once it has reached the end of the stream, so after the requests
// before it.

// connDrain is how a marked connection ends.
type connDrain struct {
	bound time.Duration // the longest wait for the broker to close its side
	done  chan struct{} // closed once the connection is closed
}

// drainOnClose marks c, an own connection, so that closing it drains it
// (for at most bound). Only the connection's holder calls it.
func (c *brokerConn) drainOnClose(bound time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.drain == nil {
		c.drain = &connDrain{bound: bound, done: make(chan struct{})}
		if c.err != nil {
			close(c.drain.done) // closed the usual way already
		}
	}
}

// drained returns the channel closed once a connection marked by
// drainOnClose is closed, its drain over.
func (c *brokerConn) drained() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.drain.done
}

// closeAtOnce removes the mark of drainOnClose, from a holder giving a
// connection that is in order back to its pool.
func (c *brokerConn) closeAtOnce() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.drain = nil
	}
}

// shutDrained ends a marked connection: writes stop (a half close), then
// whatever the broker still sends is read and dropped until it closes its
// side, a read fails, or d.bound passes. A connection that cannot be half
// closed is closed at once.
func (c *brokerConn) shutDrained(d *connDrain) {
	defer close(d.done)
	defer c.nc.Close()
	// Under TLS no closing alert is sent: after a write cut mid-record it
	// would be taken for the rest of that record (and its write may block
	// for seconds); the end of the TCP stream is what the broker needs.
	wc, ok := beneathTLS(c.nc).(interface{ CloseWrite() error })
	if !ok || wc.CloseWrite() != nil {
		return
	}
	// The holder's last read may still set or clear the read deadline
	// while it lets go of the connection: the bound is a timer of its own,
	// and the deadline, set again before every read, only wakes reads up.
	end := time.Now().Add(d.bound)
	stop := time.AfterFunc(d.bound, func() { c.nc.Close() })
	defer stop.Stop()
	var buf [512]byte
	for {
		c.nc.SetReadDeadline(end)
		_, err := c.nc.Read(buf[:])
		switch {
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded) && time.Now().Before(end):
		default:
			return
		}
	}
}

// beneathTLS returns the connection a TLS connection runs on, and any
// other connection as it is.
func beneathTLS(nc net.Conn) net.Conn {
	if tc, ok := nc.(interface{ NetConn() net.Conn }); ok {
		return tc.NetConn()
	}
	return nc
}

// abortDrain ends the drain of c now: its read fails. The TCP connection
// is closed beneath any TLS, whose closing alert could wait on a full
// socket buffer.
func (c *brokerConn) abortDrain() { beneathTLS(c.nc).Close() }
