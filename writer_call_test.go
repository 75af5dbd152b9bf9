package kafka

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// One WriteMessages call: its messages' order and batches under tight
// bounds, the indexes its errors report, and its place in the line.

// keyedPartition sends a message to the partition its key names ("p<N>/...").
var keyedPartition = BalancerFunc(func(m Message, partitions ...int) int {
	k := string(m.Key)
	n, _ := strconv.Atoi(k[1:strings.IndexByte(k, '/')])
	return partitions[n%len(partitions)]
})

func sizeOf(m Message) int64 { return m.totalSize() }

// A sync call whose messages alternate between partitions, with batches of
// a few messages, must report each failed batch at exactly the indexes of
// the messages it held: the fast path records several messages per hold of
// the lock, the waiting path one at a time, and both feed the same map.
func TestWriterSyncErrorsIndexedAcrossFastAndSlowPaths(t *testing.T) {
	for _, c := range []struct {
		name           string
		batches, bytes int64
	}{
		{"unbounded", 0, 0},
		{"MaxBufferedBatches 1", 1, 0},
		{"bytes of two messages", 0, 2 * sizeOf(Message{Key: []byte("p0/00"), Value: []byte("00")})},
		{"both", 1, 1 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			stub := newStubBroker(map[string]int{"t": 2})
			// The second batch of partition 1 is refused for good.
			stub.produceErrors[topicPartition{"t", 1}] = []int16{0, int16(TopicAuthorizationFailed)}
			w := &Writer{
				Addr: TCP("stub"), Topic: "t", Transport: stub, Balancer: keyedPartition,
				BatchSize: 3, BatchTimeout: 5 * time.Millisecond, RequiredAcks: RequireOne,
				MaxBufferedBatches: int(c.batches), MaxBufferedBytes: c.bytes,
			}
			defer shutdown(w, stub)
			msgs := make([]Message, 20)
			for i := range msgs {
				msgs[i] = Message{Key: []byte(fmt.Sprintf("p%d/%02d", i%2, i)), Value: []byte(fmt.Sprintf("%02d", i))}
			}
			err := w.WriteMessages(context.Background(), msgs...)
			var werrs WriteErrors
			require.ErrorAs(t, err, &werrs)
			require.Len(t, werrs, len(msgs))
			// Partition 1 holds the odd indexes; its batches are 1,3,5 /
			// 7,9,11 / ... when BatchSize alone cuts them. With a bytes
			// bound of two messages a batch can be cut earlier, so work
			// out the failed batch from what the broker kept.
			kept := map[string]bool{}
			for _, r := range stub.records(topicPartition{"t", 1}) {
				kept[r.value] = true
			}
			for _, r := range stub.records(topicPartition{"t", 0}) {
				kept[r.value] = true
			}
			failed := 0
			for i := range msgs {
				v := fmt.Sprintf("%02d", i)
				if werrs[i] != nil {
					failed++
					require.False(t, kept[v], "message %d reported failed but written", i)
					require.Equal(t, 1, i%2, "message %d of partition 0 reported failed: %v", i, werrs[i])
				} else {
					require.True(t, kept[v], "message %d reported written but missing", i)
				}
			}
			sizes := stub.batchSizes(topicPartition{"t", 1})
			require.NotZero(t, failed)
			// Every written partition-1 batch plus the failed one make up
			// partition 1's ten messages.
			sum := 0
			for _, n := range sizes {
				sum += n
			}
			require.Equal(t, 10, sum+failed, "batches %v, failed %d", sizes, failed)
		})
	}
}

