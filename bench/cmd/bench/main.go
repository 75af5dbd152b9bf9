// Command bench compares Kafka producer clients side by side: this
// repository's kafka-go (unbounded, and with MaxBufferedBatches /
// MaxBufferedBytes), upstream kafka-go v0.4.51 (plain, and with an
// application semaphore released in Completion), franz-go and sarama; and
// the consumers of this repository, upstream and franz-go, reading a
// prefilled topic by partition and as a group.
//
// Each client is a load generator built from bench/clients/<name> (its own
// module, so upstream and this repository can both be
// github.com/segmentio/kafka-go) and run as a child process, so its CPU
// time and peak RSS are its own. Against a fresh embedded cluster
// (itest/cmd/cluster on free ports) per run, it measures throughput,
// memory under a slow broker, synchronous latency and consumers, and
// writes docs/bench/results.md, results.json, heap.svg and
// consume-heap.svg.
//
//	cd bench && go run ./cmd/bench -quick
//
// This file is long (over 800 lines) because it is the whole program: the
// scenarios, the child processes and the report are read and changed
// together, and nothing else imports them.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/segmentio/kafka-go/bench/clients/loadgen"
	"github.com/segmentio/kafka-go/bench/internal/report"
	"github.com/segmentio/kafka-go/bench/internal/results"
	"github.com/segmentio/kafka-go/bench/internal/svgplot"
)

