// Package testing holds helpers for the tests of programs using kafka-go.
package testing

import (
	"context"
	"net"
	"sync"
)

// ConnWaitGroup tracks the connections opened through its Dial method: the
// embedded WaitGroup counts them until they are closed, so that a test can
// Wait for every connection to be released.
type ConnWaitGroup struct {
	// DialFunc opens the connections, for instance (&net.Dialer{}).DialContext.
	DialFunc func(context.Context, string, string) (net.Conn, error)
	sync.WaitGroup
}

// Dial opens a connection with DialFunc and counts it until it is closed.
func (g *ConnWaitGroup) Dial(ctx context.Context, network, address string) (net.Conn, error) {
	conn, err := g.DialFunc(ctx, network, address)
	if err != nil {
		return nil, err
	}
	g.Add(1)
	return &trackedConn{Conn: conn, group: g}, nil
}

// trackedConn releases its slot in the group on the first Close.
type trackedConn struct {
	net.Conn
	group  *ConnWaitGroup
	closed sync.Once
}

func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.closed.Do(c.group.Done)
	return err
}