// Many callers write alternating-partition calls to a Writer bounded to a
// single batch per partition and one message's bytes, with BatchSize 1 and
// a BatchTimeout of a nanosecond, while some calls are cancelled at random.
// Whatever happens, no message is written twice, each caller's messages to
// a partition arrive in the caller's order, and a call that returned nil
// has all its messages written.
func TestWriterConcurrentCallsOrderUnderTightBounds(t *testing.T) {
	one := sizeOf(Message{Key: []byte("p0/c00/000"), Value: []byte("c00/000")})
	for _, c := range []struct {
		name      string
		batchSize int
		batches   int
		bytes     int64
		async     bool
	}{
		{"BatchSize 1, one batch, one message of bytes", 1, 1, one, false},
		{"BatchSize 4, one batch", 4, 1, 0, false},
		{"BatchSize 4, bytes of three", 4, 0, 3 * one, false},
		{"BatchSize 3, both, async", 3, 1, 2 * one, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			stub := newStubBroker(map[string]int{"t": 3})
			w := &Writer{
				Addr: TCP("stub"), Topic: "t", Transport: stub, Balancer: keyedPartition,
				BatchSize: c.batchSize, BatchTimeout: time.Nanosecond, RequiredAcks: RequireOne,
				MaxBufferedBatches: c.batches, MaxBufferedBytes: c.bytes, Async: c.async,
			}
			defer shutdown(w, stub)

			const callers, calls, each = 8, 25, 7
			var mu sync.Mutex
			okCalls := map[string][]Message{}
			var wg sync.WaitGroup
			for g := 0; g < callers; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					rnd := rand.New(rand.NewSource(int64(g)))
					seq := 0
					for n := 0; n < calls; n++ {
						msgs := make([]Message, each)
						for i := range msgs {
							v := fmt.Sprintf("c%02d/%03d", g, seq)
							seq++
							msgs[i] = Message{Key: []byte(fmt.Sprintf("p%d/%s", rnd.Intn(3), v)), Value: []byte(v)}
						}
						ctx, cancel := context.WithCancel(context.Background())
						if rnd.Intn(4) == 0 {
							go func(d time.Duration) { time.Sleep(d); cancel() }(time.Duration(rnd.Intn(200)) * time.Microsecond)
						}
						err := w.WriteMessages(ctx, msgs...)
						cancel()
						if err == nil && !c.async {
							mu.Lock()
							okCalls[fmt.Sprintf("%d/%d", g, n)] = msgs
							mu.Unlock()
						} else if err != nil && !errors.Is(err, context.Canceled) {
							var werrs WriteErrors
							if !errors.As(err, &werrs) {
								t.Errorf("caller %d call %d: %v", g, n, err)
							}
						}
					}
				}(g)
			}
			wg.Wait()
			require.NoError(t, w.Flush(context.Background()))

			seen := map[string]int{}
			for p := 0; p < 3; p++ {
				last := map[string]int{}
				for _, r := range stub.records(topicPartition{"t", int32(p)}) {
					seen[r.value]++
					require.Equal(t, 1, seen[r.value], "written twice: %s", r.value)
					caller, num, _ := strings.Cut(r.value, "/")
					k, _ := strconv.Atoi(num)
					prev, ok := last[caller]
					require.True(t, !ok || k > prev, "partition %d: %s after %s/%03d", p, r.value, caller, prev)
					last[caller] = k
					require.True(t, strings.HasPrefix(r.key, fmt.Sprintf("p%d/", p)), "record %s on partition %d", r.key, p)
				}
			}
			for call, msgs := range okCalls {
				for _, m := range msgs {
					require.Equal(t, 1, seen[string(m.Value)], "call %s returned nil but %s is missing", call, m.Value)
				}
			}
		})
	}
}

