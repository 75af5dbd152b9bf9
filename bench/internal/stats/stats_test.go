package stats

import (
	"math"
	"testing"
)

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name          string
		in            []float64
		n             int
		med, min, max float64
	}{
		{"odd", []float64{5, 1, 3}, 3, 3, 1, 5},
		{"even", []float64{4, 1, 3, 10}, 4, 3.5, 1, 10},
		{"single", []float64{7}, 1, 7, 7, 7},
		{"ties", []float64{2, 2, 2, 9}, 4, 2, 2, 9},
		{"nan ignored", []float64{math.NaN(), 8, 2, math.NaN(), 4}, 3, 4, 2, 8},
		{"negative", []float64{-1, -3, -2}, 3, -2, -3, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Summarize(tc.in)
			if s.N != tc.n || s.Median != tc.med || s.Min != tc.min || s.Max != tc.max {
				t.Fatalf("Summarize(%v) = %+v, want N=%d median=%v min=%v max=%v",
					tc.in, s, tc.n, tc.med, tc.min, tc.max)
			}
		})
	}
}

func TestSummarizeDoesNotReorderInput(t *testing.T) {
	in := []float64{3, 1, 2}
	Summarize(in)
	if in[0] != 3 || in[1] != 1 || in[2] != 2 {
		t.Fatalf("input reordered: %v", in)
	}
}

func TestSummarizeEmpty(t *testing.T) {
	for _, in := range [][]float64{nil, {math.NaN()}} {
		s := Summarize(in)
		if s.N != 0 || !math.IsNaN(s.Median) || !math.IsNaN(s.Min) || !math.IsNaN(s.Max) {
			t.Fatalf("Summarize(%v) = %+v, want N=0 and NaNs", in, s)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Fatal("Median(nil) is not NaN")
	}
}

func TestPercentile(t *testing.T) {
	// 1..100: nearest rank makes the p-th percentile exactly p.
	var vs []float64
	for i := 100; i >= 1; i-- {
		vs = append(vs, float64(i))
	}
	for _, tc := range []struct{ p, want float64 }{
		{50, 50}, {99, 99}, {100, 100}, {0, 1}, {0.5, 1}, {99.5, 100}, {-3, 1}, {150, 100},
	} {
		if got := Percentile(vs, tc.p); got != tc.want {
			t.Errorf("Percentile(1..100, %v) = %v, want %v", tc.p, got, tc.want)
		}
	}
	if vs[0] != 100 {
		t.Fatal("Percentile sorted its input in place")
	}
	// Small samples: p99 of 10 values is the largest, p50 the 5th.
	ten := []float64{10, 20, 30, 40, 50, 60, 70, 80, 90, 1000}
	if got := Percentile(ten, 99); got != 1000 {
		t.Errorf("p99 of 10 values = %v, want 1000", got)
	}
	if got := Percentile(ten, 50); got != 50 {
		t.Errorf("p50 of 10 values = %v, want 50", got)
	}
	if !math.IsNaN(Percentile(nil, 50)) {
		t.Error("Percentile(nil) is not NaN")
	}
}
