package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/segmentio/kafka-go/bench/clients/loadgen"
	"github.com/segmentio/kafka-go/bench/internal/results"
)

// The partitions and topics scenarios. Partitions: one topic of 1, 10, 100
// and 1000 partitions, keyed 100-byte messages spread over all of them by
// each client's key hash. Topics: 1, 10, 100 and 1000 topics of one
// partition each, the messages in turn over all of them. A fixed total in
// both. They show whether a client's cost follows its traffic or the
// partitions it writes to: CPU per message, peak RSS, goroutines and
// connections (open sockets), msg/s. Each writes its own report
// (docs/bench/partitions.md, topics.md) and leaves results.md alone.

// spreadCounts are the partition or topic counts of the scenarios.
var spreadCounts = []int{1, 10, 100, 1000}

// spreadKind is one of the two scenarios.
type spreadKind struct {
	name  string // scenario name and report file name
	title string
	what  string // the workload, for the report
}

var (
	spreadPartitionsKind = spreadKind{name: "partitions", title: "Partitions: one topic of 1 to 1000 partitions",
		what: "keyed messages (10007 keys in turn, spread by each client's key hash) to one topic of the given partitions"}
	spreadTopicsKind = spreadKind{name: "topics", title: "Topics: 1 to 1000 topics of one partition",
		what: "unkeyed messages in turn over the given topics, of one partition each, by one producer"}
)

// spreadCases are the clients it compares, when selected.
var spreadCases = []string{"fork-n", "fork", "upstream", "franz"}

const spreadSize = 100

type spreadRow struct {
	count int
	round int
	run   results.Run
}

// runSpread runs a scenario and writes its report.
func (b *bench) runSpread(ctx context.Context, kind spreadKind, selected []string) error {
	messages := 1_000_000
	if b.o.quick {
		messages = 200_000
	}
	var rows []spreadRow
	for round := 1; round <= b.o.rounds; round++ {
		for _, n := range spreadCounts {
			for _, name := range spreadCases {
				if !contains(selected, name) {
					continue
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				r := b.runSpreadCase(ctx, kind, caseByName(name), n, messages, round)
				rows = append(rows, spreadRow{count: n, round: round, run: r})
			}
		}
	}
	return b.writeSpread(kind, rows, messages)
}

func (b *bench) runSpreadCase(ctx context.Context, kind spreadKind, c *clientCase, count, messages, round int) results.Run {
	id := fmt.Sprintf("%s-%d", kind.name, count)
	r := results.Run{Case: c.name, Workload: id, Round: round, BrokerCPUSec: -1}
	defer func() {
		if r.OK() {
			logf("%-16s %-9s round %d: %.0f msg/s, CPU %.2fs, RSS %d MiB, %d goroutines, %d sockets",
				id, c.name, round, r.MsgsPerSec(), r.CPUSec, r.MaxRSSBytes>>20, r.PeakGoroutines, r.PeakSockets)
		} else {
			logf("%-16s %-9s round %d: FAILED: %s", id, c.name, round, r.Err)
			b.fails = append(b.fails, fmt.Sprintf("%s, %s, round %d: %s", id, c.name, round, r.Err))
		}
	}()
	bin, ok := b.bins.clients[c.binary]
	if !ok {
		r.Err = "load generator did not build"
		return r
	}
	t, err := b.target(ctx, false)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	defer t.close()
	partitions, topics := count, 1
	if kind == spreadTopicsKind {
		partitions, topics = 1, count
	}
	topic, err := b.newTopicOf(ctx, t, c.name, partitions, topics)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	w := workload{id: id, scenario: loadgen.Throughput, messages: messages, size: spreadSize, compression: "none"}
	args := append(b.args(w, t.brokers, topic), "-sample", "50ms", "-topics", strconv.Itoa(topics))
	if kind == spreadPartitionsKind {
		args = append(args, "-keyed")
	}
	args = append(args, argsOf(b.o, c, w)...)
	child := b.child(ctx, t, bin, args, timeoutOf(w))
	takeChild(&r, child)
	return r
}

func quickFlag(quick bool) string {
	if quick {
		return " -quick"
	}
	return ""
}

// newTopicOf is newTopic with a partition count of its own, and with
// topics > 1 the topics <topic>-0 ... of a multi-topic run.
func (b *bench) newTopicOf(ctx context.Context, t *target, label string, partitions, topics int) (string, error) {
	b.seq++
	topic := fmt.Sprintf("bench-%d-%d-%s-p%d-t%d", os.Getpid(), b.seq, label, partitions, topics)
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, b.bins.clients["franz"], "-scenario", loadgen.CreateTopic,
		"-brokers", t.brokers, "-topic", topic, "-partitions", strconv.Itoa(partitions), "-topics", strconv.Itoa(topics))
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("creating topic %s: %v: %s", topic, err, strings.TrimSpace(string(out)))
	}
	return topic, nil
}

func (b *bench) writeSpread(kind spreadKind, rows []spreadRow, messages int) error {
	var sb strings.Builder
	mode := fmt.Sprintf("full (%d rounds)", b.o.rounds)
	if b.o.quick {
		mode = fmt.Sprintf("-quick (%d round%s): indicative figures only", b.o.rounds, plural(b.o.rounds))
	}
	fmt.Fprintf(&sb, "# %s\n\n", kind.title)
	fmt.Fprintf(&sb, "Generated by `go run ./cmd/bench%s -scenarios %s` (from bench/) on %s.\n\n", quickFlag(b.o.quick), kind.name, time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&sb, "- Mode: %s.\n", mode)
	fmt.Fprintf(&sb, "- Machine: %s; load average %s at the end.\n", machine(), loadAvg())
	fmt.Fprintf(&sb, "- Workload: %d messages of %d bytes, %s; uncompressed, acks=1, async; "+
		"a fresh embedded 3-broker cluster and new topics per run.\n", messages, spreadSize, kind.what)
	fmt.Fprintf(&sb, "- This project: %s.\n", b.built)
	fmt.Fprintf(&sb, "- CPU is the client process's user+system time per million messages; RSS its peak; goroutines and sockets (open connections) the most its sampler saw (every 50 ms).\n\n")
	for _, name := range spreadCases {
		if c := caseByName(name); c != nil {
			fmt.Fprintf(&sb, "- `%s`: %s\n", name, c.label(b.o))
		}
	}
	fmt.Fprintf(&sb, "\n| %s | client |", kind.name)
	sb.WriteString(" round | msg/s | CPU s / 1M msgs | peak RSS MiB | goroutines | sockets |\n|---|---|---|---|---|---|---|---|\n")
	for _, row := range rows {
		r := &row.run
		if !r.OK() {
			fmt.Fprintf(&sb, "| %d | %s | %d | failed: %s | | | | |\n", row.count, r.Case, row.round, strings.ReplaceAll(r.Err, "|", "/"))
			continue
		}
		fmt.Fprintf(&sb, "| %d | %s | %d | %.0f | %.2f | %d | %d | %d |\n", row.count, r.Case, row.round,
			r.MsgsPerSec(), r.CPUPerMillion(), r.MaxRSSBytes>>20, r.PeakGoroutines, r.PeakSockets)
	}
	if len(b.fails) > 0 {
		sb.WriteString("\nFailures:\n\n")
		for _, f := range b.fails {
			fmt.Fprintf(&sb, "- %s\n", f)
		}
	}
	if err := os.MkdirAll(b.o.out, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(b.o.out, kind.name+".md"), []byte(sb.String()), 0o644)
}
