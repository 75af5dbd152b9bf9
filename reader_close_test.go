package kafka

import (
	"bytes"
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/stretchr/testify/require"
)

// Reader.Close in the middle of a fetch response: it returns at once,
// whatever point of the response the Reader is at, and leaves no goroutine.

// Closing the Reader while it waits in the middle of a response returns
// at once and leaves no goroutine behind.
func TestReaderStreamCloseMidResponse(t *testing.T) {
	stall := make(chan struct{})
	defer close(stall)
	sb := newStreamBroker(t, 20, func(n int, r *fakebroker.Request, offset int64) {
		b1, b2 := streamBatch(t, 0, 10), streamBatch(t, 10, 20)
		f := fetchFrameV11(r.ID, 20, b1, b2)
		writeRaw(r, f[0], f[1][:len(b1)+5])
		<-stall
	})
	before := runtime.NumGoroutine()
	r := NewReader(ReaderConfig{Brokers: []string{sb.fc.Addr().String()}, Topic: "t", ReadBatchTimeout: time.Hour})
	readOffsets(t, r, 10, 10*time.Second)
	done := make(chan error, 1)
	go func() { done <- r.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close blocked by a response in progress")
	}
	// The fake broker's handler of the stalled request (one goroutine)
	// stays until the test ends.
	tpWaitFor(t, "the Reader's goroutines to exit", func() bool { return runtime.NumGoroutine() <= before+2 })
}

// Closing the Reader at any point of a response returns, and leaves no
// goroutine behind: the Reader reads a few messages, the broker sends a
// few more bytes (a batch and part of the next) and stalls, or sends the
// whole response, and the program closes.
func TestReaderStreamCloseAtAnyPoint(t *testing.T) {
	const end = 60
	stall := make(chan struct{})
	var mu sync.Mutex
	stallAt := -1 // batches sent whole before stalling (in the next); -1: none
	sb := newStreamBroker(t, end, func(n int, r *fakebroker.Request, offset int64) {
		var batches [][]byte
		for o := offset; o < end; o += 4 {
			batches = append(batches, streamBatch(t, o, min(o+4, end)))
		}
		f := fetchFrameV11(r.ID, end, batches...)
		mu.Lock()
		at := stallAt
		mu.Unlock()
		rec := f[1]
		if at >= 0 {
			upTo := len(bytes.Join(batches[:min(at, len(batches))], nil)) + at%17
			rec = rec[:min(upTo, len(rec))]
		}
		pieces := [][]byte{f[0]}
		for ; len(rec) > 0; rec = rec[min(len(rec), 31):] {
			pieces = append(pieces, rec[:min(len(rec), 31)])
		}
		writeRaw(r, pieces...)
		if at >= 0 {
			<-stall
		}
	})
	before := runtime.NumGoroutine()
	for k := 0; k < end; k += 3 {
		mu.Lock()
		stallAt = -1
		if k%2 == 0 {
			stallAt = k/4 + 1
		}
		mu.Unlock()
		r := NewReader(ReaderConfig{
			Brokers: []string{sb.fc.Addr().String()}, Topic: "t",
			MaxWait: 50 * time.Millisecond, QueueCapacity: 1 + k%3,
			ReadBatchTimeout: time.Hour,
		})
		if k > 0 {
			require.Equal(t, offsetsFrom(0, k), readCut(t, r, k))
		}
		done := make(chan error, 1)
		go func() { done <- r.Close() }()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatalf("Close after %d messages blocked", k)
		}
	}
	close(stall)
	// The fake broker's goroutines end with their connections.
	tpWaitFor(t, "the Readers' goroutines to exit", func() bool {
		return runtime.NumGoroutine() <= before+2
	})
}

// A FetchMessage or ReadMessage whose context has ended returns the
// context's error even with messages queued, and takes none of them: a
// program that stops its read loop by cancelling gets no more messages,
// and the next call with a live context gets the one that comes next.
func TestReaderEndedContextTakesNoQueuedMessage(t *testing.T) {
	stub := newWireFetchStub(t, 100, 100, 1e6, nil)
	fc := stub.serveOver(t)
	r := NewReader(ReaderConfig{Brokers: []string{fc.Addr().String()}, Topic: "t"})
	defer r.Close()
	first, err := r.FetchMessage(testContext(t))
	require.NoError(t, err)
	tpWaitFor(t, "messages queued", func() bool { return r.Stats().QueueLength > 0 })

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := 0; i < 20; i++ {
		_, err := r.FetchMessage(ctx)
		require.ErrorIs(t, err, context.Canceled)
		_, err = r.ReadMessage(ctx)
		require.ErrorIs(t, err, context.Canceled)
	}
	next, err := r.FetchMessage(testContext(t))
	require.NoError(t, err)
	require.Equal(t, first.Offset+1, next.Offset, "a call with an ended context took a message")
}
