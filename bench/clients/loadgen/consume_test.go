package loadgen

import (
	"sync"
	"testing"
)

// Progress counts how far each partition was read, not how many messages
// arrived: a message read twice (after a rebalance) does not count twice,
// and the topic is read when every partition reached its end.
func TestProgress(t *testing.T) {
	p := newProgress(3)
	steps := []struct {
		partition int32
		offset    int64
		sum       int64
	}{
		{0, 0, 1}, {0, 1, 2}, {1, 0, 3}, {0, 1, 3}, {0, 0, 3}, {2, 4, 8}, {2, 3, 8},
	}
	for i, s := range steps {
		sum, err := p.deliver(s.partition, s.offset, 10)
		if err != nil || sum != s.sum {
			t.Fatalf("step %d: sum %d, err %v; want %d", i, sum, err, s.sum)
		}
	}
	if p.delivered.Load() != int64(len(steps)) || p.bytes.Load() != 10*int64(len(steps)) {
		t.Fatalf("delivered %d, bytes %d", p.delivered.Load(), p.bytes.Load())
	}
	if _, err := p.deliver(3, 0, 1); err == nil {
		t.Fatal("a message from a partition the topic does not have was accepted")
	}
}

// Concurrent members delivering the same partitions end at the same sum.
func TestProgressConcurrent(t *testing.T) {
	p := newProgress(2)
	var wg sync.WaitGroup
	for m := 0; m < 4; m++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := int64(0); o < 1000; o++ {
				p.deliver(int32(o%2), o/2, 1)
			}
		}()
	}
	wg.Wait()
	if got := p.sum.Load(); got != 1000 {
		t.Fatalf("sum %d, want 1000", got)
	}
}
