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
	nc, err := g.DialFunc(ctx, network, address)
	if err != nil {
		return nil, err
	}
	g.Add(1)
	return &countedConn{Conn: nc, release: sync.OnceFunc(g.Done)}, nil
}

// countedConn gives back its count in the group when first closed; later
// Close calls only reach the underlying connection.
type countedConn struct {
	net.Conn
	release func()
}

func (c *countedConn) Close() error {
	defer c.release()
	return c.Conn.Close()
}
