package kafka

import (
	"context"
	"testing"
	"time"
)

// The cost of Writer.Idempotent: asynchronous one-message calls to 4
// partitions, against a broker stub that encodes every batch as on the wire
// and checks its sequence, with the option off and on. Besides ns/op (wall
// time per message) it reports cpu-ns/msg, the process CPU time per
// message, which includes the Writer's background goroutines.
func BenchmarkWriterIdempotent(b *testing.B) {
	for _, c := range []struct {
		name       string
		idempotent bool
	}{{"off", false}, {"on", true}} {
		b.Run(c.name, func(b *testing.B) {
			broker := newIdemBroker(map[string]int{"bench": 4})
			broker.bench = true
			w := &Writer{
				Addr: TCP("stub"), Topic: "bench", Transport: broker,
				Async: true, BatchSize: 100, BatchTimeout: time.Millisecond,
				RequiredAcks: RequireAll, Idempotent: c.idempotent,
			}
			msg := Message{Value: make([]byte, 100)}
			ctx := context.Background()
			b.SetBytes(int64(len(msg.Value)))
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				if err := w.WriteMessages(ctx, msg); err != nil {
					b.Fatal(err)
				}
			}
			w.Close()
			cpu := processCPU() - cpu0
			b.StopTimer()
			if cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/msg")
			}
			if broker.appended != b.N {
				b.Fatalf("%d records appended, want %d", broker.appended, b.N)
			}
			if calls, _ := broker.inits(); c.idempotent != (calls == 1) {
				b.Fatalf("%d InitProducerId calls", calls)
			}
		})
	}
}
