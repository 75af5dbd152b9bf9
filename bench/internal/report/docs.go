package report

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/segmentio/kafka-go/bench/internal/results"
	"github.com/segmentio/kafka-go/bench/internal/stats"
)

// The figures README.md and docs/ quote from a benchmark run live in
// blocks that this file renders from the run itself (results.json):
//
//	<!-- bench:NAME -->
//	... generated text ...
//	<!-- /bench:NAME -->
//
// so that the prose cannot drift from the committed run. `make docs-check`
// (part of `make lint`) fails when a block differs from what the run
// gives; the bench tool rewrites them after each run, and
// `go run ./cmd/docfigs -write` does it by hand.

// DocBlocks renders every named block from the runs of one benchmark run.
// A block whose figures the run lacks (a quick run without a scenario)
// says so instead of quoting stale numbers.
func DocBlocks(runs []results.Run) map[string]string {
	f := figures{runs: runs}
	return map[string]string{
		"cost":               f.costTable(),
		"slow-table":         f.slowTable(),
		"slow-summary":       f.slowSummary(),
		"slow-default":       f.slowDefault(),
		"throughput-table":   f.throughputTable(),
		"throughput-summary": f.throughputSummary(),
		"latency":            f.latency(),
		"consumer-summary":   f.consumerSummary(),
	}
}

type figures struct{ runs []results.Run }

// median is the median over the successful rounds of (workload, case), or
// NaN when there are none.
func (f figures) median(workload, kase string, v func(*results.Run) float64) float64 {
	var vs []float64
	for i := range f.runs {
		r := &f.runs[i]
		if r.Workload == workload && r.Case == kase && r.OK() {
			vs = append(vs, v(r))
		}
	}
	return stats.Summarize(vs).Median
}

func heapMiB(r *results.Run) float64 { return mib(float64(r.PeakHeapBytes)) }
func rssMiB(r *results.Run) float64  { return mib(float64(r.MaxRSSBytes)) }
func buffered(r *results.Run) float64 {
	return float64(r.PeakBuffered)
}
func p50ms(r *results.Run) float64 { return r.P50US / 1e3 }
func p99ms(r *results.Run) float64 { return r.P99US / 1e3 }

// num formats v with f, or "n/a" when the run has no such figure.
func num(v float64, f func(float64) string) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return f(v)
}

func ratio(a, b float64) float64 { return a / b }

// throughputWorkloads are the producer throughput rows, in the order of
// the results page.
var throughputWorkloads = []struct{ id, title string }{
	{"throughput-1000000-100-none", "1M × 100 B, none"},
	{"throughput-200000-1024-none", "200k × 1 KiB, none"},
	{"throughput-1000000-100-zstd", "1M × 100 B, zstd"},
	{"throughput-200000-1024-zstd", "200k × 1 KiB, zstd"},
	{"throughput-1000000-100-snappy", "1M × 100 B, snappy"},
	{"throughput-200000-1024-snappy", "200k × 1 KiB, snappy"},
	{"throughput-1000000-100-lz4", "1M × 100 B, lz4"},
	{"throughput-200000-1024-lz4", "200k × 1 KiB, lz4"},
	{"throughput-1000000-100-gzip", "1M × 100 B, gzip"},
	{"throughput-200000-1024-gzip", "200k × 1 KiB, gzip"},
}

func (f figures) costTable() string {
	var b strings.Builder
	b.WriteString("| median of the committed run | upstream v0.4.51 | this fork, bounded | this fork, default | franz-go |\n")
	b.WriteString("|---|---:|---:|---:|---:|\n")
	row := func(label, workload string, v func(*results.Run) float64, format func(float64) string, cases ...string) {
		fmt.Fprintf(&b, "| %s |", label)
		for _, c := range cases {
			cellText := "—"
			if c != "" {
				cellText = num(f.median(workload, c, v), format)
			}
			fmt.Fprintf(&b, " %s |", cellText)
		}
		b.WriteString("\n")
	}
	producers := []string{"upstream", "fork-n", "fork", "franz"}
	row("slow broker (every Produce 100 ms late): peak heap MiB", "slow", heapMiB, f0, producers...)
	row("slow broker: peak RSS MiB", "slow", rssMiB, f0, producers...)
	row("slow broker: acknowledged msg/s", "slow", (*results.Run).MsgsPerSec, count, producers...)
	row("producer CPU s / 1M msgs, 1M × 100 B", "throughput-1000000-100-none", (*results.Run).CPUPerMillion, f2, producers...)
	row("producer CPU s / 1M msgs, 200k × 1 KiB, zstd", "throughput-200000-1024-zstd", (*results.Run).CPUPerMillion, f2, producers...)
	row("sync one-message write, p99 ms", "latency", p99ms, f3, producers...)
	row("Reader CPU s / 1M msgs, 1M × 100 B", "consume-partition-1000000-100-none", (*results.Run).CPUPerMillion, f2, "upstream", "", "fork", "franz")
	row("Reader peak RSS MiB, 200k × 1 KiB, zstd", "consume-partition-200000-1024-zstd", rssMiB, f0, "upstream", "", "fork", "franz")
	return strings.TrimSuffix(b.String(), "\n")
}

