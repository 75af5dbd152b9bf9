package testing

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

func TestConnWaitGroup(t *testing.T) {
	var peers []net.Conn
	g := &ConnWaitGroup{DialFunc: func(ctx context.Context, network, address string) (net.Conn, error) {
		if address == "fail" {
			return nil, errors.New("refused")
		}
		a, b := net.Pipe()
		peers = append(peers, b)
		return a, nil
	}}
	defer func() {
		for _, p := range peers {
			p.Close()
		}
	}()

	if _, err := g.Dial(context.Background(), "tcp", "fail"); err == nil {
		t.Fatal("dial error must be returned")
	}
	c1, err := g.Dial(context.Background(), "tcp", "a")
	if err != nil {
		t.Fatal(err)
	}
	c2, _ := g.Dial(context.Background(), "tcp", "b")

	done := make(chan struct{})
	go func() { g.Wait(); close(done) }()

	c1.Close()
	c1.Close() // closing twice releases once
	select {
	case <-done:
		t.Fatal("Wait returned with a connection still open")
	case <-time.After(50 * time.Millisecond):
	}
	c2.Close()
	<-done // returns once every connection is closed
}
