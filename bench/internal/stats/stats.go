// Package stats summarizes repeated measurements: the bench tool reports
// the median of its rounds together with their spread, and percentiles of
// latency samples.
package stats

import (
	"math"
	"slices"
)

// Summary is the median of a set of values with its range.
type Summary struct {
	N      int
	Median float64
	Min    float64
	Max    float64
}

// Summarize returns the Summary of vs, ignoring NaNs. With no values the
// Summary has N == 0 and NaN fields, so that a missing figure can never be
// mistaken for a zero.
func Summarize(vs []float64) Summary {
	clean := make([]float64, 0, len(vs))
	for _, v := range vs {
		if !math.IsNaN(v) {
			clean = append(clean, v)
		}
	}
	if len(clean) == 0 {
		nan := math.NaN()
		return Summary{Median: nan, Min: nan, Max: nan}
	}
	slices.Sort(clean)
	return Summary{
		N:      len(clean),
		Median: median(clean),
		Min:    clean[0],
		Max:    clean[len(clean)-1],
	}
}

// Median of vs (NaNs ignored); NaN when there are none.
func Median(vs []float64) float64 { return Summarize(vs).Median }

// median of sorted, non-empty values: the middle one, or the mean of the
// two middle ones for an even count.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// Percentile returns the p-th percentile (0 <= p <= 100) of vs by the
// nearest-rank method: the smallest value such that at least p percent of
// the values are less than or equal to it. Unlike interpolation it always
// returns a latency that was actually observed. NaN for no values.
func Percentile(vs []float64, p float64) float64 {
	if len(vs) == 0 || math.IsNaN(p) {
		return math.NaN()
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	p = min(max(p, 0), 100)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	if rank < 1 {
		rank = 1
	}
	return s[rank-1]
}
