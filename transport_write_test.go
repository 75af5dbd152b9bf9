package kafka

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/produce"
)

// A request write goes out in one non-blocking system call when the socket
// takes it (writeNow); these tests cover the requests it does not take
// whole.

func bigProduceRequest(value []byte) *produce.Request {
	return &produce.Request{
		Acks:    -1,
		Timeout: 1000,
		Topics: []produce.RequestTopic{{
			Topic: "t",
			Partitions: []produce.RequestPartition{{
				Partition: 0,
				RecordSet: protocol.RecordSet{Records: NewRecordReader(Record{Value: NewBytes(value)})},
			}},
		}},
	}
}

// bigEncodedProduceRequest is bigProduceRequest with the record encoded as
// the Writer encodes its batches, which the encoder copies into the frame
// from where they are rather than through a batch buffer of its own.
func bigEncodedProduceRequest(value []byte) *produce.Request {
	var e protocol.EncodedRecords
	e.Append(time.Time{}, nil, value, nil)
	req := bigProduceRequest(nil)
	req.Topics[0].Partitions[0].RecordSet = protocol.RecordSet{Version: 2, Records: e.Reader()}
	return req
}

// bigRequests are the two ways a large request's records are written.
var bigRequests = []struct {
	name string
	make func([]byte) *produce.Request
}{{"records", bigProduceRequest}, {"encoded", bigEncodedProduceRequest}}

// A request larger than the socket buffers is written whole, byte for byte,
// when the broker reads it.
func TestBrokerConnWritesRequestsLargerThanTheSocket(t *testing.T) {
	for _, br := range bigRequests {
		t.Run(br.name, func(t *testing.T) { testBrokerConnWritesRequestsLargerThanTheSocket(t, br.make) })
	}
}

func testBrokerConnWritesRequestsLargerThanTheSocket(t *testing.T, bigProduceRequest func([]byte) *produce.Request) {
	value := make([]byte, 16<<20)
	_, err := rand.Read(value)
	require.NoError(t, err)

	fc := fakebroker.New(t, 1)
	got := make(chan []byte, 1)
	fc.SetHandler(func(r *fakebroker.Request) {
		rec, err := r.Msg.(*produce.Request).Topics[0].Partitions[0].RecordSet.Records.ReadRecord()
		if err == nil {
			b, _ := io.ReadAll(rec.Value)
			got <- b
		} else {
			got <- nil
		}
		tpProduceReply(r, 0)
	})
	cfg := &dialConfig{dial: defaultDialer.DialContext, dialTimeout: 10 * time.Second, clientID: "test"}
	c, err := dialBroker(testContext(t), cfg, "tcp", fc.Addr().String(), fc.Addr().String(), false)
	require.NoError(t, err)
	defer c.close(errConnClosed)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = c.roundTrip(ctx, bigProduceRequest(value))
	require.NoError(t, err)
	require.True(t, bytes.Equal(value, <-got), "the broker did not receive the value as sent")
	require.NoError(t, c.broken())
}

// A write the broker stops reading is still ended by the request's context,
// and the connection, which may hold part of a frame, is not used again.
func TestBrokerConnBlockedWriteEndsWithContext(t *testing.T) {
	for _, br := range bigRequests {
		t.Run(br.name, func(t *testing.T) { testBrokerConnBlockedWriteEndsWithContext(t, br.make) })
	}
}

