// Package report turns the runs of a benchmark into the markdown results
// page and the heap-over-time chart.
package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/segmentio/kafka-go/bench/internal/results"
	"github.com/segmentio/kafka-go/bench/internal/stats"
	"github.com/segmentio/kafka-go/bench/internal/svgplot"
)

// Case is a client configuration compared by the benchmark.
type Case struct {
	Name  string // key used in runs, e.g. "fork-n"
	Label string // shown in tables
	// ConsumeLabel replaces Label in the consumer tables, notes and chart
	// when set (a producer setting means nothing to a Reader).
	ConsumeLabel string
}

// consumeLabel is how c is named where consumers are compared.
func (c Case) consumeLabel() string {
	if c.ConsumeLabel != "" {
		return c.ConsumeLabel
	}
	return c.Label
}

// Workload is one scenario with its sizes.
type Workload struct {
	ID       string
	Title    string
	Scenario string // loadgen scenario name
}

// Check is the broker-bottleneck check: one producer alone, then two at
// once, against the same kind of cluster.
type Check struct {
	Client   string
	Messages int
	Size     int
	Single   []results.Run // one entry per round
	Pairs    [][2]results.Run
	// PairWallSec and PairBrokerCPUSec describe each two-producer round as
	// a whole.
	PairWallSec      []float64
	PairBrokerCPUSec []float64
	// PairMachineBusy is the number of busy CPUs, machine-wide (all
	// processes), during each two-producer round; -1 when unknown.
	PairMachineBusy []float64
	Cores           int
	Note            string // set instead of figures when the check could not run
}

// Input is everything the page is made from.
type Input struct {
	Header    []string // lines shown first (date, machine, mode, ...)
	Cases     []Case
	Workloads []Workload
	Runs      []results.Run
	Check     *Check
	PlotFile  string   // file name of the heap chart, linked from the page
	Failures  []string // builds or runs that failed, shown verbatim
	// Baseline is the case the throughput of the others is compared to.
	Baseline string
	// Bounded is this project's bounded case, summarized in the notes
	// against the Compare cases.
	Bounded string
	Compare []string
	// Consumer is this project's case in the consumer tables, compared in
	// the notes with Baseline and the Compare cases.
	Consumer string
	// ConsumePlotFile is the file name of the consumer heap chart, drawn
	// from ConsumeChartWorkload.
	ConsumePlotFile      string
	ConsumeChartWorkload string
}

func (in *Input) runs(workload, kase string) (ok []results.Run, failed []results.Run) {
	for _, r := range in.Runs {
		if r.Workload != workload || r.Case != kase {
			continue
		}
		if r.OK() {
			ok = append(ok, r)
		} else {
			failed = append(failed, r)
		}
	}
	return ok, failed
}

func summarize(rs []results.Run, f func(*results.Run) float64) stats.Summary {
	vs := make([]float64, len(rs))
	for i := range rs {
		vs[i] = f(&rs[i])
	}
	return stats.Summarize(vs)
}

// Markdown renders the results page.
func Markdown(in *Input) string {
	var b strings.Builder
	b.WriteString("# Benchmark results\n\n")
	for _, h := range in.Header {
		b.WriteString(h + "\n")
	}
	b.WriteString("\nEvery figure is the median of the rounds, with the range (min–max) in parentheses when there was more than one round. " +
		"Rounds alternate between clients (A B C … A B C …). Each client runs in a process of its own; " +
		"CPU is that process's user+system time (whole process, from rusage) and peak RSS its maximum resident set. " +
		"MB/s counts message values only (10^6 bytes).\n")

	if in.Check != nil {
		writeCheck(&b, in.Check)
	}
	consumeExplained := false
	for _, w := range in.Workloads {
		switch w.Scenario {
		case "throughput":
			writeThroughput(&b, in, w)
		case "slow":
			writeSlow(&b, in, w)
		case "latency":
			writeLatency(&b, in, w)
		case "consume-partition", "consume-group-read", "consume-group-commit":
			if !consumeExplained {
				writeConsumeIntro(&b)
				consumeExplained = true
			}
			writeConsume(&b, in, w)
		}
	}
	writeNotes(&b, in)
	writeSettings(&b, in)
	if len(in.Failures) > 0 {
		b.WriteString("\n## Failures\n\n")
		for _, f := range in.Failures {
			fmt.Fprintf(&b, "- %s\n", oneLine(f))
		}
	}
	return b.String()
}