// The idempotent producer under the per-call fast path: sync calls whose
// messages alternate between partitions, BatchSize 2, a BatchTimeout of a
// nanosecond, one batch per partition and little memory, with lost
// requests, lost replies and leadership errors. Each message is in the log
// once, each caller's messages keep their order per partition, and each
// call that returned nil is in the log whole.
func TestIdempotentWriterCallsAlternatingPartitionsWithFaults(t *testing.T) {
	const parts, callers, calls, each = 3, 4, 30, 5
	b := newIdemBroker(map[string]int{"t": parts})
	b.fault = func(call int, tp topicPartition, sb sentBatch) idemFault {
		switch call % 9 {
		case 2:
			return idemFault{loseReply: true}
		case 4:
			return idemFault{code: int16(NotLeaderForPartition)}
		case 7:
			return idemFault{lose: true}
		}
		return idemFault{}
	}
	w := newIdemWriter(b)
	w.BatchSize = 2
	w.BatchTimeout = time.Nanosecond
	w.MaxBufferedBatches = 1
	w.MaxBufferedBytes = 512
	w.MaxAttempts = 20
	defer w.Close()

	var wg sync.WaitGroup
	var mu sync.Mutex
	var ok [][]Message
	for g := 0; g < callers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for n := 0; n < calls; n++ {
				msgs := make([]Message, each)
				for i := range msgs {
					k := n*each + i
					msgs[i] = Message{Key: []byte{byte('0' + (g+k)%parts)}, Value: []byte(fmt.Sprintf("w%d-%04d", g, k))}
				}
				if err := w.WriteMessages(context.Background(), msgs...); err != nil {
					t.Errorf("caller %d call %d: %v", g, n, err)
					return
				}
				mu.Lock()
				ok = append(ok, msgs)
				mu.Unlock()
			}
		}(g)
	}
	wg.Wait()

	seen := map[string]bool{}
	for p := 0; p < parts; p++ {
		last := map[string]string{}
		for _, v := range b.logOf(topicPartition{"t", int32(p)}) {
			require.False(t, seen[v], "duplicate %s in the log", v)
			seen[v] = true
			writer := v[:strings.IndexByte(v, '-')]
			require.Less(t, last[writer], v, "order of %s on partition %d", writer, p)
			last[writer] = v
		}
	}
	for _, msgs := range ok {
		for _, m := range msgs {
			require.True(t, seen[string(m.Value)], "%s acknowledged but not in the log", m.Value)
		}
	}
	require.Len(t, seen, callers*calls*each)
}

// BatchBytes cuts one call's messages into batches as it always did: with
// room for two and a half messages, every batch holds two, whether the
// call's messages go in through the fast path or wait for a slot.
func TestWriterBatchBytesBoundaryInsideOneCall(t *testing.T) {
	for _, slots := range []int{0, 1} {
		t.Run(fmt.Sprintf("MaxBufferedBatches %d", slots), func(t *testing.T) {
			stub := newStubBroker(map[string]int{"t": 1})
			size := sizeOf(Message{Value: []byte("00")})
			w := &Writer{
				Addr: TCP("stub"), Topic: "t", Transport: stub,
				BatchSize: 1000, BatchBytes: 2*size + size/2, BatchTimeout: 5 * time.Millisecond,
				RequiredAcks: RequireOne, MaxBufferedBatches: slots,
			}
			defer shutdown(w, stub)
			msgs := make([]Message, 10)
			for i := range msgs {
				msgs[i] = Message{Value: []byte(fmt.Sprintf("%02d", i))}
			}
			require.NoError(t, w.WriteMessages(context.Background(), msgs...))
			require.Equal(t, []int{2, 2, 2, 2, 2}, stub.batchSizes(topicPartition{"t", 0}))
			for i, r := range stub.records(topicPartition{"t", 0}) {
				require.Equal(t, fmt.Sprintf("%02d", i), r.value)
			}
		})
	}
}