func testBrokerConnBlockedWriteEndsWithContext(t *testing.T, bigProduceRequest func([]byte) *produce.Request) {
	fc := fakebroker.New(t, 1)
	release := make(chan struct{})
	defer close(release)
	fc.SetHandler(func(r *fakebroker.Request) {
		<-release // the broker reads nothing more until the test ends
	})
	// A small send buffer, so that the socket surely fills.
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		nc, err := defaultDialer.DialContext(ctx, network, address)
		if err == nil {
			err = nc.(*net.TCPConn).SetWriteBuffer(64 << 10)
		}
		return nc, err
	}
	cfg := &dialConfig{dial: dial, dialTimeout: 10 * time.Second, clientID: "test"}
	c, err := dialBroker(testContext(t), cfg, "tcp", fc.Addr().String(), fc.Addr().String(), false)
	require.NoError(t, err)
	defer c.close(errConnClosed)

	first := make(chan error, 1)
	go func() {
		_, err := c.roundTrip(testContext(t), tpProduceRequest(0, -1))
		first <- err
	}()
	tpWaitFor(t, "the first request to reach the broker", func() bool { return fc.Count(protocol.Produce, 0) == 1 })

	// Cancelled (no deadline, which the socket would enforce by itself)
	// once the request is registered as pending, which happens after the
	// context was last checked and just before its bytes go out: from
	// there on, cancelling interrupts the write, however loaded the
	// machine is (a fixed delay could fire while the 16 MiB request is
	// still being encoded, and then nothing would be written).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := c.roundTrip(ctx, bigProduceRequest(make([]byte, 16<<20)))
		done <- err
	}()
	tpWaitFor(t, "the second request to start its write", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.pending) == 2
	})
	// Usually long enough for the write to fill the socket and block; if
	// it has not yet, cancelling still interrupts it.
	time.Sleep(200 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(30 * time.Second):
		t.Fatal("a write blocked on a full socket outlived its context")
	}
	require.Error(t, c.broken(), "a connection with part of a frame written is still usable")
	// The request waiting on it fails too.
	select {
	case err := <-first:
		require.Error(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the request pending on the closed connection never returned")
	}
}

// A request whose context has already ended writes nothing, and the
// connection stays usable.
func TestBrokerConnEndedContextWritesNothing(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.SetHandler(func(r *fakebroker.Request) { tpProduceReply(r, 0) })
	cfg := &dialConfig{dial: defaultDialer.DialContext, dialTimeout: 10 * time.Second, clientID: "test"}
	c, err := dialBroker(testContext(t), cfg, "tcp", fc.Addr().String(), fc.Addr().String(), false)
	require.NoError(t, err)
	defer c.close(errConnClosed)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := 0; i < 20; i++ {
		_, err = c.roundTrip(ctx, tpProduceRequest(0, -1))
		require.ErrorIs(t, err, context.Canceled)
	}
	require.Equal(t, 0, fc.Count(protocol.Produce, 0))
	require.NoError(t, c.broken())
	_, err = c.roundTrip(testContext(t), tpProduceRequest(0, -1))
	require.NoError(t, err)
}

// Concurrent requests larger than the socket, on one connection: each is
// partly taken by the non-blocking write and finished by the usual one, and
// no other request's bytes may come in between (the broker would read a
// corrupt frame). Every request arrives whole and answers its own caller.
func TestBrokerConnConcurrentPartialWritesDoNotInterleave(t *testing.T) {
	for _, br := range bigRequests {
		t.Run(br.name, func(t *testing.T) { testBrokerConnConcurrentPartialWritesDoNotInterleave(t, br.make) })
	}
}

func testBrokerConnConcurrentPartialWritesDoNotInterleave(t *testing.T, bigProduceRequest func([]byte) *produce.Request) {
	fc := fakebroker.New(t, 1)
	fc.SetHandler(func(r *fakebroker.Request) {
		p := r.Msg.(*produce.Request).Topics[0].Partitions[0]
		rec, err := p.RecordSet.Records.ReadRecord()
		code := int16(0)
		if err != nil {
			code = int16(InvalidMessage)
		} else {
			b, _ := io.ReadAll(rec.Value)
			// Each value is filled with one byte; the partition number
			// names that byte.
			if len(b) == 0 || !bytes.Equal(b, bytes.Repeat(b[:1], len(b))) || int32(b[0]) != p.Partition {
				code = int16(InvalidMessage)
			}
		}
		tpProduceReply(r, code)
	})
	cfg := &dialConfig{dial: defaultDialer.DialContext, dialTimeout: 10 * time.Second, clientID: "test"}
	c, err := dialBroker(testContext(t), cfg, "tcp", fc.Addr().String(), fc.Addr().String(), false)
	require.NoError(t, err)
	defer c.close(errConnClosed)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const callers = 8
	errs := make(chan error, callers)
	for g := 0; g < callers; g++ {
		go func(g int) {
			req := bigProduceRequest(bytes.Repeat([]byte{byte(g + 1)}, (1+g%3)<<20))
			req.Topics[0].Partitions[0].Partition = int32(g + 1)
			res, err := c.roundTrip(ctx, req)
			if err == nil {
				if code := res.(*produce.Response).Topics[0].Partitions[0].ErrorCode; code != 0 {
					err = Error(code)
				}
			}
			errs <- err
		}(g)
	}
	for g := 0; g < callers; g++ {
		require.NoError(t, <-errs)
	}
	require.NoError(t, c.broken())
}
