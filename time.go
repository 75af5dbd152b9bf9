package kafka

import (
	"math"
	"time"
)

// The protocol carries durations as int32 milliseconds; milliseconds clamps
// to this range rather than letting the conversion wrap around.
const (
	maxTimeout = math.MaxInt32 * time.Millisecond
	minTimeout = math.MinInt32 * time.Millisecond
)

// defaultRTT is how long a response is expected to need to travel back from
// the broker; see adjustDeadlineForRTT.
const defaultRTT = time.Second

// makeTime turns milliseconds since the Unix epoch into a UTC time. The
// protocol uses -1 (and we treat 0 the same) for "no timestamp", which maps
// to the zero time.
func makeTime(ms int64) time.Time {
	var t time.Time
	if ms > 0 {
		t = time.UnixMilli(ms).UTC()
	}
	return t
}

// timestamp is the inverse of makeTime: the zero time becomes 0.
func timestamp(t time.Time) int64 {
	var ms int64
	if !t.IsZero() {
		ms = t.UnixNano() / 1e6 // truncates toward zero, also before 1970
	}
	return ms
}

// makeDuration reads a millisecond count from the wire as a Duration.
func makeDuration(ms int32) time.Duration { return time.Millisecond * time.Duration(ms) }

// milliseconds writes d as int32 milliseconds, saturating at
// [minTimeout, maxTimeout].
func milliseconds(d time.Duration) int32 {
	return int32(max(minTimeout, min(maxTimeout, d)).Milliseconds())
}

// deadlineToTimeout is what is left of a deadline at now; no deadline leaves
// maxTimeout.
func deadlineToTimeout(deadline, now time.Time) time.Duration {
	if !deadline.IsZero() {
		return deadline.Sub(now)
	}
	return maxTimeout
}

// adjustDeadlineForRTT pulls a deadline forward by rtt so that the broker stops
// waiting early enough for its answer to arrive in time. If less than rtt
// remains, the deadline moves by a quarter of the remainder instead. The
// zero deadline (none) is returned as is.
func adjustDeadlineForRTT(deadline, now time.Time, rtt time.Duration) time.Time {
	switch left := deadline.Sub(now); {
	case deadline.IsZero():
		return deadline
	case left < rtt:
		return deadline.Add(-left / 4)
	default:
		return deadline.Add(-rtt)
	}
}
