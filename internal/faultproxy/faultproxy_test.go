package faultproxy

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// broker is a stand-in that answers every request frame with a frame
// carrying the same correlation ID, and records the IDs it received.
type broker struct {
	ln   net.Listener
	mu   sync.Mutex
	seen []int32
	wg   sync.WaitGroup
}

func newBroker(t *testing.T) *broker {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	b := &broker{ln: ln}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			b.wg.Add(1)
			go func() {
				defer b.wg.Done()
				defer nc.Close()
				for {
					f, err := readFrame(nc)
					if err != nil {
						return
					}
					id := int32(binary.BigEndian.Uint32(f[8:]))
					b.mu.Lock()
					b.seen = append(b.seen, id)
					b.mu.Unlock()
					var res [12]byte
					binary.BigEndian.PutUint32(res[0:], 8)
					binary.BigEndian.PutUint32(res[4:], uint32(id))
					binary.BigEndian.PutUint32(res[8:], 0xcafe)
					if _, err := nc.Write(res[:]); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); b.wg.Wait() })
	return b
}

func (b *broker) received() []int32 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]int32(nil), b.seen...)
}

func newProxy(t *testing.T) *Proxy {
	p, err := New()
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

func request(key int16, id int32) []byte {
	f := make([]byte, 16)
	binary.BigEndian.PutUint32(f[0:], 12)
	binary.BigEndian.PutUint16(f[4:], uint16(key))
	binary.BigEndian.PutUint16(f[6:], 3)
	binary.BigEndian.PutUint32(f[8:], uint32(id))
	return f
}

func dial(t *testing.T, p *Proxy, b *broker) net.Conn {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := p.Dial(ctx, "tcp", b.ln.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	return nc
}

// answerID reads one answer and returns its correlation ID.
func answerID(nc net.Conn) (int32, error) {
	f, err := readFrame(nc)
	if err != nil {
		return 0, err
	}
	return int32(binary.BigEndian.Uint32(f[4:])), nil
}

func TestForwardPipelined(t *testing.T) {
	b := newBroker(t)
	p := newProxy(t)
	var got []Request
	var mu sync.Mutex
	p.SetRule(func(r Request) Action {
		mu.Lock()
		got = append(got, r)
		mu.Unlock()
		return Forward
	})
	nc := dial(t, p, b)
	for id := int32(1); id <= 3; id++ {
		_, err := nc.Write(request(0, id))
		require.NoError(t, err)
	}
	for id := int32(1); id <= 3; id++ {
		got, err := answerID(nc)
		require.NoError(t, err)
		require.Equal(t, id, got)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 3)
	require.Equal(t, Request{Conn: 1, Addr: b.ln.Addr().String(), Index: 3, ApiKey: 0, Version: 3, ID: 3, Size: 12}, got[2])
	require.Equal(t, 3, p.Stats().Fired[Forward])
}

// Before: the broker never sees the request and the client reads the end
// of the stream (FIN) or a reset (RST).
func TestBefore(t *testing.T) {
	for _, tc := range []struct {
		action Action
		check  func(t *testing.T, err error)
	}{
		{CloseBefore, func(t *testing.T, err error) { require.ErrorIs(t, err, io.EOF) }},
		{ResetBefore, func(t *testing.T, err error) { require.ErrorIs(t, err, syscall.ECONNRESET) }},
	} {
		t.Run(tc.action.String(), func(t *testing.T) {
			b := newBroker(t)
			p := newProxy(t)
			p.SetRule(func(r Request) Action {
				if r.ID == 2 {
					return tc.action
				}
				return Forward
			})
			nc := dial(t, p, b)
			_, err := nc.Write(request(0, 1))
			require.NoError(t, err)
			id, err := answerID(nc)
			require.NoError(t, err)
			require.Equal(t, int32(1), id)
			_, err = nc.Write(request(0, 2))
			require.NoError(t, err)
			_, err = answerID(nc)
			tc.check(t, err)
			require.Equal(t, []int32{1}, b.received())
			s := p.Stats()
			require.Equal(t, 1, s.Fired[tc.action])
			require.Zero(t, s.Dropped)
			require.Empty(t, s.Unanswered)
		})
	}
}

// After: the broker processes the request, its answer is dropped, and
// answers to requests before it still arrive.
func TestAfter(t *testing.T) {
	for _, tc := range []struct {
		action Action
		check  func(t *testing.T, err error)
	}{
		{CloseAfter, func(t *testing.T, err error) { require.ErrorIs(t, err, io.EOF) }},
		{ResetAfter, func(t *testing.T, err error) { require.ErrorIs(t, err, syscall.ECONNRESET) }},
	} {
		t.Run(tc.action.String(), func(t *testing.T) {
			b := newBroker(t)
			p := newProxy(t)
			p.SetRule(func(r Request) Action {
				if r.ID == 2 {
					return tc.action
				}
				return Forward
			})
			nc := dial(t, p, b)
			_, err := nc.Write(append(request(7, 1), request(7, 2)...))
			require.NoError(t, err)
			id, err := answerID(nc)
			require.NoError(t, err)
			require.Equal(t, int32(1), id)
			_, err = answerID(nc)
			tc.check(t, err)
			require.Eventually(t, func() bool { return len(b.received()) == 2 }, 10*time.Second, time.Millisecond)
			s := p.Stats()
			require.Equal(t, 1, s.Fired[tc.action])
			require.Equal(t, 1, s.Dropped)
			require.Equal(t, map[int16]int{7: 1}, s.Unanswered)
		})
	}
}

func TestRefuse(t *testing.T) {
	b := newBroker(t)
	p := newProxy(t)
	p.SetRefuse(func(string) bool { return true })
	_, err := p.Dial(context.Background(), "tcp", b.ln.Addr().String())
	require.ErrorIs(t, err, syscall.ECONNREFUSED)
	var op *net.OpError
	require.True(t, errors.As(err, &op))
	p.SetRefuse(nil)
	nc := dial(t, p, b)
	_, err = nc.Write(request(0, 1))
	require.NoError(t, err)
	_, err = answerID(nc)
	require.NoError(t, err)
	s := p.Stats()
	require.Equal(t, 1, s.Refused)
	require.Equal(t, 1, s.Dials)
}

// Close ends every connection and its goroutines.
func TestCloseAndCloseAll(t *testing.T) {
	b := newBroker(t)
	p := newProxy(t)
	nc := dial(t, p, b)
	p.CloseAll()
	_, err := answerID(nc)
	require.ErrorIs(t, err, io.EOF)
	nc2 := dial(t, p, b)
	require.NoError(t, p.Close())
	_, err = answerID(nc2)
	require.ErrorIs(t, err, io.EOF)
	_, err = p.Dial(context.Background(), "tcp", b.ln.Addr().String())
	require.Error(t, err)
}
