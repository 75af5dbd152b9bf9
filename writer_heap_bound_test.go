package kafka

import (
	"context"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	produceAPI "github.com/segmentio/kafka-go/protocol/produce"
)

// gatedAcks is ackAll with its Produce answers held while the gate is
// closed: a broker that stopped answering, then one that answers at once.
type gatedAcks struct {
	ackAll
	mu   sync.Mutex
	gate chan struct{}
}

func (g *gatedAcks) RoundTrip(ctx context.Context, addr net.Addr, req Request) (Response, error) {
	if _, ok := req.(*produceAPI.Request); ok {
		g.mu.Lock()
		gate := g.gate
		g.mu.Unlock()
		if gate != nil {
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	return g.ackAll.RoundTrip(ctx, addr, req)
}

func (g *gatedAcks) open() {
	g.mu.Lock()
	close(g.gate)
	g.gate = nil
	g.mu.Unlock()
}

func (g *gatedAcks) close() {
	g.mu.Lock()
	g.gate = make(chan struct{})
	g.mu.Unlock()
}

// The heap a Writer without Completion may use for B bytes of messages
// held (as MaxBufferedBytes counts them), M messages, P partitions written
// to (docs/backpressure.md, "The bound is the memory"):
//
//	1.25 × (B + recordExcess × M)   the encoded records of closed batches:
//	                   a record takes at most its counted size plus
//	                   recordExcess bytes, a closed batch keeps at most a
//	                   quarter more room (writer_batchroom.go), allocator
//	                   rounding included
//	+ open             the records of the open batches once more: growth
//	                   by append at most doubles them
//	+ heapPerBatch     each batch's struct, done channel and last 64 B
//	+ heapPerPartition each partition's writer, linger entry and share of
//	                   a Produce request
//	+ heapConstant     the Writer, its sinks, metadata, a caller's call
//	                   being accepted, and the room open batches may hold
//	                   ahead (roomAheadLimit)
//
// Through a Transport, each request out is also encoded in a frame while
// it is written (up to sinkMaxInflight per broker, in the formula's
// constant); the stub round tripper of the tests encodes nothing.
const (
	recordExcess     int64 = 9
	heapPerBatch     int64 = 512
	heapPerPartition int64 = 2048
	heapConstant     int64 = 1<<20 + roomAheadLimit
)

// writerHeapBound returns the bound above for w holding msgs messages.
func writerHeapBound(w *Writer, msgs int64) int64 {
	st := w.state()
	held := st.stats.bufferedBytes.Load()
	batches := st.stats.bufferedBatches.Load()
	var open, partitions int64
	for _, pw := range w.partitionWriters() {
		partitions++
		pw.mu.Lock()
		if pw.cur != nil {
			open += int64(pw.cur.recs.Size())
		}
		pw.mu.Unlock()
	}
	return (held+recordExcess*msgs)*5/4 + open + batches*heapPerBatch + partitions*heapPerPartition + heapConstant
}

// TestWriterHeapWithinBoundAtThousandPartitions writes to 1000 partitions
// with MaxBufferedBytes set to a broker that stops answering, answers at
// once for a while, stops again, and so on; each time it has stopped and
// the Writer is full (the producer waits for space, nothing moves), the
// live heap is measured after a full collection, against the documented
// bound (writerHeapBound). (Measured
// while messages flow, the heap would also count what the producer
// allocated since the collection.)
func TestWriterHeapWithinBoundAtThousandPartitions(t *testing.T) {
	const (
		partitions = 1000
		valueSize  = 100 // allocated as 112 B, counted as 123 (22 B of record overhead, 1 of headers)
		perCall    = 100
		budget     = 8 << 20
	)
	broker := &gatedAcks{ackAll: ackAll{partitions: partitions}, gate: make(chan struct{})}
	base := heapInUse()
	w := &Writer{Addr: TCP("stub"), Topic: "t", Transport: broker,
		BatchSize: 1000, BatchTimeout: 10 * time.Millisecond, Async: true, RequiredAcks: RequireOne,
		MaxBufferedBatches: 4, MaxBufferedBytes: budget}
	ctx, cancel := context.WithCancel(testContext(t))
	produced := make(chan error, 1)
	go func() {
		for ctx.Err() == nil {
			msgs := make([]Message, perCall)
			for i := range msgs {
				msgs[i].Value = make([]byte, valueSize)
			}
			if err := w.WriteMessages(ctx, msgs...); err != nil && ctx.Err() == nil {
				produced <- err
				return
			}
		}
		produced <- nil
	}()

	check := func(phase string) {
		t.Helper()
		heap := heapInUse() - base
		st := w.state()
		held := st.stats.bufferedBytes.Load()
		msgs := held / (valueSize + messageFixedSize + 1)
		bound := writerHeapBound(w, msgs)
		t.Logf("%s: heap %.1f MiB for %.1f MiB of messages (%d), bound %.1f MiB",
			phase, float64(heap)/(1<<20), float64(held)/(1<<20), msgs, float64(bound)/(1<<20))
		if held > budget {
			t.Errorf("%s: %d bytes held, beyond MaxBufferedBytes %d", phase, held, budget)
		}
		if heap > bound {
			t.Errorf("%s: live heap %d bytes, beyond the bound %d", phase, heap, bound)
		}
	}

	for round := 0; round < 5; round++ {
		// The broker holds everything: the Writer fills up to its bound
		// and the producer waits.
		eventually(t, "the producer waits for space", func() bool {
			return byteWaiters(w) > 0 && w.state().stats.bufferedBytes.Load() > budget-perCall*(valueSize+messageFixedSize+1)
		})
		check("round " + strconv.Itoa(round))
		// The broker answers for a while: batches go and come back
		// while the producer keeps the Writer full.
		broker.open()
		time.Sleep(20 * time.Millisecond)
		broker.close()
	}
	broker.open()
	cancel()
	if err := <-produced; err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