// A call never overtakes a caller already in line for the partition, even
// when the space it needs is there: the fast path takes a message only
// while nobody waits. (A waiter is put in line by hand, so that the test
// does not depend on catching the moment a real one is granted its space.)
func TestWriterFastPathDoesNotOvertakeTheLine(t *testing.T) {
	for _, c := range []struct {
		name    string
		batches int
		bytes   int64
	}{
		{"MaxBufferedBatches", 1, 0},
		{"MaxBufferedBytes", 0, 1 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			stub := newStubBroker(map[string]int{"t": 1})
			w := &Writer{
				Addr: TCP("stub"), Topic: "t", Transport: stub,
				BatchSize: 100, BatchTimeout: time.Hour, RequiredAcks: RequireOne,
				MaxBufferedBatches: c.batches, MaxBufferedBytes: c.bytes, Async: true,
			}
			defer shutdown(w, stub)
			ctx := context.Background()
			require.NoError(t, w.WriteMessages(ctx, Message{Value: []byte("first")}))
			tp := topicPartition{"t", 0}
			pw := partitionWriterOf(w, tp)
			require.NotNil(t, pw)

			ahead := &admissionWaiter{turn: make(chan struct{})}
			pw.mu.Lock()
			pw.adm.line = append(pw.adm.line, ahead)
			pw.mu.Unlock()

			cctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				done <- w.WriteMessages(cctx, Message{Value: []byte("second")}, Message{Value: []byte("third")})
			}()
			select {
			case err := <-done:
				t.Fatalf("the call was accepted ahead of the line: %v", err)
			case <-waitFor(func() bool { return slotWaiters(w, tp) == 2 }):
			}
			require.Equal(t, 2, slotWaiters(w, tp), "the call did not get in line")
			cancel()
			require.ErrorIs(t, <-done, context.Canceled)

			pw.mu.Lock()
			pw.adm.leave(ahead)
			pw.mu.Unlock()
			require.NoError(t, w.Flush(ctx))
			recs := stub.records(tp)
			require.Len(t, recs, 1)
			require.Equal(t, "first", recs[0].value)
		})
	}
}

// waitFor returns a channel closed once cond holds (polled; a hang guard
// of the caller's test bounds it).
func waitFor(cond func() bool) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		deadline := time.Now().Add(20 * time.Second)
		for !cond() && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		close(ch)
	}()
	return ch
}

// The messages one WriteMessages call sends to a partition land in the same
// batch when they fit in it, whatever BatchTimeout does meanwhile: a
// BatchTimeout of a nanosecond fires while the call is still adding, and
// must not cut the call into several produce requests. (Idempotent tests
// rely on this: their expected sequence numbers follow the calls.)
func TestWriterCallNotSplitByBatchTimeout(t *testing.T) {
	for _, c := range []struct {
		name           string
		batches, bytes int64
		async          bool
	}{
		{"unbounded", 0, 0, false},
		{"MaxBufferedBatches", 2, 0, false},
		{"MaxBufferedBytes", 0, 1 << 20, false},
		{"both", 2, 1 << 20, false},
		{"both async", 2, 1 << 20, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			stub := newStubBroker(map[string]int{"t": 1})
			w := &Writer{
				Addr: TCP("stub"), Topic: "t", Transport: stub, Async: c.async,
				BatchSize: 1000, BatchTimeout: time.Nanosecond, RequiredAcks: RequireOne,
				MaxBufferedBatches: int(c.batches), MaxBufferedBytes: c.bytes,
			}
			defer shutdown(w, stub)
			ctx := context.Background()
			const calls, each = 20, 200
			for n := 0; n < calls; n++ {
				msgs := make([]Message, each)
				for i := range msgs {
					msgs[i] = Message{Value: []byte(fmt.Sprintf("%d-%d", n, i))}
				}
				require.NoError(t, w.WriteMessages(ctx, msgs...))
				if c.async {
					require.NoError(t, w.Flush(ctx))
				}
			}
			sizes := stub.batchSizes(topicPartition{"t", 0})
			require.Len(t, sizes, calls, "produce requests per call: %v", sizes)
			for i, n := range sizes {
				require.Equal(t, each, n, "request %d", i)
			}
			recs := stub.records(topicPartition{"t", 0})
			require.Len(t, recs, calls*each)
			for i, r := range recs {
				require.Equal(t, fmt.Sprintf("%d-%d", i/each, i%each), r.value)
			}
		})
	}
}
