package kafka

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/apiversions"
	"github.com/segmentio/kafka-go/protocol/fetch"
	"github.com/segmentio/kafka-go/protocol/metadata"
	"github.com/stretchr/testify/require"
)

// emptyReads returns data, then reads of nothing without an error, which
// no net.Conn does but a custom Dial's connection could.
type emptyReads struct{ data []byte }

func (r *emptyReads) Read(p []byte) (int, error) {
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

type noDeadline struct{ net.Conn }

func (noDeadline) SetReadDeadline(time.Time) error { return nil }

// A connection whose reads return nothing fails the body (and so the
// connection) instead of handing out stale bytes or spinning.
func TestResponseBodyEmptyReads(t *testing.T) {
	for _, small := range []bool{true, false} {
		src := &emptyReads{data: []byte("abc")}
		body := &responseBody{br: bufio.NewReaderSize(src, 16), nc: noDeadline{}, left: 100}
		var err error
		got := 0
		for i := 0; i < 10 && err == nil; i++ {
			if small {
				_, err = body.ReadByte()
			} else {
				_, err = body.Read(make([]byte, 2*streamBufferSize))
			}
			if err == nil {
				got++
			}
		}
		if !errors.Is(err, io.ErrNoProgress) || !body.broken {
			t.Fatalf("small reads %v: after %d reads: %v (broken %v)", small, got, err, body.broken)
		}
		body.finish()
	}
}

// leaseBroker is a one-broker fake whose Fetch answers come from answer;
// it tells which connection each request came on.
func leaseBroker(t *testing.T, answer func(r *fakebroker.Request)) (*fakebroker.Cluster, *Transport) {
	fc := fakebroker.New(t, 1)
	b := fc.Brokers[0]
	b.Mu.Lock()
	b.ApiKeys = append([]apiversions.ApiKeyResponse(nil), b.ApiKeys...)
	for i, k := range b.ApiKeys {
		if protocol.ApiKey(k.ApiKey) == protocol.Fetch {
			b.ApiKeys[i].MaxVersion = 11 // fetchFrameV11
		}
	}
	b.Mu.Unlock()
	fc.SetHandler(func(r *fakebroker.Request) {
		if _, ok := r.Msg.(*fetch.Request); ok {
			answer(r)
		}
	})
	tr := &Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return fc, tr
}

func leaseFetchRequest() *fetch.Request {
	return &fetch.Request{ReplicaID: -1, MaxBytes: 1 << 20, Topics: []fetch.RequestTopic{{
		Topic: "t", Partitions: []fetch.RequestPartition{{PartitionMaxBytes: 1 << 20}},
	}}}
}

// fetchConns returns the connection numbers the fetches came on.
func fetchConns(fc *fakebroker.Cluster) []int {
	var conns []int
	for _, s := range fc.Requests(protocol.Fetch) {
		conns = append(conns, s.Conn)
	}
	return conns
}

// A holder that releases its lease before the end of the response (a
// Reader closed, or moved elsewhere, mid-response) gives the connection
// back once the rest is skipped: the next lease reads its own response, on
// the same connection.
func TestLeaseReleasedMidResponseKeepsConnection(t *testing.T) {
	fc, tr := leaseBroker(t, func(r *fakebroker.Request) {
		writeRaw(r, fetchFrameV11(r.ID, 400, streamBatch(t, 0, 200), streamBatch(t, 200, 400))...)
	})
	ctx := testContext(t)
	for round := 0; round < 3; round++ {
		req := leaseFetchRequest()
		l, err := tr.lease(ctx, fc.Addr(), req)
		require.NoError(t, err)
		version, id, err := l.send(ctx, req)
		require.NoError(t, err)
		body, err := l.response(ctx, id, 10*time.Second, 10*time.Second)
		require.NoError(t, err)
		rs, err := fetch.NewResponseStream(body, body.Len(), version)
		require.NoError(t, err)
		_, _, records, err := rs.Next()
		require.NoError(t, err)
		b, err := records.Next()
		require.NoError(t, err)
		rec, err := b.ReadRecord()
		require.NoError(t, err)
		require.Equal(t, int64(0), rec.Offset)
		closeRecord(rec)
		rs.Close()
		l.release() // 399 records unread
		// The rest is skipped in the background, then the connection
		// is back in the pool.
		require.Eventually(t, func() bool {
			l.pool.mu.Lock()
			defer l.pool.mu.Unlock()
			return l.c.inflight == 0
		}, 10*time.Second, time.Millisecond)
	}
	// Every fetch went on one connection, which was never dropped.
	require.Eventually(t, func() bool { return len(fetchConns(fc)) == 3 }, 10*time.Second, time.Millisecond)
	conns := fetchConns(fc)
	require.Equal(t, conns[0], conns[1])
	require.Equal(t, conns[0], conns[2])
	require.Zero(t, fc.Brokers[0].NumClosed())
}

// A read interrupted by the holder's context fails with the context's
// error; the rest of the response is skipped in the background, and the
// broker stalling past the read timeout costs the connection; the next
// lease gets a new connection that works.
func TestLeaseInterruptedMidResponse(t *testing.T) {
	var n atomic.Int32
	fc, tr := leaseBroker(t, func(r *fakebroker.Request) {
		pieces := fetchFrameV11(r.ID, 10, streamBatch(t, 0, 10))
		if n.Add(1) == 1 {
			writeRaw(r, pieces[0]) // then nothing: the broker stalls
			return
		}
		writeRaw(r, pieces...)
	})
	ctx, cancel := context.WithCancel(testContext(t))
	req := leaseFetchRequest()
	l, err := tr.lease(ctx, fc.Addr(), req)
	require.NoError(t, err)
	version, id, err := l.send(ctx, req)
	require.NoError(t, err)
	body, err := l.response(ctx, id, time.Second, time.Second)
	require.NoError(t, err)
	rs, err := fetch.NewResponseStream(body, body.Len(), version)
	require.NoError(t, err)
	time.AfterFunc(20*time.Millisecond, cancel)
	var nextErr error
	for nextErr == nil {
		_, _, records, err := rs.Next()
		if err != nil {
			nextErr = err
			break
		}
		_, nextErr = records.Next()
	}
	require.Error(t, nextErr)
	require.Error(t, ctx.Err())
	rs.Close()
	l.release()
	require.Eventually(t, func() bool { return fc.Brokers[0].NumClosed() >= 1 }, 10*time.Second, time.Millisecond)

	ctx2 := testContext(t)
	req = leaseFetchRequest()
	l, err = tr.lease(ctx2, fc.Addr(), req)
	require.NoError(t, err)
	defer l.release()
	version, id, err = l.send(ctx2, req)
	require.NoError(t, err)
	body, err = l.response(ctx2, id, 10*time.Second, 10*time.Second)
	require.NoError(t, err)
	rs, err = fetch.NewResponseStream(body, body.Len(), version)
	require.NoError(t, err)
	defer rs.Close()
	_, _, records, err := rs.Next()
	require.NoError(t, err)
	b, err := records.Next()
	require.NoError(t, err)
	count := 0
	for rec, err := b.ReadRecord(); err == nil; rec, err = b.ReadRecord() {
		closeRecord(rec)
		count++
	}
	require.Equal(t, 10, count)
	conns := fetchConns(fc)
	require.Len(t, conns, 2)
	require.NotEqual(t, conns[0], conns[1])
}

// While a connection is leased nothing else is sent on it: requests that
// share connections (ListOffsets here) go on others, and a second lease
// gets a connection of its own.
func TestLeaseConnectionIsNotShared(t *testing.T) {
	release := make(chan struct{})
	fc, tr := leaseBroker(t, func(r *fakebroker.Request) {
		go func() {
			<-release
			writeRaw(r, fetchFrameV11(r.ID, 1, streamBatch(t, 0, 1))...)
		}()
	})
	defer close(release)
	ctx := testContext(t)
	var leases []*connLease
	for i := 0; i < 2; i++ {
		req := leaseFetchRequest()
		l, err := tr.lease(ctx, fc.Addr(), req)
		require.NoError(t, err)
		defer l.release()
		_, _, err = l.send(ctx, req)
		require.NoError(t, err)
		leases = append(leases, l)
	}
	for i := 0; i < 5; i++ {
		_, err := tr.RoundTrip(ctx, fc.Addr(), &metadata.Request{TopicNames: []string{"t"}})
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return len(fetchConns(fc)) == 2 }, 10*time.Second, time.Millisecond)
	fetches := fetchConns(fc)
	require.NotEqual(t, fetches[0], fetches[1])
	for _, s := range fc.Requests(protocol.Metadata) {
		require.NotContains(t, fetches, s.Conn)
	}
	require.NotSame(t, leases[0].c, leases[1].c)
}