func writeCheck(b *strings.Builder, c *Check) {
	b.WriteString("\n## Is the broker the bottleneck?\n\n")
	if c.Note != "" {
		b.WriteString(c.Note + "\n")
		return
	}
	var single []float64
	var singleBroker, singleClient []float64
	for i := range c.Single {
		r := &c.Single[i]
		if !r.OK() {
			continue
		}
		single = append(single, r.MsgsPerSec())
		singleBroker = append(singleBroker, r.BrokerCores())
		singleClient = append(singleClient, r.CPUSec/r.WallSec)
	}
	var pair, pairBroker, pairClient []float64
	for i, p := range c.Pairs {
		if !p[0].OK() || !p[1].OK() || c.PairWallSec[i] <= 0 {
			continue
		}
		// Both producers start together; the pair's rate is all messages
		// over the slower one's measured window.
		win := max(p[0].ElapsedSec, p[1].ElapsedSec)
		pair = append(pair, float64(p[0].Acked+p[1].Acked)/win)
		if c.PairBrokerCPUSec[i] >= 0 {
			pairBroker = append(pairBroker, c.PairBrokerCPUSec[i]/c.PairWallSec[i])
		} else {
			pairBroker = append(pairBroker, math.NaN())
		}
		pairClient = append(pairClient, (p[0].CPUSec+p[1].CPUSec)/c.PairWallSec[i])
	}
	fmt.Fprintf(b, "%s producing %s messages of %d B (acks=1, no compression), alone and then as two processes at once (half the messages each), against a fresh cluster each time, after one uncounted warm-up run. The machine has %d logical CPUs.\n\n",
		c.Client, count(float64(c.Messages)), c.Size, c.Cores)
	b.WriteString("| producers | total msg/s | broker CPU (cores) | producer CPU (cores) |\n|---|---:|---:|---:|\n")
	fmt.Fprintf(b, "| 1 | %s | %s | %s |\n", spread(stats.Summarize(single), count), spread(stats.Summarize(singleBroker), f2), spread(stats.Summarize(singleClient), f2))
	fmt.Fprintf(b, "| 2 | %s | %s | %s |\n", spread(stats.Summarize(pair), count), spread(stats.Summarize(pairBroker), f2), spread(stats.Summarize(pairClient), f2))
	s1, s2 := stats.Median(single), stats.Median(pair)
	if math.IsNaN(s1) || math.IsNaN(s2) {
		b.WriteString("\nThe check did not complete (see Failures).\n")
		return
	}
	br := stats.Median(singleBroker)
	busy2 := stats.Median(pairBroker) + stats.Median(pairClient)
	var machine []float64
	for _, m := range c.PairMachineBusy {
		if m >= 0 {
			machine = append(machine, m)
		}
	}
	// What others run on the machine counts too: on a shared machine the
	// broker and the clients may be starved without using every CPU
	// themselves.
	if m := stats.Median(machine); !math.IsNaN(m) {
		fmt.Fprintf(b, "\nDuring the two-producer runs %.1f of the %d CPUs were busy machine-wide (all processes, from /proc/stat), %.1f of them by the broker and the two producers.\n",
			m, c.Cores, busy2)
		busy2 = max(busy2, m)
	}
	b.WriteString("\n")
	switch {
	case s2 >= 1.15*s1:
		fmt.Fprintf(b, "Two producers together reached %.2fx the rate of one: the broker was not the limit for a single producer, "+
			"so the throughput figures below measure the clients.\n", s2/s1)
	case busy2 >= 0.85*float64(c.Cores):
		fmt.Fprintf(b, "A second producer did not raise the total rate (%.2fx), and with two producers %.1f of the %d CPUs were busy: "+
			"the limit is the machine's CPU, shared by the broker (%.2f cores with one producer), the clients and whatever else runs there, not the broker as such. "+
			"The throughput figures below compare the clients on equal terms (the same broker, one at a time) but understate what each could do with a broker on other hardware; "+
			"CPU s / 1M msgs is the figure least affected.\n",
			s2/s1, busy2, c.Cores, br)
	default:
		fmt.Fprintf(b, "A second producer did not raise the total rate (%.2fx) although the CPUs were not saturated (%.1f of %d busy with two producers, machine-wide when known): "+
			"in this run the broker looks like the bottleneck (kfake serves all requests of a cluster from one goroutine), so the fastest clients below may be capped by it.\n",
			s2/s1, busy2, c.Cores)
	}
}

