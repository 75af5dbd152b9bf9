package kafka

import (
	"math"
	"testing"
	"time"
)

func TestMakeTimeAndTimestamp(t *testing.T) {
	if !makeTime(0).IsZero() || !makeTime(-1).IsZero() {
		t.Fatal("non-positive timestamps must give the zero time")
	}
	tm := makeTime(1700000000123)
	if tm.Location() != time.UTC || tm.Unix() != 1700000000 || tm.Nanosecond() != 123_000_000 {
		t.Fatalf("got %v", tm)
	}
	if timestamp(tm) != 1700000000123 || timestamp(time.Time{}) != 0 {
		t.Fatal("timestamp round trip")
	}
	// Sub-millisecond precision is truncated.
	if timestamp(tm.Add(999*time.Microsecond)) != 1700000000123 {
		t.Fatal("truncation")
	}
}

func TestMilliseconds(t *testing.T) {
	tests := map[time.Duration]int32{
		0:                       0,
		1500 * time.Microsecond: 1,
		-time.Second:            -1000,
		time.Hour:               3600000,
		1000 * time.Hour:        math.MaxInt32,
		-1000 * time.Hour:       math.MinInt32,
	}
	for d, want := range tests {
		if got := milliseconds(d); got != want {
			t.Errorf("milliseconds(%v) = %d, want %d", d, got, want)
		}
	}
	if makeDuration(1500) != 1500*time.Millisecond {
		t.Fatal("makeDuration")
	}
}

func TestDeadlines(t *testing.T) {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	if deadlineToTimeout(time.Time{}, now) != maxTimeout {
		t.Fatal("no deadline means the longest timeout")
	}
	if deadlineToTimeout(now.Add(3*time.Second), now) != 3*time.Second {
		t.Fatal("deadlineToTimeout")
	}
	if !adjustDeadlineForRTT(time.Time{}, now, time.Second).IsZero() {
		t.Fatal("zero deadline stays zero")
	}
	if got := adjustDeadlineForRTT(now.Add(10*time.Second), now, time.Second); !got.Equal(now.Add(9 * time.Second)) {
		t.Fatalf("got %v", got)
	}
	// Less than rtt left: only a quarter of the remaining time is removed.
	if got := adjustDeadlineForRTT(now.Add(400*time.Millisecond), now, time.Second); !got.Equal(now.Add(300 * time.Millisecond)) {
		t.Fatalf("got %v", got)
	}
}