type options struct {
	quick       bool
	rounds      int
	repo        string
	out         string
	external    bool
	slowBrokers string
	clients     string
	scenarios   string
	batches     int
	bufBytes    int64
	slowDelay   time.Duration
	partitions  int
	note        string
	profileDir  string
	memDir      string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func parseFlags(args []string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.BoolVar(&o.quick, "quick", false, "small counts and one round of everything (about 10 minutes on 2 shared cores)")
	fs.IntVar(&o.rounds, "rounds", 0, "rounds per case, alternating between clients (default 3, or 1 with -quick)")
	fs.StringVar(&o.repo, "repo", "", "repository root (default: found from the working directory)")
	fs.StringVar(&o.out, "out", "", "output directory (default <repo>/docs/bench)")
	fs.BoolVar(&o.external, "external", false, "use the brokers of $KAFKA_BROKERS instead of starting embedded clusters")
	fs.StringVar(&o.slowBrokers, "slow-brokers", "", "with -external: brokers that delay every Produce (the slow scenario is skipped without)")
	fs.StringVar(&o.clients, "clients", strings.Join(caseNames(), ","), "client cases to run")
	fs.StringVar(&o.scenarios, "scenarios", "check,throughput,slow,latency,consume",
		"scenarios to run; consume stands for "+strings.Join(consumeModes, ", ")+", which can also be named alone; "+
			"partitions (1 to 1000 partitions of one topic, keyed messages) and topics (1 to 1000 topics) write docs/bench/partitions.md and topics.md of their own, "+
			"idle (an idle producer and consumer on clusters of 1 and 1000 topics) docs/bench/idle.md")
	fs.IntVar(&o.batches, "max-buffered-batches", 4, "MaxBufferedBatches of the bounded fork case (0: unset)")
	fs.Int64Var(&o.bufBytes, "max-buffered-bytes", 16<<20, "MaxBufferedBytes of the bounded fork case (0: unset); also the semaphore case's budget")
	fs.DurationVar(&o.slowDelay, "slow-delay", 100*time.Millisecond, "delay of every Produce in the slow scenario")
	fs.IntVar(&o.partitions, "partitions", 3, "partitions of each run's topic")
	fs.StringVar(&o.profileDir, "cpuprofile-dir", "", "write a CPU profile of every load generator run into this directory (<workload>-<case>-r<round>.pprof)")
	fs.StringVar(&o.memDir, "memprofile-dir", "", "write a heap profile of every consumer run, taken half way through, into this directory (<workload>-<case>-r<round>.heap.pprof)")
	fs.StringVar(&o.note, "note", "", "free text added to the results header (e.g. what else ran on the machine)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.rounds == 0 {
		o.rounds = 3
		if o.quick {
			o.rounds = 1
		}
	}
	if o.rounds < 1 || o.batches < 0 || o.partitions < 1 || (o.bufBytes != 0 && o.bufBytes < 1<<20) || (o.batches == 0 && o.bufBytes == 0) {
		return nil, errors.New("-rounds and -partitions must be positive, -max-buffered-bytes 0 (unset) or at least 1 MiB, and at least one bound set")
	}
	for _, c := range splitList(o.clients) {
		if caseByName(c) == nil {
			return nil, fmt.Errorf("unknown client case %q (have %s)", c, strings.Join(caseNames(), ", "))
		}
	}
	for _, s := range splitList(o.scenarios) {
		switch s {
		case "check", "throughput", "slow", "latency", "consume", "partitions", "topics", "idle":
		case loadgen.ConsumePartition, loadgen.ConsumeGroupRead, loadgen.ConsumeGroupCommit:
		default:
			return nil, fmt.Errorf("unknown scenario %q", s)
		}
	}
	return o, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// clientCase is one column of the comparison: a load generator binary and
// the flags that configure it.
type clientCase struct {
	name   string
	binary string
	label  func(o *options) string
	args   func(o *options, w workload) []string
	// sync is false for cases that only differ from another one in the
	// asynchronous path (the semaphore), which the latency scenario skips.
	sync bool
	// consume is set for the cases that run the consumer scenarios: one
	// per library (the Writer's bounds do not apply to a Reader).
	consume bool
	// throughputOnly limits the case to the throughput scenarios (the
	// balancer it varies matters for batch sizes only).
	throughputOnly bool
	// consumeLabel names the case in the consumer tables, when its label
	// speaks of producer settings.
	consumeLabel string
}

// cases in the order they alternate within a round.
var cases = []clientCase{
	{name: "upstream", binary: "upstream", sync: true, consume: true,
		label: func(*options) string { return "kafka-go v0.4.51 (upstream)" }},
	{name: "fork-n", binary: "fork", sync: true,
		label: func(o *options) string {
			var parts []string
			if o.batches > 0 {
				parts = append(parts, fmt.Sprintf("MaxBufferedBatches %d", o.batches))
			}
			if o.bufBytes > 0 {
				parts = append(parts, fmt.Sprintf("MaxBufferedBytes %d MiB", o.bufBytes>>20))
			}
			return "this fork, " + strings.Join(parts, ", ")
		},
		args: func(o *options, _ workload) []string {
			return []string{"-max-buffered-batches", strconv.Itoa(o.batches), "-max-buffered-bytes", strconv.FormatInt(o.bufBytes, 10)}
		}},
	// The writer-wide byte bound alone: what a user with a memory budget
	// and no per-partition preference sets.
	{name: "fork-bytes", binary: "fork",
		label: func(o *options) string {
			return fmt.Sprintf("this fork, MaxBufferedBytes %d MiB only", semaphoreBudget(o)>>20)
		},
		args: func(o *options, _ workload) []string {
			return []string{"-max-buffered-batches", "0", "-max-buffered-bytes", strconv.FormatInt(semaphoreBudget(o), 10)}
		}},
	// The bounded Writer with the Sticky balancer: fuller batches of
	// unkeyed messages.
	{name: "fork-sticky", binary: "fork", throughputOnly: true,
		label: func(o *options) string {
			return fmt.Sprintf("this fork, Sticky balancer, MaxBufferedBatches %d, MaxBufferedBytes %d MiB", o.batches, o.bufBytes>>20)
		},
		args: func(o *options, _ workload) []string {
			return []string{"-sticky", "-max-buffered-batches", strconv.Itoa(o.batches), "-max-buffered-bytes", strconv.FormatInt(o.bufBytes, 10)}
		}},
	// The same with snappy at s2's fast encoder, franz-go's effort: the
	// snappy rows then compare batching, not encoder effort.
	{name: "fork-sticky-fast", binary: "fork", throughputOnly: true,
		label: func(o *options) string {
			return fmt.Sprintf("this fork, Sticky balancer, snappy FasterCompression, MaxBufferedBatches %d, MaxBufferedBytes %d MiB", o.batches, o.bufBytes>>20)
		},
		args: func(o *options, _ workload) []string {
			return []string{"-sticky", "-snappy-fast", "-max-buffered-batches", strconv.Itoa(o.batches), "-max-buffered-bytes", strconv.FormatInt(o.bufBytes, 10)}
		}},
	// And with snappy written as franz-go writes it: one bare block per
	// batch at the fast encoder, so the snappy rows compare the same bytes.
	{name: "fork-sticky-raw", binary: "fork", throughputOnly: true,
		label: func(o *options) string {
			return fmt.Sprintf("this fork, Sticky balancer, snappy FasterCompression and Unframed, MaxBufferedBatches %d, MaxBufferedBytes %d MiB", o.batches, o.bufBytes>>20)
		},
		args: func(o *options, _ workload) []string {
			return []string{"-sticky", "-snappy-fast", "-snappy-unframed", "-max-buffered-batches", strconv.Itoa(o.batches), "-max-buffered-bytes", strconv.FormatInt(o.bufBytes, 10)}
		}},
	// And with franz-go's batching as well: its batches are capped by bytes
	// alone (1 MB), where the kafka-go rows cap them at 1000 messages too,
	// which at 100 B makes batches of about 110 KB, slower to compress per
	// byte and compressed less well. BatchSize 1000000 leaves BatchBytes
	// (1 MiB) and BatchTimeout to close them.
	{name: "fork-sticky-1m", binary: "fork", throughputOnly: true,
		label: func(o *options) string {
			return fmt.Sprintf("this fork, Sticky balancer, BatchSize 1000000, snappy FasterCompression and Unframed, MaxBufferedBatches %d, MaxBufferedBytes %d MiB", o.batches, o.bufBytes>>20)
		},
		args: func(o *options, _ workload) []string {
			return []string{"-sticky", "-batch-size", "1000000", "-snappy-fast", "-snappy-unframed", "-max-buffered-batches", strconv.Itoa(o.batches), "-max-buffered-bytes", strconv.FormatInt(o.bufBytes, 10)}
		}},
	{name: "fork", binary: "fork", sync: true, consume: true, consumeLabel: "this fork",
		label: func(*options) string { return "this fork, MaxBufferedBatches 0 (default)" }},
	{name: "semaphore", binary: "upstream",
		label: func(o *options) string {
			return fmt.Sprintf("v0.4.51 + semaphore in Completion (%d MiB of messages)", semaphoreBudget(o)>>20)
		},
		args: func(o *options, w workload) []string {
			// The same memory budget as MaxBufferedBytes, counted in messages.
			return []string{"-semaphore", strconv.FormatInt(max(1, semaphoreBudget(o)/int64(w.size)), 10)}
		}},
	{name: "franz", binary: "franz", sync: true, consume: true,
		label: func(*options) string { return "franz-go v1.22.3 (kgo)" }},
	{name: "sarama", binary: "sarama", sync: true,
		label: func(*options) string { return "IBM/sarama v1.61.1" }},
}

// semaphoreBudget is MaxBufferedBytes of the bounded case, or its default
// when that case runs without a byte bound.
func semaphoreBudget(o *options) int64 {
	if o.bufBytes > 0 {
		return o.bufBytes
	}
	return 16 << 20
}

func caseNames() []string {
	var n []string
	for _, c := range cases {
		n = append(n, c.name)
	}
	return n
}

func caseByName(name string) *clientCase {
	for i := range cases {
		if cases[i].name == name {
			return &cases[i]
		}
	}
	return nil
}

// workload is a scenario with its sizes.
type workload struct {
	id          string
	title       string
	scenario    string
	messages    int
	size        int
	compression string
	duration    time.Duration
	rate        int
	// chart keeps the heap series of a consumer workload for the chart.
	chart bool
}

// consumeModes are the consumer scenarios, in the order they run.
var consumeModes = []string{loadgen.ConsumePartition, loadgen.ConsumeGroupRead, loadgen.ConsumeGroupCommit}

// consumeTitle describes a consumer scenario in table headings.
func consumeTitle(mode string) string {
	switch mode {
	case loadgen.ConsumePartition:
		return "partition Readers (ReadMessage)"
	case loadgen.ConsumeGroupRead:
		return "group Reader, ReadMessage with periodic commits"
	case loadgen.ConsumeGroupCommit:
		return "group Reader, FetchMessage + synchronous CommitMessages"
	}
	return mode
}

// consumeCommitEvery is the messages between two commits of the
// FetchMessage + CommitMessages scenario.
const consumeCommitEvery = 1000

// consumeChart is the consumer workload whose heap series is plotted.
func consumeChart(ws []workload) string {
	for _, w := range ws {
		if w.chart {
			return w.id
		}
	}
	return ""
}

func workloads(o *options) []workload {
	tp := func(n, size int, codec string) workload {
		return workload{
			id:    fmt.Sprintf("throughput-%d-%d-%s", n, size, codec),
			title: fmt.Sprintf("%s x %s, %s", countName(n), sizeName(size), codec), scenario: loadgen.Throughput,
			messages: n, size: size, compression: codec,
		}
	}
	small, large := 1_000_000, 200_000
	slowDur, slowRate, lat := 15*time.Second, 40_000, 2000
	if o.quick {
		small, large = 500_000, 100_000
		slowDur, lat = 8*time.Second, 1000
	}
	var ws []workload
	for _, codec := range append([]string{"none"}, loadgen.Codecs...) {
		n, l := small, large
		if o.quick && codec != "none" && codec != "zstd" {
			// The codecs added later run at smaller counts in quick mode,
			// so that -quick stays a few minutes; their CPU per message is
			// then the most approximate of the run.
			n, l = 200_000, 50_000
		}
		ws = append(ws, tp(n, 100, codec), tp(l, 1024, codec))
	}
	ws = append(ws, workload{
		id: "slow", scenario: loadgen.SlowBroker,
		title: fmt.Sprintf("every Produce delayed %s, 1 KiB messages offered at %s msg/s for %s",
			o.slowDelay, countName(slowRate), slowDur),
		messages: slowRate * int(slowDur/time.Second), size: 1024, compression: "none",
		duration: slowDur, rate: slowRate,
	})
	ws = append(ws, workload{
		id: "latency", scenario: loadgen.Latency,
		title:    fmt.Sprintf("%d one-message writes of 100 B, acks=1, one at a time", lat),
		messages: lat, size: 100, compression: "none",
	})
	for _, mode := range consumeModes {
		for _, codec := range []string{"none", "zstd"} {
			for _, n := range []struct{ count, size int }{{small, 100}, {large, 1024}} {
				ws = append(ws, workload{
					id:       fmt.Sprintf("%s-%d-%d-%s", mode, n.count, n.size, codec),
					title:    fmt.Sprintf("%s: %s x %s, %s", consumeTitle(mode), countName(n.count), sizeName(n.size), codec),
					scenario: mode, messages: n.count, size: n.size, compression: codec,
					duration: 5 * time.Minute,
					chart:    mode == loadgen.ConsumePartition && n.size == 1024 && codec == "none",
				})
			}
		}
	}
	return ws
}

func countName(n int) string {
	switch {
	case n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return strconv.Itoa(n)
}

func sizeName(n int) string {
	if n%1024 == 0 {
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprintf("%d B", n)
}

// bench is the state of one invocation.
type bench struct {
	o       *options
	bins    *binaries
	brokers string // external mode
	seq     int
	runs    []results.Run
	fails   []string
	// built is the project's commit and working tree as the fork load
	// generator was built from them (gitState), taken before the build:
	// edits made while the run goes on are not in what it measures.
	built string
}

func run(ctx context.Context, args []string) error {
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	if o.repo == "" {
		if o.repo, err = findRepo(); err != nil {
			return err
		}
	}
	if o.out == "" {
		o.out = filepath.Join(o.repo, "docs", "bench")
	}
	started := time.Now().UTC()
	load0 := loadAvg()

	b := &bench{o: o}
	if o.external {
		b.brokers = os.Getenv("KAFKA_BROKERS")
		if b.brokers == "" {
			b.brokers = "127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094"
		}
	}
	scen := splitList(o.scenarios)
	selected := splitList(o.clients)

	need := map[string]bool{"franz": true} // creates the topics
	for _, name := range selected {
		need[caseByName(name).binary] = true
	}
	dir, err := os.MkdirTemp("", "kafka-go-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	b.built = gitState(o.repo)
	if b.bins, err = build(ctx, o.repo, dir, !o.external, need); err != nil {
		if o.external || ctx.Err() != nil {
			return err
		}
		// Without the embedded cluster the run can still measure the
		// clients against brokers that are already there.
		b.brokers = os.Getenv("KAFKA_BROKERS")
		if b.brokers == "" {
			return err
		}
		logf("%v; falling back to $KAFKA_BROKERS = %s", err, b.brokers)
		b.fails = append(b.fails, fmt.Sprintf("%v: used $KAFKA_BROKERS instead", err))
		o.external = true
		if b.bins, err = build(ctx, o.repo, dir, false, need); err != nil {
			return err
		}
	}
	for name, e := range b.bins.failed {
		b.fails = append(b.fails, fmt.Sprintf("build of the %s load generator failed: %s", name, e))
	}
	if _, ok := b.bins.clients["franz"]; !ok {
		return errors.New("the franz load generator, which creates the topics, did not build")
	}

	spread := 0
	for _, kind := range []spreadKind{spreadPartitionsKind, spreadTopicsKind} {
		if contains(scen, kind.name) {
			spread++
			if err := b.runSpread(ctx, kind, selected); err != nil {
				return err
			}
		}
	}
	if contains(scen, "idle") {
		spread++
		if err := b.runIdle(ctx, selected); err != nil {
			return err
		}
	}
	if spread > 0 && spread == len(scen) {
		return nil // results.md is for the other scenarios: leave it
	}

	var chk *report.Check
	if contains(scen, "check") {
		chk = b.check(ctx)
	}
	ws := workloads(o)
	var repWs []report.Workload
	for _, w := range ws {
		if !contains(scen, scenarioFlag(w.scenario)) && !contains(scen, w.scenario) {
			continue
		}
		if w.scenario == loadgen.SlowBroker && o.external && o.slowBrokers == "" {
			b.fails = append(b.fails, "slow-broker scenario skipped: -external without -slow-brokers")
			continue
		}
		repWs = append(repWs, report.Workload{ID: w.id, Title: w.title, Scenario: w.scenario})
		for round := 1; round <= o.rounds; round++ {
			for _, name := range selected {
				c := caseByName(name)
				if w.scenario == loadgen.Latency && !c.sync {
					continue
				}
				if loadgen.IsConsume(w.scenario) && !c.consume {
					continue
				}
				if c.throughputOnly && w.scenario != loadgen.Throughput {
					continue
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				r := b.runCase(ctx, w, c, round)
				b.runs = append(b.runs, r)
			}
		}
	}

	// Report.
	var repCases []report.Case
	for _, name := range selected {
		c := caseByName(name)
		repCases = append(repCases, report.Case{Name: name, Label: c.label(o), ConsumeLabel: c.consumeLabel})
	}
	mode := fmt.Sprintf("full (%d rounds)", o.rounds)
	cmdline, target := "go run ./cmd/bench", "make bench"
	if o.quick {
		mode = fmt.Sprintf("-quick (%d round%s, reduced message counts): indicative figures only", o.rounds, plural(o.rounds))
		cmdline, target = cmdline+" -quick", "make bench-quick"
	}
	header := []string{
		fmt.Sprintf("Generated by `%s` (from bench/; `%s` from the root runs the same) on %s, finished %s.",
			cmdline, target, started.Format("2006-01-02 15:04 MST"), time.Now().UTC().Format("15:04 MST")),
		"",
		"- Mode: " + mode + ".",
		"- Machine: " + machine() + fmt.Sprintf("; load average %s at the start, %s at the end.", load0, loadAvg()),
	}
	if o.external {
		header = append(header, "- Brokers: external, $KAFKA_BROKERS = "+b.brokers+".")
	} else {
		header = append(header, fmt.Sprintf("- Brokers: the embedded cluster (itest/cmd/cluster: franz-go's kfake, 3 brokers in one process on free ports the tool picks), "+
			"a fresh cluster process for every run, started by the tool; each run writes to a new topic of %d partitions, replication 1.", o.partitions))
	}
	header = append(header, "- This project: "+b.built+" (the fork load generator is built from the working tree at the start).")
	if o.note != "" {
		header = append(header, "- Note: "+o.note)
	}
	in := &report.Input{
		Header:    header,
		Cases:     repCases,
		Workloads: repWs,
		Runs:      b.runs,
		Check:     chk,
		Failures:  b.fails,
		Baseline:  "upstream",
		Bounded:   "fork-n",
		Compare:   []string{"upstream", "franz"},
		Consumer:  "fork",
	}
	if contains(scen, "slow") && !(o.external && o.slowBrokers == "") {
		in.PlotFile = "heap.svg"
	}
	for _, w := range repWs {
		if w.ID == consumeChart(ws) {
			in.ConsumePlotFile = "consume-heap.svg"
			in.ConsumeChartWorkload = w.ID
		}
	}
	return b.write(in)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func scenarioFlag(s string) string {
	switch {
	case s == loadgen.SlowBroker:
		return "slow"
	case loadgen.IsConsume(s):
		return "consume"
	}
	return s
}

func (b *bench) write(in *report.Input) error {
	if err := os.MkdirAll(b.o.out, 0o755); err != nil {
		return err
	}
	if in.PlotFile != "" {
		ch := report.HeapChart(in, "slow", []string{"upstream", "fork-n", "fork-bytes", "franz"},
			fmt.Sprintf("every Produce delayed %s; the median round of each client", b.o.slowDelay))
		if err := writeChart(filepath.Join(b.o.out, in.PlotFile), ch); err != nil {
			return err
		}
	}
	if in.ConsumePlotFile != "" {
		ch := report.ConsumeHeapChart(in, in.ConsumeChartWorkload, []string{"upstream", "fork", "franz"})
		if err := writeChart(filepath.Join(b.o.out, in.ConsumePlotFile), ch); err != nil {
			return err
		}
	}
	md := report.Markdown(in)
	if err := os.WriteFile(filepath.Join(b.o.out, "results.md"), []byte(md), 0o644); err != nil {
		return err
	}
	js, err := json.MarshalIndent(struct {
		Header []string      `json:"header"`
		Check  *report.Check `json:"check,omitempty"`
		Runs   []results.Run `json:"runs"`
	}{in.Header, in.Check, in.Runs}, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(b.o.out, "results.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Print(md)
	logf("wrote %s", b.o.out)
	// The figures README.md and docs/ quote come from this run too; a
	// partial run (-scenarios, -quick) rewrites them as well, which the
	// diff then shows.
	if b.o.out == filepath.Join(b.o.repo, "docs", "bench") {
		stale, err := report.SyncDocs(b.o.repo, true)
		if err != nil {
			return err
		}
		for _, f := range stale {
			logf("rewrote the figures of %s", f)
		}
	}
	return nil
}

func writeChart(path string, ch *svgplot.Chart) error {
	var buf bytes.Buffer
	if err := ch.Write(&buf); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// target is where a run sends its messages: a fresh embedded cluster (cl
// set) or the external brokers.
type target struct {
	brokers string
	cl      *cluster
}

func (t *target) close() {
	if t.cl != nil {
		t.cl.stop()
	}
}

func (b *bench) target(ctx context.Context, slow bool) (*target, error) {
	if b.o.external {
		if slow {
			return &target{brokers: b.o.slowBrokers}, nil
		}
		return &target{brokers: b.brokers}, nil
	}
	var delay time.Duration
	if slow {
		delay = b.o.slowDelay
	}
	cl, err := startCluster(ctx, b.bins.cluster, delay)
	if err != nil {
		return nil, err
	}
	return &target{brokers: cl.brokers, cl: cl}, nil
}

// newTopic creates a topic no earlier run used, with the franz load
// generator.
func (b *bench) newTopic(ctx context.Context, t *target, label string) (string, error) {
	b.seq++
	topic := fmt.Sprintf("bench-%d-%d-%s", os.Getpid(), b.seq, label)
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, b.bins.clients["franz"], "-scenario", loadgen.CreateTopic,
		"-brokers", t.brokers, "-topic", topic, "-partitions", strconv.Itoa(b.o.partitions))
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("creating topic %s: %v: %s", topic, err, strings.TrimSpace(string(out)))
	}
	return topic, nil
}

func (b *bench) runCase(ctx context.Context, w workload, c *clientCase, round int) results.Run {
	r := results.Run{Case: c.name, Workload: w.id, Round: round, BrokerCPUSec: -1}
	defer func() {
		if r.OK() {
			logf("%-36s %-9s round %d: %s", w.id, c.name, round, brief(&r))
		} else {
			logf("%-36s %-9s round %d: FAILED: %s", w.id, c.name, round, r.Err)
			b.fails = append(b.fails, fmt.Sprintf("%s, %s, round %d: %s", w.id, c.name, round, r.Err))
		}
	}()
	bin, ok := b.bins.clients[c.binary]
	if !ok {
		r.Err = "load generator did not build"
		return r
	}
	t, err := b.target(ctx, w.scenario == loadgen.SlowBroker)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	defer t.close()
	topic, err := b.newTopic(ctx, t, c.name)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	if loadgen.IsConsume(w.scenario) {
		if err := b.prefill(ctx, t, w, topic); err != nil {
			r.Err = err.Error()
			return r
		}
	}
	args := append(b.args(w, t.brokers, topic), argsOf(b.o, c, w)...)
	if b.o.memDir != "" && loadgen.IsConsume(w.scenario) {
		if err := os.MkdirAll(b.o.memDir, 0o755); err != nil {
			r.Err = err.Error()
			return r
		}
		prof, err := filepath.Abs(filepath.Join(b.o.memDir, fmt.Sprintf("%s-%s-r%d.heap.pprof", w.id, c.name, round)))
		if err != nil {
			r.Err = err.Error()
			return r
		}
		args = append(args, "-memprofile", prof)
	}
	if b.o.profileDir != "" {
		if err := os.MkdirAll(b.o.profileDir, 0o755); err != nil {
			r.Err = err.Error()
			return r
		}
		prof, err := filepath.Abs(filepath.Join(b.o.profileDir, fmt.Sprintf("%s-%s-r%d.pprof", w.id, c.name, round)))
		if err != nil {
			r.Err = err.Error()
			return r
		}
		args = append(args, "-cpuprofile", prof)
	}
	child := b.child(ctx, t, bin, args, timeoutOf(w))
	takeChild(&r, child)
	return r
}

// takeChild fills r from a load generator run: the process's figures,
// then its parsed and checked result, or the first error.
func takeChild(r *results.Run, child childResult) {
	r.CPUSec, r.MaxRSSBytes, r.WallSec, r.BrokerCPUSec = child.cpu, child.rss, child.wall, child.brokerCPU
	if child.err != nil {
		r.Err = child.err.Error()
		return
	}
	res, err := results.Parse(child.stdout)
	if err != nil {
		r.Err = err.Error()
		return
	}
	r.Result = res
	if err := results.Check(res); err != nil {
		r.Err = err.Error()
	}
	r.Finish()
}

func argsOf(o *options, c *clientCase, w workload) []string {
	if c.args == nil || loadgen.IsConsume(w.scenario) {
		return nil
	}
	return c.args(o, w)
}

// prefill writes the messages of a consumer workload to topic with the
// franz load generator (acks=1, the workload's codec), before the
// consumer starts.
func (b *bench) prefill(ctx context.Context, t *target, w workload, topic string) error {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, b.bins.clients["franz"], "-scenario", loadgen.Throughput,
		"-brokers", t.brokers, "-topic", topic, "-messages", strconv.Itoa(w.messages),
		"-size", strconv.Itoa(w.size), "-compression", w.compression)
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("prefilling %s: %v", topic, err)
	}
	res, err := results.Parse(out)
	if err == nil {
		err = results.Check(res)
	}
	if err != nil {
		return fmt.Errorf("prefilling %s: %v", topic, err)
	}
	return nil
}

func (b *bench) args(w workload, brokers, topic string) []string {
	a := []string{
		"-scenario", w.scenario, "-brokers", brokers, "-topic", topic,
		"-messages", strconv.Itoa(w.messages), "-size", strconv.Itoa(w.size),
		"-compression", w.compression,
	}
	if w.scenario == loadgen.SlowBroker {
		a = append(a, "-duration", w.duration.String(), "-rate", strconv.Itoa(w.rate), "-sample", "50ms")
	}
	if loadgen.IsConsume(w.scenario) {
		sample := "50ms"
		if w.chart {
			// A quick run reads 100k messages in well under a second.
			sample = "10ms"
			a = append(a, "-keep-samples")
		}
		a = append(a, "-partitions", strconv.Itoa(b.o.partitions), "-duration", w.duration.String(),
			"-sample", sample, "-commit-every", strconv.Itoa(consumeCommitEvery))
	}
	return a
}

func timeoutOf(w workload) time.Duration {
	if w.scenario == loadgen.SlowBroker || loadgen.IsConsume(w.scenario) {
		return w.duration + 2*time.Minute
	}
	return 10 * time.Minute
}

// childResult is what the parent sees of one load generator process.
type childResult struct {
	stdout    []byte
	cpu       float64
	rss       int64
	wall      float64
	brokerCPU float64
	err       error
}

// child runs one load generator and measures it from outside.
func (b *bench) child(ctx context.Context, t *target, bin string, args []string, timeout time.Duration) childResult {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout bytes.Buffer
	stderr := &tailBuffer{max: 2048}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	broker0 := t.cl.cpuSec()
	start := time.Now()
	err := cmd.Run()
	cr := childResult{wall: time.Since(start).Seconds(), brokerCPU: -1}
	if broker1 := t.cl.cpuSec(); broker0 >= 0 && broker1 >= 0 {
		cr.brokerCPU = broker1 - broker0
	}
	cr.stdout = stdout.Bytes()
	if ps := cmd.ProcessState; ps != nil {
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			cr.cpu = tv(ru.Utime) + tv(ru.Stime)
			cr.rss = ru.Maxrss * 1024 // kilobytes on Linux
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("timed out after %s", timeout)
		}
		cr.err = fmt.Errorf("%v: %s", err, stderr)
	}
	return cr
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

func brief(r *results.Run) string {
	switch r.Scenario {
	case loadgen.Throughput:
		return fmt.Sprintf("%.0f msg/s, %.1f MB/s, CPU %.2fs, RSS %d MiB, broker %.2f cores",
			r.MsgsPerSec(), r.MBPerSec(), r.CPUSec, r.MaxRSSBytes>>20, r.BrokerCores())
	case loadgen.SlowBroker:
		return fmt.Sprintf("peak heap %d MiB, peak buffered %d, accepted %d, acked %d",
			r.PeakHeapBytes>>20, r.PeakBuffered, r.Produced, r.Acked)
	case loadgen.Latency:
		return fmt.Sprintf("p50 %.3f ms, p99 %.3f ms", r.P50US/1e3, r.P99US/1e3)
	case loadgen.ConsumePartition, loadgen.ConsumeGroupRead, loadgen.ConsumeGroupCommit:
		s := fmt.Sprintf("%.0f msg/s, CPU %.2fs, RSS %d MiB, peak heap %d MiB, first message %.0f ms",
			r.MsgsPerSec(), r.ClientCPUSec(), r.MaxRSSBytes>>20, r.PeakHeapBytes>>20, r.FirstMessageMs)
		if r.RebalanceMs > 0 {
			s += fmt.Sprintf(", rebalance %.0f ms", r.RebalanceMs)
		}
		if r.RebalanceError != "" {
			s += ", rebalance: " + r.RebalanceError
		}
		return s
	}
	return ""
}

// findRepo walks up from the working directory to this repository's root
// module.
func findRepo() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && modulePath(b) == "github.com/segmentio/kafka-go" {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the kafka-go repository (use -repo)")
		}
		dir = parent
	}
}

func modulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(p), `"`)
		}
	}
	return ""
}

func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				if kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64); err == nil {
					mem = fmt.Sprintf(", %.0f GiB RAM", float64(kb)/(1<<20))
				}
			}
		}
	}
	return fmt.Sprintf("%s, %d logical CPUs%s, %s/%s, %s", model, runtime.NumCPU(), mem, runtime.GOOS, runtime.GOARCH, goVersion())
}

func goVersion() string {
	out, err := exec.Command(goCmd(), "env", "GOVERSION").Output()
	if err != nil {
		return runtime.Version()
	}
	return strings.TrimSpace(string(out))
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
}

// gitState names the commit the fork was built from and whether the
// working tree differed from it (outside bench/ and docs/).
func gitState(repo string) string {
	head, err := exec.Command("git", "-C", repo, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "commit unknown"
	}
	st := "commit " + strings.TrimSpace(string(head))
	out, err := exec.Command("git", "-C", repo, "status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench", ":!docs").Output()
	if err == nil {
		if n := len(splitList(strings.ReplaceAll(strings.TrimSpace(string(out)), "\n", ","))); n > 0 {
			st += fmt.Sprintf(" plus uncommitted changes to %d file%s", n, plural(n))
		}
	}
	return st
}