func writeThroughput(b *strings.Builder, in *Input, w Workload) {
	fmt.Fprintf(b, "\n## Throughput: %s\n\n", w.Title)
	base := in.Baseline
	fmt.Fprintf(b, "| client | msg/s | MB/s | CPU s / 1M msgs | peak RSS MiB | broker CPU (cores) | msg/s vs %s |\n", base)
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
	baseOK, _ := in.runs(w.ID, base)
	baseRate := summarize(baseOK, (*results.Run).MsgsPerSec).Median
	for _, c := range in.Cases {
		ok, failed := in.runs(w.ID, c.Name)
		if len(ok) == 0 && len(failed) == 0 {
			continue
		}
		if len(ok) == 0 {
			fmt.Fprintf(b, "| %s | failed: %s | | | | | |\n", c.Label, cell(failed[0].Err))
			continue
		}
		rate := summarize(ok, (*results.Run).MsgsPerSec)
		vs := "—"
		if c.Name != base && !math.IsNaN(baseRate) {
			vs = fmt.Sprintf("%.2fx", rate.Median/baseRate)
			if rate.Median < baseRate {
				vs += " (slower)"
			}
		}
		fmt.Fprintf(b, "| %s%s | %s | %s | %s | %s | %s | %s |\n", c.Label, partial(ok, failed),
			spread(rate, count),
			spread(summarize(ok, (*results.Run).MBPerSec), f1),
			spread(summarize(ok, (*results.Run).CPUPerMillion), f2),
			spread(summarize(ok, func(r *results.Run) float64 { return mib(float64(r.MaxRSSBytes)) }), f0),
			spread(summarize(ok, (*results.Run).BrokerCores), f2),
			vs)
	}
}

func writeSlow(b *strings.Builder, in *Input, w Workload) {
	fmt.Fprintf(b, "\n## Slow broker: %s\n\n", w.Title)
	if in.PlotFile != "" {
		fmt.Fprintf(b, "![heap over time under the slow broker](%s)\n\n", in.PlotFile)
	}
	b.WriteString("| client | peak heap MiB | peak buffered msgs | accepted msgs | acked msg/s | longest stall s | peak RSS MiB |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range in.Cases {
		ok, failed := in.runs(w.ID, c.Name)
		if len(ok) == 0 && len(failed) == 0 {
			continue
		}
		if len(ok) == 0 {
			fmt.Fprintf(b, "| %s | failed: %s | | | | | |\n", c.Label, cell(failed[0].Err))
			continue
		}
		fmt.Fprintf(b, "| %s%s | %s | %s | %s | %s | %s | %s |\n", c.Label, partial(ok, failed),
			spread(summarize(ok, func(r *results.Run) float64 { return mib(float64(r.PeakHeapBytes)) }), f1),
			spread(summarize(ok, func(r *results.Run) float64 { return float64(r.PeakBuffered) }), count),
			spread(summarize(ok, func(r *results.Run) float64 { return float64(r.Produced) }), count),
			spread(summarize(ok, (*results.Run).MsgsPerSec), count),
			spread(summarize(ok, (*results.Run).LongestStallSec), f1),
			spread(summarize(ok, func(r *results.Run) float64 { return mib(float64(r.MaxRSSBytes)) }), f0))
	}
	b.WriteString("\nPeak heap is the largest sample of the Go heap (runtime/metrics " + "`/memory/classes/heap/objects:bytes`" +
		", live and not yet swept objects) taken every 50 ms inside the client process. " +
		"Buffered messages are those the client accepted and had not yet reported as written or failed. " +
		"The longest stall is the longest time during which messages were buffered and none was acknowledged: " +
		"a client that stops making progress also stops growing its heap, so read the heap column together with this one and with acked msg/s. " +
		"The run stops after its window without draining what is still buffered.\n")
}

func writeLatency(b *strings.Builder, in *Input, w Workload) {
	fmt.Fprintf(b, "\n## Synchronous latency: %s\n\n", w.Title)
	b.WriteString("| client | p50 ms | p99 ms | CPU s |\n|---|---:|---:|---:|\n")
	for _, c := range in.Cases {
		ok, failed := in.runs(w.ID, c.Name)
		if len(ok) == 0 && len(failed) == 0 {
			continue
		}
		if len(ok) == 0 {
			fmt.Fprintf(b, "| %s | failed: %s | | |\n", c.Label, cell(failed[0].Err))
			continue
		}
		fmt.Fprintf(b, "| %s%s | %s | %s | %s |\n", c.Label, partial(ok, failed),
			spread(summarize(ok, func(r *results.Run) float64 { return r.P50US / 1e3 }), f3),
			spread(summarize(ok, func(r *results.Run) float64 { return r.P99US / 1e3 }), f3),
			spread(summarize(ok, func(r *results.Run) float64 { return r.CPUSec }), f2))
	}
}

