package kafka

import (
	"math"
	"reflect"
	"sync"
	"testing"
	"time"
)

func TestCounterAndGauge(t *testing.T) {
	var c counter
	c.add(3)
	c.add(4)
	if c.snapshot() != 7 || c.snapshot() != 0 {
		t.Fatal("counter must report the total and reset")
	}
	var g gauge
	g.observe(5)
	g.observe(2)
	first, second := g.snapshot(), g.snapshot()
	if first != 2 || second != 2 {
		t.Fatalf("gauge snapshots %d then %d: it must keep its last value", first, second)
	}
}

func TestMinimumMaximum(t *testing.T) {
	var lo minimum
	var hi maximum
	if lo.snapshot() != 0 || hi.snapshot() != 0 {
		t.Fatal("nothing observed must report 0")
	}
	for _, v := range []int64{7, 3, 9, 0, 5} {
		lo.observe(v)
		hi.observe(v)
	}
	if lo.snapshot() != 0 || hi.snapshot() != 9 {
		t.Fatal("min/max")
	}
	// A new period starts after a snapshot.
	lo.observe(4)
	hi.observe(4)
	if lo.snapshot() != 4 || hi.snapshot() != 4 {
		t.Fatal("reset after snapshot")
	}
	hi.observe(math.MaxInt64)
	lo.observe(-5)
	if hi.snapshot() != math.MaxInt64-1 || lo.snapshot() != 0 {
		t.Fatal("extremes are clamped")
	}
}

func TestSummary(t *testing.T) {
	var s summary // the zero value is ready to use
	if got := s.snapshot(); got != (SummaryStats{}) {
		t.Fatalf("empty summary: %+v", got)
	}
	for _, v := range []int64{10, 2, 6} {
		s.observe(v)
	}
	if got, want := s.snapshot(), (SummaryStats{Avg: 6, Min: 2, Max: 10, Count: 3, Sum: 18}); got != want {
		t.Fatalf("got %+v want %+v", got, want)
	}
	if got := s.snapshot(); got != (SummaryStats{}) {
		t.Fatalf("summary must reset: %+v", got)
	}

	var d summary
	d.observeDuration(time.Second)
	d.observeDuration(3 * time.Second)
	want := DurationStats{Avg: 2 * time.Second, Min: time.Second, Max: 3 * time.Second, Count: 2, Sum: 4 * time.Second}
	if got := d.snapshotDuration(); got != want {
		t.Fatalf("got %+v want %+v", got, want)
	}
}

func TestSummaryConcurrent(t *testing.T) {
	var s summary
	var wg sync.WaitGroup
	for g := 1; g <= 8; g++ {
		wg.Add(1)
		go func(g int64) {
			defer wg.Done()
			for i := int64(0); i < 1000; i++ {
				s.observe(g*1000 + i)
			}
		}(int64(g))
	}
	wg.Wait()
	got := s.snapshot()
	if got.Count != 8000 || got.Min != 1000 || got.Max != 8999 || got.Sum != 8*999*1000/2+36*1000*1000 {
		t.Fatalf("got %+v", got)
	}
}

func TestStatsMetricTags(t *testing.T) {
	// Metric reporters read these tags.
	for _, typ := range []reflect.Type{reflect.TypeOf(SummaryStats{}), reflect.TypeOf(DurationStats{})} {
		want := map[string][2]string{
			"Avg": {"avg", "gauge"}, "Min": {"min", "gauge"}, "Max": {"max", "gauge"},
			"Count": {"count", "counter"}, "Sum": {"sum", "counter"},
		}
		for name, tags := range want {
			f, ok := typ.FieldByName(name)
			if !ok || f.Tag.Get("metric") != tags[0] || f.Tag.Get("type") != tags[1] {
				t.Errorf("%s.%s: tags %q", typ.Name(), name, f.Tag)
			}
		}
	}
}
