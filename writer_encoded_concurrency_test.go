package kafka

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWriterConcurrentWritersReuseBuffers: many goroutines write, sync and
// async, to the same few partitions, each reusing one key and value buffer
// right after every call returns, while Flush and short BatchTimeouts close
// batches under them and the Writer is closed at the end. Every message
// must reach the broker once, with the bytes it had when written, in each
// goroutine's order per partition (run with -race: nothing may alias the
// caller's buffers or a batch being encoded).
func TestWriterConcurrentWritersReuseBuffers(t *testing.T) {
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			const (
				writers    = 16
				perWriter  = 300
				partitions = 3
			)
			stub := newStubBroker(map[string]int{"t": partitions})
			w := &Writer{Addr: TCP("stub"), Topic: "t", Transport: stub, Balancer: partitionByKey,
				BatchSize: 13, BatchBytes: 4096, BatchTimeout: 200 * time.Microsecond, Async: async,
				RequiredAcks: RequireOne, MaxBufferedBatches: 3, MaxBufferedBytes: 16 << 10}
			ctx := testContext(t)
			var wg sync.WaitGroup
			stop := make(chan struct{})
			go func() { // Flush fires all along
				for {
					select {
					case <-stop:
						return
					default:
					}
					_ = w.Flush(ctx)
					time.Sleep(100 * time.Microsecond)
				}
			}()
			for g := 0; g < writers; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					key := make([]byte, 0, 8)
					value := make([]byte, 0, 64)
					for i := 0; i < perWriter; i++ {
						p := (g + i) % partitions
						key = strconv.AppendInt(key[:0], int64(p), 10)
						value = fmt.Appendf(value[:0], "%d/%d/%s", g, i, strings.Repeat("x", i%40))
						if err := w.WriteMessages(ctx, Message{Key: key, Value: value}); err != nil {
							t.Error(err)
							return
						}
						for j := range value {
							value[j] = '!'
						}
						for j := range key {
							key[j] = '!'
						}
					}
				}(g)
			}
			wg.Wait()
			close(stop)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for p := 0; p < partitions; p++ {
				last := map[int]int{}
				for _, r := range stub.records(topicPartition{"t", int32(p)}) {
					var g, i int
					var pad string
					if _, err := fmt.Sscanf(r.value, "%d/%d/%s", &g, &i, &pad); err != nil && i%40 != 0 {
						t.Fatalf("partition %d: record %q=%q does not parse: %v", p, r.key, r.value, err)
					}
					if r.key != strconv.Itoa(p) || (g+i)%partitions != p || len(pad) != i%40 {
						t.Fatalf("partition %d: record %q=%q is not what was written", p, r.key, r.value)
					}
					if seen[r.value] {
						t.Fatalf("record %q delivered twice", r.value)
					}
					seen[r.value] = true
					if prev, ok := last[g]; ok && prev >= i {
						t.Fatalf("partition %d: writer %d's message %d after its message %d", p, g, i, prev)
					}
					last[g] = i
				}
			}
			if len(seen) != writers*perWriter {
				t.Fatalf("%d messages delivered, want %d", len(seen), writers*perWriter)
			}
		})
	}
}