func writeConsumeIntro(b *strings.Builder) {
	b.WriteString("\n## Consumers\n\n" +
		"Each run first fills a new topic (3 partitions) with the row's messages, written by franz-go with acks=1 and the row's codec, " +
		"then starts the consumer in a process of its own, reading from the start. " +
		"msg/s runs from the first message to the last; CPU s / 1M msgs is the consumer process's CPU time (start-up included) " +
		"up to the moment it had read every message, per million messages; peak RSS and peak heap cover the whole process. " +
		"First message is the time from creating the consumer to its first message (for a group, joining included). " +
		"For the group rows, once everything was read a second member of the same group starts while one message is written every 10 ms " +
		"to the partitions in turn: rebalance is the time from creating that member to its first message " +
		"(n/a: it got none within 2 minutes; the run's error says why in results.json).\n")
}

func writeConsume(b *strings.Builder, in *Input, w Workload) {
	fmt.Fprintf(b, "\n### Consumer: %s\n\n", w.Title)
	if in.ConsumePlotFile != "" && w.ID == in.ConsumeChartWorkload {
		fmt.Fprintf(b, "![consumer heap over time](%s)\n\n", in.ConsumePlotFile)
	}
	group := w.Scenario != "consume-partition"
	base := in.Baseline
	b.WriteString("| client | msg/s | MB/s | CPU s / 1M msgs | peak RSS MiB | peak heap MiB | first message s |")
	if group {
		b.WriteString(" rebalance s |")
	}
	fmt.Fprintf(b, " broker CPU (cores) | CPU/msg vs %s |\n|---|---:|---:|---:|---:|---:|---:|", base)
	if group {
		b.WriteString("---:|")
	}
	b.WriteString("---:|---:|\n")
	baseOK, _ := in.runs(w.ID, base)
	baseCPU := summarize(baseOK, (*results.Run).CPUPerMillion).Median
	for _, c := range in.Cases {
		ok, failed := in.runs(w.ID, c.Name)
		if len(ok) == 0 && len(failed) == 0 {
			continue
		}
		if len(ok) == 0 {
			fmt.Fprintf(b, "| %s | failed: %s |%s\n", c.consumeLabel(), cell(failed[0].Err), strings.Repeat(" |", 7+boolInt(group)))
			continue
		}
		cpu := summarize(ok, (*results.Run).CPUPerMillion)
		vs := "—"
		if c.Name != base && !math.IsNaN(baseCPU) {
			vs = fmt.Sprintf("%.2fx", cpu.Median/baseCPU)
		}
		fmt.Fprintf(b, "| %s%s | %s | %s | %s | %s | %s | %s |", c.consumeLabel(), partial(ok, failed),
			spread(summarize(ok, (*results.Run).MsgsPerSec), count),
			spread(summarize(ok, (*results.Run).MBPerSec), f1),
			spread(cpu, f2),
			spread(summarize(ok, func(r *results.Run) float64 { return mib(float64(r.MaxRSSBytes)) }), f0),
			spread(summarize(ok, func(r *results.Run) float64 { return mib(float64(r.PeakHeapBytes)) }), f1),
			spread(summarize(ok, func(r *results.Run) float64 { return r.FirstMessageMs / 1e3 }), f2))
		if group {
			fmt.Fprintf(b, " %s |", spread(summarize(ok, func(r *results.Run) float64 {
				if r.RebalanceMs <= 0 {
					return math.NaN()
				}
				return r.RebalanceMs / 1e3
			}), f2))
		}
		fmt.Fprintf(b, " %s | %s |\n", spread(summarize(ok, (*results.Run).BrokerCores), f2), vs)
	}
}

func boolInt(v bool) int {
	if v {
		return 1
	}
	return 0
}

