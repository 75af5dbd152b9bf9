package kafka

import (
	"math"
	"sync/atomic"
	"time"
)

// SummaryStats summarizes the values observed over a period: their average,
// minimum, maximum, number and total.
type SummaryStats struct {
	Avg   int64 `metric:"avg" type:"gauge"`
	Min   int64 `metric:"min" type:"gauge"`
	Max   int64 `metric:"max" type:"gauge"`
	Count int64 `metric:"count" type:"counter"`
	Sum   int64 `metric:"sum" type:"counter"`
}

// DurationStats is SummaryStats for durations.
type DurationStats struct {
	Avg   time.Duration `metric:"avg" type:"gauge"`
	Min   time.Duration `metric:"min" type:"gauge"`
	Max   time.Duration `metric:"max" type:"gauge"`
	Count int64         `metric:"count" type:"counter"`
	Sum   time.Duration `metric:"sum" type:"counter"`
}

// The statistics types below, the one engine behind ReaderStats and
// WriterStats, are updated with atomic operations, so that readers and
// writers can record them from any goroutine without a lock, and read
// (snapshot) them concurrently. Their zero values are ready to use.
//
// They are plain int64 (not atomic.Int64) so that structs holding them can
// be built by value; on 32-bit platforms they must therefore sit at 64-bit
// aligned offsets (first in their struct, or after other 64-bit fields).

// counter accumulates values; snapshot returns the total since the previous
// snapshot.
type counter int64

func (c *counter) add(v int64) { atomic.AddInt64((*int64)(c), v) }

func (c *counter) snapshot() int64 { return atomic.SwapInt64((*int64)(c), 0) }

// gauge holds the last value set; snapshot does not reset it.
type gauge int64

func (g *gauge) observe(v int64) { atomic.StoreInt64((*int64)(g), v) }

func (g *gauge) snapshot() int64 { return atomic.LoadInt64((*int64)(g)) }

// minimum tracks the smallest value observed since the previous snapshot;
// snapshot returns 0 when nothing was observed. It is meant for non-negative
// quantities (negative values count as 0).
//
// The value is stored plus one, so that the zero value means "nothing
// observed yet".
type minimum int64

func (m *minimum) observe(v int64) {
	enc := encodeExtremum(v)
	p := (*int64)(m)
	for {
		cur := atomic.LoadInt64(p)
		if cur != 0 && cur <= enc {
			return
		}
		if atomic.CompareAndSwapInt64(p, cur, enc) {
			return
		}
	}
}

func (m *minimum) snapshot() int64 { return decodeExtremum(atomic.SwapInt64((*int64)(m), 0)) }

// maximum tracks the largest value observed since the previous snapshot;
// snapshot returns 0 when nothing was observed. Like minimum, it is meant
// for non-negative quantities.
type maximum int64

func (m *maximum) observe(v int64) {
	enc := encodeExtremum(v)
	p := (*int64)(m)
	for {
		cur := atomic.LoadInt64(p)
		if cur >= enc {
			return
		}
		if atomic.CompareAndSwapInt64(p, cur, enc) {
			return
		}
	}
}

func (m *maximum) snapshot() int64 { return decodeExtremum(atomic.SwapInt64((*int64)(m), 0)) }

func encodeExtremum(v int64) int64 {
	return min(max(v, 0), math.MaxInt64-1) + 1
}

func decodeExtremum(enc int64) int64 {
	if enc == 0 {
		return 0
	}
	return enc - 1
}

// summary aggregates observations into SummaryStats (or DurationStats)
// between snapshots.
type summary struct {
	sum   counter
	count counter
	min   minimum
	max   maximum
}

func (s *summary) observe(v int64) {
	s.count.add(1)
	s.sum.add(v)
	s.min.observe(v)
	s.max.observe(v)
}

func (s *summary) observeDuration(d time.Duration) { s.observe(int64(d)) }

// observeSince observes the time elapsed since start.
func (s *summary) observeSince(start time.Time) { s.observe(int64(time.Since(start))) }

// snapshot returns the summary of the values observed since the previous
// snapshot and starts a new period.
func (s *summary) snapshot() SummaryStats {
	st := SummaryStats{
		Min:   s.min.snapshot(),
		Max:   s.max.snapshot(),
		Sum:   s.sum.snapshot(),
		Count: s.count.snapshot(),
	}
	if st.Count > 0 {
		st.Avg = st.Sum / st.Count
	}
	return st
}

// snapshotDuration is snapshot for a summary of durations.
func (s *summary) snapshotDuration() DurationStats {
	st := s.snapshot()
	return DurationStats{
		Avg:   time.Duration(st.Avg),
		Min:   time.Duration(st.Min),
		Max:   time.Duration(st.Max),
		Count: st.Count,
		Sum:   time.Duration(st.Sum),
	}
}