// A holder whose context ends before its response has started (a Reader
// or a group member stopped while the broker held the request) leaves all
// of the response on the connection: the whole frame is skipped, and the
// next lease on the same connection reads its own response, not the
// abandoned one's body (which it once took for a frame header of size 0).
func TestLeaseInterruptedBeforeResponseKeepsFraming(t *testing.T) {
	var n atomic.Int32
	answer := make(chan struct{})
	fc, tr := leaseBroker(t, func(r *fakebroker.Request) {
		pieces := fetchFrameV11(r.ID, 10, streamBatch(t, 0, 10))
		if n.Add(1) == 1 {
			go func() {
				<-answer
				writeRaw(r, pieces...)
			}()
			return
		}
		writeRaw(r, pieces...)
	})
	ctx, cancel := context.WithCancel(testContext(t))
	req := leaseFetchRequest()
	l, err := tr.lease(ctx, fc.Addr(), req)
	require.NoError(t, err)
	_, id, err := l.send(ctx, req)
	require.NoError(t, err)
	cancel()
	_, err = l.response(ctx, id, 10*time.Second, 10*time.Second)
	require.ErrorIs(t, err, context.Canceled)
	l.release()
	close(answer)
	require.Eventually(t, func() bool {
		l.pool.mu.Lock()
		defer l.pool.mu.Unlock()
		return l.c.inflight == 0
	}, 10*time.Second, time.Millisecond)

	ctx2 := testContext(t)
	for round := 0; round < 2; round++ {
		req = leaseFetchRequest()
		l2, err := tr.lease(ctx2, fc.Addr(), req)
		require.NoError(t, err)
		require.True(t, l.c == l2.c, "the connection was not reused (%v)", l.c.broken())
		version, id, err := l2.send(ctx2, req)
		require.NoError(t, err)
		body, err := l2.response(ctx2, id, 10*time.Second, 10*time.Second)
		require.NoError(t, err, "round %d", round)
		rs, err := fetch.NewResponseStream(body, body.Len(), version)
		require.NoError(t, err)
		_, _, records, err := rs.Next()
		require.NoError(t, err)
		b, err := records.Next()
		require.NoError(t, err)
		count := 0
		for rec, err := b.ReadRecord(); err == nil; rec, err = b.ReadRecord() {
			require.Equal(t, int64(count), rec.Offset)
			closeRecord(rec)
			count++
		}
		require.Equal(t, 10, count)
		rs.Close()
		l2.release()
	}
	require.Zero(t, fc.Brokers[0].NumClosed())
}