// consumeNote compares the project's consumer case with the others on
// CPU per message and peak RSS.
func consumeNote(in *Input, w Workload, label func(string) string) string {
	mine, _ := in.runs(w.ID, in.Consumer)
	cpu := summarize(mine, (*results.Run).CPUPerMillion).Median
	rss := summarize(mine, func(r *results.Run) float64 { return mib(float64(r.MaxRSSBytes)) }).Median
	if math.IsNaN(cpu) {
		return ""
	}
	var parts []string
	seen := map[string]bool{in.Consumer: true}
	for _, other := range append([]string{in.Baseline}, in.Compare...) {
		if seen[other] {
			continue
		}
		seen[other] = true
		ok, _ := in.runs(w.ID, other)
		oc := summarize(ok, (*results.Run).CPUPerMillion).Median
		or := summarize(ok, func(r *results.Run) float64 { return mib(float64(r.MaxRSSBytes)) }).Median
		if math.IsNaN(oc) {
			continue
		}
		p := fmt.Sprintf("%.2fx the CPU per message of %s", cpu/oc, label(other))
		if cpu > oc {
			p += " (**more**)"
		}
		p += fmt.Sprintf(" and %.2fx its peak RSS", rss/or)
		if rss > or {
			p += " (**more**)"
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("%s: %s spends %s.", w.Title, label(in.Consumer), strings.Join(parts, "; "))
}

// writeNotes states, workload by workload, how the bounded fork compares
// with the reference clients, calling out where it is slower, so the table
// never leaves that for the reader to spot.
func writeNotes(b *strings.Builder, in *Input) {
	if in.Bounded == "" && in.Consumer == "" {
		return
	}
	var notes []string
	label := func(name string) string {
		for _, c := range in.Cases {
			if c.Name == name {
				return c.Label
			}
		}
		return name
	}
	consumeLabel := func(name string) string {
		for _, c := range in.Cases {
			if c.Name == name {
				return c.consumeLabel()
			}
		}
		return name
	}
	for _, w := range in.Workloads {
		switch w.Scenario {
		case "consume-partition", "consume-group-read", "consume-group-commit":
			if in.Consumer != "" {
				if n := consumeNote(in, w, consumeLabel); n != "" {
					notes = append(notes, n)
				}
			}
		case "throughput":
			bounded, _ := in.runs(w.ID, in.Bounded)
			br := summarize(bounded, (*results.Run).MsgsPerSec).Median
			if math.IsNaN(br) {
				continue
			}
			var parts []string
			for _, other := range in.Compare {
				ok, _ := in.runs(w.ID, other)
				o := summarize(ok, (*results.Run).MsgsPerSec).Median
				if math.IsNaN(o) {
					continue
				}
				p := fmt.Sprintf("%.2fx %s", br/o, label(other))
				if br < o {
					p += fmt.Sprintf(" (**slower**, %.0f%% fewer msg/s)", 100*(1-br/o))
				}
				parts = append(parts, p)
			}
			if len(parts) > 0 {
				notes = append(notes, fmt.Sprintf("%s: %s at %s msg/s = %s.", w.Title, label(in.Bounded), count(br), strings.Join(parts, ", ")))
			}
		case "slow":
			var parts []string
			for _, c := range in.Cases {
				ok, _ := in.runs(w.ID, c.Name)
				h := summarize(ok, func(r *results.Run) float64 { return mib(float64(r.PeakHeapBytes)) }).Median
				if !math.IsNaN(h) {
					parts = append(parts, fmt.Sprintf("%s %.1f MiB", c.Label, h))
				}
			}
			if len(parts) > 0 {
				notes = append(notes, "Slow broker, peak heap: "+strings.Join(parts, "; ")+".")
			}
			bounded, _ := in.runs(w.ID, in.Bounded)
			if br := summarize(bounded, (*results.Run).MsgsPerSec).Median; !math.IsNaN(br) {
				var parts []string
				for _, other := range in.Compare {
					ok, _ := in.runs(w.ID, other)
					o := summarize(ok, (*results.Run).MsgsPerSec).Median
					if math.IsNaN(o) || o <= 0 {
						continue
					}
					p := fmt.Sprintf("%.2fx %s", br/o, label(other))
					if br < o {
						p += " (**slower**)"
					}
					parts = append(parts, p)
				}
				if len(parts) > 0 {
					notes = append(notes, fmt.Sprintf("Slow broker, messages acknowledged per second: %s at %s msg/s = %s.",
						label(in.Bounded), count(br), strings.Join(parts, ", ")))
				}
			}
			for _, c := range in.Cases {
				ok, _ := in.runs(w.ID, c.Name)
				st := summarize(ok, (*results.Run).LongestStallSec)
				if st.N > 0 && st.Max >= 1 {
					notes = append(notes, fmt.Sprintf("Slow broker: **%s stalled**: in %d of %d runs it held messages without any acknowledgement for %.1f s or more (longest %.1f s), so its heap and buffered figures are not a measure of its bound alone.",
						c.Label, countAtLeast(ok, 1), len(ok), 1.0, st.Max))
				}
			}
		}
	}
	if len(notes) == 0 {
		return
	}
	b.WriteString("\n## Where this project stands\n\n")
	for _, n := range notes {
		fmt.Fprintf(b, "- %s\n", n)
	}
}

func writeSettings(b *strings.Builder, in *Input) {
	b.WriteString("\n## Client settings\n\nEach client is used the way its documentation suggests for the task, with acks=1 and the codec of the row; everything not listed is the library default.\n\n")
	for _, c := range in.Cases {
		seen := map[string]bool{}
		var lines []string
		for _, r := range in.Runs {
			if r.Case == c.Name && r.Settings != "" && !seen[r.Settings] {
				seen[r.Settings] = true
				lines = append(lines, r.Settings)
			}
		}
		if len(lines) == 0 {
			continue
		}
		slices.Sort(lines)
		fmt.Fprintf(b, "- **%s**: %s\n", c.Label, strings.Join(lines, "; "))
	}
}

// HeapChart draws heap over time under the slow broker for the given
// cases, using for each the round whose peak heap is the median one.
func HeapChart(in *Input, workload string, cases []string, subtitle string) *svgplot.Chart {
	return heapChart(in, workload, cases, subtitle, Case.label)
}

func (c Case) label() string { return c.Label }

func heapChart(in *Input, workload string, cases []string, subtitle string, labelOf func(Case) string) *svgplot.Chart {
	ch := &svgplot.Chart{
		Title:    "Go heap of the producer process under a slow broker",
		Subtitle: subtitle,
		XLabel:   "seconds since the first message",
		YLabel:   "heap MiB",
	}
	for _, name := range cases {
		ok, _ := in.runs(workload, name)
		if len(ok) == 0 {
			continue
		}
		slices.SortFunc(ok, func(a, b results.Run) int {
			return cmpUint(a.PeakHeapBytes, b.PeakHeapBytes)
		})
		r := ok[(len(ok)-1)/2]
		s := svgplot.Series{Name: name}
		for _, c := range in.Cases {
			if c.Name == name {
				s.Name = labelOf(c)
			}
		}
		for _, p := range r.Samples {
			s.X = append(s.X, p.TMs/1e3)
			s.Y = append(s.Y, mib(float64(p.HeapBytes)))
		}
		ch.Series = append(ch.Series, s)
	}
	return ch
}

// ConsumeHeapChart draws the heap over time of a consumer workload for the
// given cases (the round with the median peak heap of each), against the
// messages read so far.
func ConsumeHeapChart(in *Input, workload string, cases []string) *svgplot.Chart {
	title := workload
	for _, w := range in.Workloads {
		if w.ID == workload {
			title = w.Title
		}
	}
	ch := heapChart(in, workload, cases, title+"; the median round of each client", Case.consumeLabel)
	ch.Title = "Go heap of the consumer process while it reads a prefilled topic"
	ch.XLabel = "seconds since the consumer was created"
	return ch
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func partial(ok, failed []results.Run) string {
	if len(failed) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d of %d runs failed)", len(failed), len(ok)+len(failed))
}

// spread formats a summary as "median (min–max)", or just the median for
// a single value; "n/a" when there is none.
func spread(s stats.Summary, f func(float64) string) string {
	if s.N == 0 {
		return "n/a"
	}
	if s.N == 1 || s.Min == s.Max {
		return f(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", f(s.Median), f(s.Min), f(s.Max))
}

func f0(v float64) string { return fmt.Sprintf("%.0f", v) }
func f1(v float64) string { return fmt.Sprintf("%.1f", v) }
func f2(v float64) string { return fmt.Sprintf("%.2f", v) }
func f3(v float64) string { return fmt.Sprintf("%.3f", v) }

func mib(b float64) float64 { return b / (1 << 20) }

// count writes large counts compactly: 1.23M, 845k, 950.
func count(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case a >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case a >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cell makes s safe inside a table cell.
func cell(s string) string {
	s = oneLine(s)
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return strings.ReplaceAll(s, "|", `\|`)
}

func countAtLeast(rs []results.Run, sec float64) int {
	n := 0
	for i := range rs {
		if rs[i].LongestStallSec() >= sec {
			n++
		}
	}
	return n
}
