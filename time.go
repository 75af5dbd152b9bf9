package kafka

import (
	"math"
	"time"
)

const (
	// Kafka carries timeouts as int32 milliseconds: these are the longest
	// positive and negative durations that fit.
	maxTimeout = time.Duration(math.MaxInt32) * time.Millisecond
	minTimeout = time.Duration(math.MinInt32) * time.Millisecond

	// defaultRTT is the round trip time assumed when shortening deadlines
	// so that a response has time to come back before the deadline.
	defaultRTT = 1 * time.Second
)

// makeTime converts a Kafka timestamp (milliseconds since the epoch) to a
// UTC time; zero and negative timestamps (-1 means "none") give the zero
// time.
func makeTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// timestamp converts t to a Kafka timestamp, the zero time being 0.
func timestamp(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano() / int64(time.Millisecond)
}

// makeDuration converts a Kafka duration in milliseconds.
func makeDuration(ms int32) time.Duration {
	return time.Duration(ms) * time.Millisecond
}

// milliseconds converts d to int32 milliseconds, saturating at the bounds of
// int32 instead of overflowing.
func milliseconds(d time.Duration) int32 {
	d = min(max(d, minTimeout), maxTimeout)
	return int32(d / time.Millisecond)
}

// deadlineToTimeout returns the time left until deadline, or maxTimeout when
// there is no deadline.
func deadlineToTimeout(deadline time.Time, now time.Time) time.Duration {
	if deadline.IsZero() {
		return maxTimeout
	}
	return deadline.Sub(now)
}

// adjustDeadlineForRTT moves deadline earlier by rtt, so that the broker
// gives up on a request while there is still time for its response to reach
// us. When less than rtt is left, only a quarter of what is left is taken.
func adjustDeadlineForRTT(deadline time.Time, now time.Time, rtt time.Duration) time.Time {
	if deadline.IsZero() {
		return deadline
	}
	if left := deadline.Sub(now); left < rtt {
		rtt = left / 4
	}
	return deadline.Add(-rtt)
}
