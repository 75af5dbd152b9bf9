package kafka

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
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
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		if err := w.WriteMessages(context.Background(), msgs...); err != nil {
			b.Fatal(err)
		}
	}
	w.Close()
	cpu := processCPU() - cpu0
	b.StopTimer()
	// CPU time per message counts the sending goroutines too, and the
	// machine's other load less than ns/op does.
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*perCall), "cpu-ns/msg")
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

// One synchronous one-message WriteMessages at a time through the real
// Transport to a fake broker on loopback: the latency path of a sync
// caller (WriteMessages, the partition's sending loop, the connection's
// write and read loop, and back). ns/op is a round trip, fake broker
// included; allocs/op are the client's and the fake's.
func BenchmarkWriterSyncOneMessage(b *testing.B) {
	for _, c := range []struct {
		name    string
		batches int
		bytes   int64
	}{{"default", 0, 0}, {"bounded", 4, 16 << 20}} {
		b.Run(c.name, func(b *testing.B) {
			fc := fakebroker.New(b, 1)
			fc.SetHandler(func(r *fakebroker.Request) { tpProduceReply(r, 0) })
			tr := &Transport{}
			defer tr.CloseIdleConnections()
			w := &Writer{
				Addr: fc.Addr(), Topic: "t", Transport: tr,
				RequiredAcks: RequireOne, BatchSize: 1,
				MaxBufferedBatches: c.batches, MaxBufferedBytes: c.bytes,
			}
			defer w.Close()
			ctx := context.Background()
			value := make([]byte, 100)
			for i := 0; i < 100; i++ { // connect, look the partitions up
				if err := w.WriteMessages(ctx, Message{Value: value}); err != nil {
					b.Fatal(err)
				}
			}
			lat := make([]time.Duration, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if err := w.WriteMessages(ctx, Message{Value: value}); err != nil {
					b.Fatal(err)
				}
				lat[i] = time.Since(t0)
			}
			cpu := processCPU() - cpu0
			b.StopTimer()
			// The median and the 99th percentile say more than the mean on
			// a shared machine; CPU time (both sides of the loopback) says
			// what the path costs whatever the load.
			slices.Sort(lat)
			b.ReportMetric(float64(lat[b.N/2].Microseconds()), "p50-us")
			b.ReportMetric(float64(lat[b.N*99/100].Microseconds()), "p99-us")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
