package kafka

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A seeded randomized run of the buffer machinery: random bounds (none,
// slots, bytes, both, down to one message), batch sizes and timeouts,
// async or sync callers, several producers, random context deadlines,
// retriable broker errors, and a Completion that is absent, slow, writes
// follow-ups to the same Writer, or calls Flush. Whatever the mix: no
// deadlock (a guard dumps the goroutines), every accepted message is in the
// log exactly once, no refused one is, each producer's messages keep their
// order per partition, and the gauges and budgets are back to zero after
// Close. The seed is in the subtest name: go test -run
// 'TestWriterBudgetRandomized/seed=7' replays one.
func TestWriterBudgetRandomized(t *testing.T) {
	for seed := int64(1); seed <= 16; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runBudgetScenario(t, seed) })
	}
}

type budgetScenario struct {
	partitions, batchSize, producers, perProducer int
	batches                                       int
	bytes                                         int64
	async                                         bool
	completion                                    string // none, slow, followup, flush
}

func runBudgetScenario(t *testing.T, seed int64) {
	rng := rand.New(rand.NewSource(seed))
	msgSize := int64((&Message{Key: []byte("p0"), Value: []byte("0:000")}).totalSize())
	sc := budgetScenario{
		partitions:  1 + rng.Intn(4),
		batchSize:   1 + rng.Intn(6),
		producers:   1 + rng.Intn(4),
		perProducer: 150,
		batches:     []int{0, 1, 2}[rng.Intn(3)],
		bytes:       []int64{0, msgSize, 3 * msgSize, 20 * msgSize}[rng.Intn(4)],
		async:       rng.Intn(3) != 0,
		completion:  []string{"none", "slow", "followup", "flush"}[rng.Intn(4)],
	}
	if !sc.async && sc.completion == "followup" {
		// A synchronous write from Completion to its own partition cannot
		// complete (documented); a synchronous caller with an asynchronous
		// follow-up is not expressible on one Writer.
		sc.completion = "slow"
	}
	t.Logf("%+v", sc)

	batchTimeout := []time.Duration{time.Millisecond, 20 * time.Millisecond, time.Hour}[rng.Intn(3)]
	if !sc.async && batchTimeout == time.Hour {
		// A synchronous call waits for its batch, which waits for company
		// up to BatchTimeout: with fewer callers than BatchSize, an hour.
		batchTimeout = 20 * time.Millisecond
	}

	stub := newStubBroker(map[string]int{"t": sc.partitions})
	stub.produceDelay = time.Duration(rng.Intn(150)) * time.Microsecond
	if rng.Intn(2) == 0 {
		stub.failEvery, stub.failCode = 5+rng.Intn(10), int16(NotLeaderForPartition)
	}

	var w *Writer
	var followups, followupErrs atomic.Int64
	completionSleep := time.Duration(rng.Intn(300)) * time.Microsecond
	w = &Writer{
		Addr: TCP("stub"), Topic: "t", Transport: stub, RequiredAcks: RequireOne,
		BatchSize: sc.batchSize, BatchTimeout: batchTimeout,
		WriteBackoffMin: time.Millisecond, WriteBackoffMax: 3 * time.Millisecond,
		Async: sc.async, MaxBufferedBatches: sc.batches, MaxBufferedBytes: sc.bytes,
	}
	switch sc.completion {
	case "slow":
		w.Completion = func([]Message, error) { time.Sleep(completionSleep) }
	case "followup":
		w.Completion = func(msgs []Message, err error) {
			for _, m := range msgs {
				if string(m.Key) == "f" || !strings.HasSuffix(string(m.Value), "0") {
					continue // one follow-up per tenth original
				}
				if err := w.WriteMessages(context.Background(), Message{Key: []byte("f"), Value: append([]byte("F"), m.Value...)}); err != nil {
					followupErrs.Add(1)
				} else {
					followups.Add(1)
				}
			}
		}
	case "flush":
		var n atomic.Int64
		w.Completion = func([]Message, error) {
			if n.Add(1)%7 == 0 {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if err := w.Flush(ctx); err != nil {
					followupErrs.Add(1)
				}
			}
		}
	}

	// The guard: a deadlock fails the test with every goroutine's stack.
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-finished:
		case <-time.After(90 * time.Second):
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			panic(fmt.Sprintf("seed %d: no progress for 90s\n%s", seed, buf))
		}
	}()

	const (
		accepted = iota + 1
		refused
		unknown
	)
	outcome := make([][]int, sc.producers)
	var wg sync.WaitGroup
	for g := 0; g < sc.producers; g++ {
		outcome[g] = make([]int, sc.perProducer)
		prng := rand.New(rand.NewSource(seed*100 + int64(g)))
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < sc.perProducer; i++ {
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if prng.Intn(10) == 0 {
					ctx, cancel = context.WithTimeout(ctx, time.Duration(prng.Intn(2000))*time.Microsecond)
				}
				err := w.WriteMessages(ctx, Message{Key: []byte("p" + strconv.Itoa(g)), Value: []byte(fmt.Sprintf("%d:%03d", g, i))})
				cancel()
				var na *NotAcceptedError
				switch {
				case err == nil:
					outcome[g][i] = accepted
				case errors.As(err, &na):
					outcome[g][i] = refused
				case errors.Is(err, context.DeadlineExceeded):
					outcome[g][i] = unknown // sync, accepted, outcome not known in time
				default:
					t.Errorf("producer %d message %d: %v", g, i, err)
				}
			}
		}(g)
	}
	wg.Wait()
	// Let the Completion calls and their follow-ups finish before Close,
	// which refuses writes (and Flush) from then on.
	eventually(t, "quiet writer", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return w.Flush(ctx) == nil && w.Stats().BufferedBatches == 0
	})
	require.NoError(t, w.Close())

	// Exactly once for accepted, never for refused, at most once otherwise,
	// and each producer's order per partition.
	seen := map[string]int{}
	for p := 0; p < sc.partitions; p++ {
		last := map[string]int{}
		for _, r := range stub.records(topicPartition{"t", int32(p)}) {
			seen[r.value]++
			if r.key == "f" {
				continue
			}
			var g, i int
			_, err := fmt.Sscanf(r.value, "%d:%d", &g, &i)
			require.NoError(t, err)
			if prev, ok := last[r.key]; ok && i <= prev {
				t.Fatalf("partition %d: producer %d wrote %d after %d", p, g, i, prev)
			}
			last[r.key] = i
		}
	}
	for g := range outcome {
		for i, o := range outcome[g] {
			v := fmt.Sprintf("%d:%03d", g, i)
			switch n := seen[v]; {
			case o == accepted && n != 1:
				t.Fatalf("accepted %s in the log %d times", v, n)
			case o == refused && n != 0:
				t.Fatalf("refused %s in the log %d times", v, n)
			case o == unknown && n > 1:
				t.Fatalf("%s in the log %d times", v, n)
			}
		}
	}
	if sc.completion == "followup" {
		f := 0
		for v, n := range seen {
			if strings.HasPrefix(v, "F") {
				require.Equal(t, 1, n, "follow-up %s", v)
				f++
			}
		}
		require.Equal(t, followups.Load(), int64(f), "follow-ups in the log")
	}
	require.Zero(t, followupErrs.Load(), "WriteMessages or Flush from Completion failed")
	s := w.Stats()
	require.Zero(t, s.BufferedBytes)
	require.Zero(t, s.BufferedBatches)
	if b := w.state().bytes; b != nil {
		require.Zero(t, b.Used())
	}
}
