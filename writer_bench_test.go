package kafka

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// The Writer's own overhead, against a stub broker that answers at once:
// throughput of asynchronous one-message calls with an unbounded buffer
// (0) and with bounded ones.
func BenchmarkWriterAsync(b *testing.B) {
	for _, n := range []int{0, 1, 4, 16} {
		b.Run(fmt.Sprintf("MaxBufferedBatches=%d", n), func(b *testing.B) {
			benchmarkWriter(b, &Writer{
				Async: true, BatchSize: 100, BatchTimeout: time.Millisecond,
				MaxBufferedBatches: n, RequiredAcks: RequireOne,
			}, 1)
		})
	}
}

// The same with a writer-wide byte bound.
func BenchmarkWriterAsyncMaxBufferedBytes(b *testing.B) {
	for _, limit := range []int64{0, 64 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("MaxBufferedBytes=%d", limit), func(b *testing.B) {
			benchmarkWriter(b, &Writer{
				Async: true, BatchSize: 100, BatchTimeout: time.Millisecond,
				MaxBufferedBytes: limit, RequiredAcks: RequireOne,
			}, 1)
		})
	}
}

// With a Completion function: it runs on a goroutine of its own per
// partition, and with a bound a batch keeps its space until it returns.
func BenchmarkWriterAsyncCompletion(b *testing.B) {
	for _, n := range []int{0, 4} {
		b.Run(fmt.Sprintf("MaxBufferedBatches=%d", n), func(b *testing.B) {
			benchmarkWriter(b, &Writer{
				Async: true, BatchSize: 100, BatchTimeout: time.Millisecond,
				MaxBufferedBatches: n, RequiredAcks: RequireOne,
				Completion: func([]Message, error) {},
			}, 1)
		})
	}
}

// Many goroutines sharing a synchronous writer, the usual way to get
// batching with sync writes.
func BenchmarkWriterSyncParallel(b *testing.B) {
	for _, n := range []int{0, 4} {
		b.Run(fmt.Sprintf("MaxBufferedBatches=%d", n), func(b *testing.B) {
			w := &Writer{
				BatchSize: 100, BatchTimeout: time.Millisecond,
				MaxBufferedBatches: n, RequiredAcks: RequireOne,
			}
			stub := newStubBroker(map[string]int{"bench": 4})
			w.Addr, w.Topic, w.Transport = TCP("stub"), "bench", stub
			defer w.Close()
			msg := Message{Value: make([]byte, 100)}
			b.SetBytes(int64(len(msg.Value)))
			b.ReportAllocs()
			b.SetParallelism(16)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := w.WriteMessages(context.Background(), msg); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

func benchmarkWriter(b *testing.B, w *Writer, perCall int) {
	stub := newStubBroker(map[string]int{"bench": 4})
	w.Addr, w.Topic, w.Transport = TCP("stub"), "bench", stub
	msgs := make([]Message, perCall)
	for i := range msgs {
		msgs[i] = Message{Value: make([]byte, 100)}
	}
	b.SetBytes(int64(100 * perCall))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := w.WriteMessages(context.Background(), msgs...); err != nil {
			b.Fatal(err)
		}
	}
	w.Close()
	b.StopTimer()
	if got := stub.totalRecords(); got != b.N*perCall {
		b.Fatalf("%d records delivered, want %d", got, b.N*perCall)
	}
}

// The hot path of an asynchronous call allocates nothing per message: the
// message lands in the batch's preallocated array, and the call's own
// variadic array stays on the caller's stack.
func TestWriterAsyncWriteDoesNotAllocate(t *testing.T) {
	for _, c := range []struct {
		name           string
		batches, bytes int
	}{{"unbounded", 0, 0}, {"bounded", 4, 1 << 30}} {
		t.Run(c.name, func(t *testing.T) {
			stub := newStubBroker(map[string]int{"t": 1})
			w := &Writer{
				Addr: TCP("stub"), Topic: "t", Transport: stub, Async: true,
				BatchSize: 1024, BatchTimeout: time.Hour, RequiredAcks: RequireOne,
				MaxBufferedBatches: c.batches, MaxBufferedBytes: int64(c.bytes),
			}
			defer w.Close()
			ctx := context.Background()
			value := []byte("value")
			// The first call looks the partitions up and opens the batch.
			if err := w.WriteMessages(ctx, Message{Value: value}); err != nil {
				t.Fatal(err)
			}
			allocs := testing.AllocsPerRun(500, func() {
				if err := w.WriteMessages(ctx, Message{Value: value}); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Fatalf("%.1f allocations per one-message WriteMessages call, want 0", allocs)
			}
		})
	}
}