// skip finishes reading a frame header the holder read part of, checks it,
// and leaves the connection at the start of the next frame; a header that
// is not the awaited response's fails it.
func TestLeaseSkipPartialHeader(t *testing.T) {
	frame := func(id int32, body string) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(4+len(body)))
		b = binary.BigEndian.AppendUint32(b, uint32(id))
		return append(b, body...)
	}
	for _, read := range []int{0, 3, 7} {
		for _, id := range []int32{9, 10} {
			client, server := net.Pipe()
			go func() {
				server.Write(append(frame(9, "abandoned body")[read:], frame(10, "next")...))
			}()
			l := &connLease{c: &brokerConn{nc: client, br: bufio.NewReader(client), address: "b"}, id: id, readTimeout: 10 * time.Second}
			copy(l.hdr[:], frame(9, "abandoned body")[:read])
			l.hdrRead = read
			l.body.timeout = 10 * time.Second
			err := l.skip()
			if id != 9 {
				require.ErrorContains(t, err, "answered correlation ID 9 to request 10")
				client.Close()
				server.Close()
				continue
			}
			require.NoError(t, err, "read %d", read)
			next := make([]byte, 12)
			_, err = io.ReadFull(l.c.br, next)
			require.NoError(t, err)
			require.Equal(t, frame(10, "next"), next, "read %d", read)
			client.Close()
			server.Close()
		}
	}
}

