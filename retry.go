package kafka

import (
	"context"
	"time"
)

// backoff is the pause before retry number attempt (1 for the first retry,
// 0 for the first try, which does not wait): it grows with the square of
// attempt from lo and is capped at hi. Every retry loop of the package (the
// Writer, the Reader, the Dialer's lookups, the Transport waiting for new
// topics) paces itself with it, and waits with sleep.
func backoff(attempt int, lo, hi time.Duration) time.Duration {
	if attempt <= 0 || lo <= 0 {
		return 0
	}
	n := int64(attempt)
	if n > 1<<20 || n*n > int64(hi/lo) {
		return hi
	}
	return time.Duration(n*n) * lo
}

// sleep waits for d, and reports false, at once, if ctx ends first.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
