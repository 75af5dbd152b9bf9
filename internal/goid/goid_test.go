package goid

import (
	"sync"
	"testing"
)

// Each goroutine gets its own, stable, non-zero id.
func TestIDDistinctAndStable(t *testing.T) {
	const n = 50
	ids := make([]uint64, n)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			a, b := ID(), ID()
			if a != b {
				t.Errorf("id changed within a goroutine: %d then %d", a, b)
			}
			ids[i] = a
		}(i)
	}
	wg.Wait()
	seen := map[uint64]bool{ID(): true}
	for _, id := range ids {
		if id == 0 {
			t.Fatal("id 0: stack trace not parsed")
		}
		if seen[id] {
			t.Fatalf("id %d given to two goroutines", id)
		}
		seen[id] = true
	}
}