var slowCases = []struct{ name, label string }{
	{"upstream", "kafka-go v0.4.51"},
	{"semaphore", "v0.4.51 + semaphore in Completion (16 MiB of messages)"},
	{"fork-n", "this fork, MaxBufferedBatches 4, MaxBufferedBytes 16 MiB"},
	{"fork-bytes", "this fork, MaxBufferedBytes 16 MiB only"},
	{"fork", "this fork, no bound (default)"},
	{"franz", "franz-go v1.22.3"},
}

func (f figures) slowTable() string {
	var b strings.Builder
	b.WriteString("| client | peak heap MiB | peak RSS MiB | peak buffered msgs | acked msg/s |\n")
	b.WriteString("|---|---:|---:|---:|---:|\n")
	for _, c := range slowCases {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", c.label,
			num(f.median("slow", c.name, heapMiB), f1),
			num(f.median("slow", c.name, rssMiB), f0),
			num(f.median("slow", c.name, buffered), count),
			num(f.median("slow", c.name, (*results.Run).MsgsPerSec), count))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func (f figures) slowSummary() string {
	m := func(c string, v func(*results.Run) float64) float64 { return f.median("slow", c, v) }
	acked := (*results.Run).MsgsPerSec
	return fmt.Sprintf("Under the slow broker (every Produce delayed 100 ms, 1 KiB messages offered at 40k msg/s "+
		"for 15 s) the bounded fork (MaxBufferedBatches 4, MaxBufferedBytes 16 MiB) peaks at %s MiB of heap and %s MiB RSS "+
		"with at most %s messages buffered, and acknowledges %s msg/s; upstream v0.4.51 peaks at %s MiB of heap "+
		"and acknowledges %s msg/s; v0.4.51 with a semaphore released in Completion (16 MiB of messages) "+
		"peaks at %s MiB and acknowledges %s msg/s, so the bound acknowledges %s times as many messages per second "+
		"for %s of the semaphore's heap; franz-go acknowledges %s msg/s at %s MiB of heap.",
		num(m("fork-n", heapMiB), f0), num(m("fork-n", rssMiB), f0), num(m("fork-n", buffered), count), num(m("fork-n", acked), count),
		num(m("upstream", heapMiB), f0), num(m("upstream", acked), count),
		num(m("semaphore", heapMiB), f0), num(m("semaphore", acked), count),
		num(ratio(m("fork-n", acked), m("semaphore", acked)), f1),
		times(ratio(m("fork-n", heapMiB), m("semaphore", heapMiB))),
		num(m("franz", acked), count), num(m("franz", heapMiB), f0))
}

// times writes a ratio as "0.87x".
func times(v float64) string { return num(v, f2) + "x" }

func (f figures) slowDefault() string {
	m := func(c string, v func(*results.Run) float64) float64 { return f.median("slow", c, v) }
	acked := (*results.Run).MsgsPerSec
	return fmt.Sprintf("In the committed run's slow-broker scenario the default fork (no bound) peaks at %s MiB of heap "+
		"against upstream's %s MiB, and acknowledges %s msg/s against upstream's %s.",
		num(m("fork", heapMiB), f0), num(m("upstream", heapMiB), f0), num(m("fork", acked), count), num(m("upstream", acked), count))
}

func (f figures) throughputTable() string {
	var b strings.Builder
	b.WriteString("| scenario | upstream v0.4.51: msg/s, CPU s/1M, peak RSS | fork, N 4 + 16 MiB | fork, default (0) |\n")
	b.WriteString("|---|---|---|---|\n")
	for _, w := range throughputWorkloads {
		fmt.Fprintf(&b, "| %s |", w.title)
		for _, c := range []string{"upstream", "fork-n", "fork"} {
			fmt.Fprintf(&b, " %s, %s, %s MiB |",
				num(f.median(w.id, c, (*results.Run).MsgsPerSec), count),
				num(f.median(w.id, c, (*results.Run).CPUPerMillion), f2),
				num(f.median(w.id, c, rssMiB), f0))
		}
		b.WriteString("\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// rangeOf is the smallest and largest of v over the throughput rows.
func (f figures) rangeOf(v func(id string) float64) (lo, hi float64, n int) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, w := range throughputWorkloads {
		x := v(w.id)
		if math.IsNaN(x) {
			continue
		}
		lo, hi, n = math.Min(lo, x), math.Max(hi, x), n+1
	}
	if n == 0 {
		return math.NaN(), math.NaN(), 0
	}
	return lo, hi, n
}

func (f figures) throughputSummary() string {
	cpu := (*results.Run).CPUPerMillion
	rate := (*results.Run).MsgsPerSec
	cpuVs := func(c string) func(string) float64 {
		return func(id string) float64 { return ratio(f.median(id, c, cpu), f.median(id, "upstream", cpu)) }
	}
	nLo, nHi, n := f.rangeOf(cpuVs("fork-n"))
	dLo, dHi, _ := f.rangeOf(cpuVs("fork"))
	faster := 0
	var slower []string
	for _, w := range throughputWorkloads {
		a, u := f.median(w.id, "fork-n", rate), f.median(w.id, "upstream", rate)
		switch {
		case math.IsNaN(a) || math.IsNaN(u):
		case a > u:
			faster++
		default:
			slower = append(slower, fmt.Sprintf("%s (%s vs %s msg/s)", w.title, count(a), count(u)))
		}
	}
	s := fmt.Sprintf("Client CPU per message against upstream's, over the %d rows: %s to %s with the bound, %s to %s without. "+
		"The bounded fork's msg/s is above upstream's in %d of the %d rows",
		n, times(nLo), times(nHi), times(dLo), times(dHi), faster, n)
	if len(slower) > 0 {
		s += "; below it in " + strings.Join(slower, ", ")
	}
	return s + "."
}

func (f figures) latency() string {
	m := func(c string) string {
		return num(f.median("latency", c, p50ms), f3) + " / " + num(f.median("latency", c, p99ms), f3)
	}
	return fmt.Sprintf("Synchronous one-message writes (2000 of 100 B, one at a time), p50 / p99 in ms: %s for upstream, "+
		"%s for the bounded fork, %s for the default fork, %s for franz-go; the ranges of the rounds are in results.md.",
		m("upstream"), m("fork-n"), m("fork"), m("franz"))
}

func (f figures) consumerSummary() string {
	var ids []string
	seen := map[string]bool{}
	for _, r := range f.runs {
		if strings.HasPrefix(r.Workload, "consume-") && !seen[r.Workload] {
			seen[r.Workload] = true
			ids = append(ids, r.Workload)
		}
	}
	lohi := func(v func(*results.Run) float64, against string) (float64, float64) {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, id := range ids {
			x := ratio(f.median(id, "fork", v), f.median(id, against, v))
			if !math.IsNaN(x) {
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
		}
		if math.IsInf(lo, 1) {
			return math.NaN(), math.NaN()
		}
		return lo, hi
	}
	cpuLo, cpuHi := lohi((*results.Run).CPUPerMillion, "upstream")
	rssLo, rssHi := lohi(rssMiB, "upstream")
	fcLo, fcHi := lohi((*results.Run).CPUPerMillion, "franz")
	frLo, frHi := lohi(rssMiB, "franz")
	return fmt.Sprintf("Over the %d consumer rows of the committed run, the fork's Reader spends %s to %s upstream's CPU "+
		"per message with a peak RSS of %s to %s upstream's, and %s to %s franz-go's CPU per message with %s to %s its peak RSS.",
		len(ids), times(cpuLo), times(cpuHi), times(rssLo), times(rssHi), times(fcLo), times(fcHi), times(frLo), times(frHi))
}

// startRE finds the start markers, to catch one without its end.
var startRE = regexp.MustCompile(`<!-- bench:[a-z0-9-]+ -->`)

var blockRE = regexp.MustCompile(`(?s)<!-- bench:([a-z0-9-]+) -->\n(.*?)\n?<!-- /bench:([a-z0-9-]+) -->`)

// RewriteBlocks replaces the body of every block in text with the rendered
// one. It fails on a block it cannot render or whose end marker names
// another block.
func RewriteBlocks(text string, blocks map[string]string) (string, error) {
	var errs []error
	out := blockRE.ReplaceAllStringFunc(text, func(m string) string {
		sub := blockRE.FindStringSubmatch(m)
		name, end := sub[1], sub[3]
		body, ok := blocks[name]
		switch {
		case name != end:
			errs = append(errs, fmt.Errorf("block %q ends with /bench:%s", name, end))
			return m
		case !ok:
			errs = append(errs, fmt.Errorf("unknown block %q", name))
			return m
		}
		return "<!-- bench:" + name + " -->\n" + body + "\n<!-- /bench:" + name + " -->"
	})
	if n := len(startRE.FindAllString(text, -1)); n != len(blockRE.FindAllString(text, -1)) {
		errs = append(errs, errors.New("a <!-- bench:NAME --> marker without its end marker"))
	}
	return out, errors.Join(errs...)
}

// SyncDocs renders the blocks from repo's docs/bench/results.json and
// compares them with those of README.md, CONTRIBUTING.md and every .md
// file under docs/; with write it rewrites the files that differ. It
// returns the files that differed.
func SyncDocs(repo string, write bool) ([]string, error) {
	runs, err := results.ReadFile(filepath.Join(repo, "docs", "bench", "results.json"))
	if err != nil {
		return nil, err
	}
	blocks := DocBlocks(runs)
	files := []string{filepath.Join(repo, "README.md"), filepath.Join(repo, "CONTRIBUTING.md")}
	err = filepath.WalkDir(filepath.Join(repo, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	var stale []string
	used := 0
	for _, path := range files {
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		used += len(blockRE.FindAllIndex(data, -1))
		out, err := RewriteBlocks(string(data), blocks)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if out == string(data) {
			continue
		}
		stale = append(stale, path)
		if write {
			if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
				return nil, err
			}
		}
	}
	if used == 0 {
		return nil, errors.New("no <!-- bench:NAME --> block found: wrong -repo?")
	}
	return stale, nil
}