// With no bound on when the response will start (roundTrip's requests: a
// broker may hold a JoinGroup for minutes), a holder interrupted before it
// started drops the connection instead of waiting for the response in the
// background; the next lease gets a new connection that works.
func TestLeaseInterruptedBeforeUnboundedResponseDropsConnection(t *testing.T) {
	var n atomic.Int32
	answer := make(chan struct{})
	defer close(answer)
	fc, tr := leaseBroker(t, func(r *fakebroker.Request) {
		pieces := fetchFrameV11(r.ID, 10, streamBatch(t, 0, 10))
		if n.Add(1) == 1 {
			go func() {
				<-answer
				writeRaw(r, pieces...)
			}()
			return
		}
		writeRaw(r, pieces...)
	})
	ctx, cancel := context.WithCancel(testContext(t))
	req := leaseFetchRequest()
	l, err := tr.lease(ctx, fc.Addr(), req)
	require.NoError(t, err)
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err = l.roundTrip(ctx, req)
	require.ErrorIs(t, err, context.Canceled)
	l.release()
	require.Eventually(t, func() bool { return fc.Brokers[0].NumClosed() == 1 }, 10*time.Second, time.Millisecond)

	ctx2 := testContext(t)
	req = leaseFetchRequest()
	l2, err := tr.lease(ctx2, fc.Addr(), req)
	require.NoError(t, err)
	defer l2.release()
	require.True(t, l.c != l2.c)
	res, err := l2.roundTrip(ctx2, req)
	require.NoError(t, err)
	require.Len(t, res.(*fetch.Response).Topics, 1)
}

// A request sent on a lease whose response is never asked for leaves that
// response to come on the connection: release drops the connection rather
// than give the next holder a socket with someone else's response on it.
func TestLeaseReleasedWithResponseUnreadDropsConnection(t *testing.T) {
	fc, tr := leaseBroker(t, func(r *fakebroker.Request) {
		writeRaw(r, fetchFrameV11(r.ID, 10, streamBatch(t, 0, 10))...)
	})
	ctx := testContext(t)
	req := leaseFetchRequest()
	l, err := tr.lease(ctx, fc.Addr(), req)
	require.NoError(t, err)
	_, _, err = l.send(ctx, req)
	require.NoError(t, err)
	l.release()
	require.Eventually(t, func() bool { return fc.Brokers[0].NumClosed() == 1 }, 10*time.Second, time.Millisecond)
	l2, err := tr.lease(ctx, fc.Addr(), req)
	require.NoError(t, err)
	defer l2.release()
	require.True(t, l.c != l2.c)
	res, err := l2.roundTrip(ctx, req)
	require.NoError(t, err)
	require.Len(t, res.(*fetch.Response).Topics, 1)
}
