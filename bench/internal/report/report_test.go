package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"github.com/segmentio/kafka-go/bench/clients/loadgen"
	"github.com/segmentio/kafka-go/bench/internal/results"
)

func tpRun(kase string, round int, elapsed float64) results.Run {
	return results.Run{
		Case: kase, Workload: "tp", Round: round,
		Result: loadgen.Result{
			Client: kase, Scenario: loadgen.Throughput, Messages: 1000, Size: 100,
			Produced: 1000, Acked: 1000, ElapsedSec: elapsed, Settings: kase + " settings",
		},
		CPUSec: 0.5, MaxRSSBytes: 20 << 20, WallSec: elapsed, BrokerCPUSec: elapsed / 2,
	}
}

func slowRun(kase string, round int, heaps ...uint64) results.Run {
	r := results.Run{Case: kase, Workload: "slow", Round: round, BrokerCPUSec: -1,
		Result: loadgen.Result{Client: kase, Scenario: loadgen.SlowBroker, Messages: 100, Size: 1024, Produced: 100, Acked: 50, ElapsedSec: 1}}
	for i, h := range heaps {
		r.Samples = append(r.Samples, loadgen.Sample{TMs: float64(50 * i), HeapBytes: h})
		r.PeakHeapBytes = max(r.PeakHeapBytes, h)
	}
	return r
}

func input() *Input {
	in := &Input{
		Header:    []string{"Generated for a test."},
		Cases:     []Case{{Name: "upstream", Label: "upstream"}, {Name: "fork-n", Label: "fork bounded"}, {Name: "sarama", Label: "sarama"}},
		Workloads: []Workload{{"tp", "1k x 100 B, none", "throughput"}, {"slow", "slow 1 KiB", "slow"}},
		Baseline:  "upstream",
		Bounded:   "fork-n",
		Compare:   []string{"upstream", "sarama"},
		PlotFile:  "heap.svg",
	}
	// upstream: 1000 msgs in 0.1, 0.2, 0.4 s -> 10k, 5k, 2.5k msg/s.
	// fork-n: 1000 msgs in 0.25 s every round -> 4k msg/s, slower.
	for i, e := range []float64{0.1, 0.2, 0.4} {
		in.Runs = append(in.Runs, tpRun("upstream", i+1, e), tpRun("fork-n", i+1, 0.25))
	}
	bad := tpRun("sarama", 1, 1)
	bad.Err = "acked 10 of 1000 messages | boom"
	in.Runs = append(in.Runs, bad)
	in.Runs = append(in.Runs,
		slowRun("upstream", 1, 1<<20, 50<<20, 100<<20),
		slowRun("upstream", 2, 1<<20, 60<<20, 120<<20),
		slowRun("upstream", 3, 1<<20, 40<<20, 80<<20),
		slowRun("fork-n", 1, 1<<20, 10<<20, 10<<20))
	return in
}

func TestMarkdown(t *testing.T) {
	md := Markdown(input())
	for _, want := range []string{
		"| upstream | 5.0k (2.5k–10k) | 0.5 (0.2–1.0) | 500.00 | 20 | 0.50 | — |",
		"| fork bounded | 4.0k | 0.4 | 500.00 | 20 | 0.50 | 0.80x (slower) |",
		`| sarama | failed: acked 10 of 1000 messages \| boom |`,
		"| upstream | 100.0 (80.0–120.0) |",
		"| fork bounded | 10.0 |",
		"1k x 100 B, none: fork bounded at 4.0k msg/s = 0.80x upstream (**slower**, 20% fewer msg/s).",
		"Slow broker, peak heap: upstream 100.0 MiB; fork bounded 10.0 MiB.",
		"![heap over time under the slow broker](heap.svg)",
		"- **fork bounded**: fork-n settings",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q\n%s", want, md)
		}
	}
}

func TestHeapChartUsesMedianRound(t *testing.T) {
	in := input()
	ch := HeapChart(in, "slow", []string{"upstream", "fork-n", "missing"}, "sub")
	if len(ch.Series) != 2 {
		t.Fatalf("%d series, want 2 (cases without runs left out)", len(ch.Series))
	}
	up := ch.Series[0]
	if up.Name != "upstream" || len(up.X) != 3 || up.Y[2] != 100 || up.X[1] != 0.05 {
		t.Fatalf("upstream series %+v, want the round peaking at 100 MiB, x in seconds", up)
	}
	var buf bytes.Buffer
	if err := ch.Write(&buf); err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(&buf)
	for {
		_, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestCount(t *testing.T) {
	for v, want := range map[float64]string{950: "950", 1234: "1.2k", 84500: "84k", 1234567: "1.23M"} {
		if got := count(v); got != want {
			t.Errorf("count(%v) = %q, want %q", v, got, want)
		}
	}
}

func consumeRun(kase string, readCPU float64, rss int64, rebalanceMs float64) results.Run {
	return results.Run{
		Case: kase, Workload: "cg", Round: 1, BrokerCPUSec: -1, MaxRSSBytes: rss, CPUSec: 9, WallSec: 3,
		Result: loadgen.Result{
			Client: kase, Scenario: loadgen.ConsumeGroupCommit, Messages: 1_000_000, Size: 100,
			Produced: 1_000_000, Acked: 1_000_000, ElapsedSec: 2, ReadCPUSec: readCPU,
			FirstMessageMs: 150, RebalanceMs: rebalanceMs,
		},
	}
}

// The consumer table shows CPU per message from the CPU taken when the
// last message was read (not the whole process), the first-message and
// rebalance times, and the notes call out where this project spends more.
func TestConsumeTable(t *testing.T) {
	in := &Input{
		Cases:     []Case{{Name: "upstream", Label: "upstream"}, {Name: "fork", Label: "fork, producer settings", ConsumeLabel: "fork"}, {Name: "franz", Label: "franz"}},
		Workloads: []Workload{{"cg", "group 1M x 100 B", loadgen.ConsumeGroupCommit}},
		Baseline:  "upstream",
		Compare:   []string{"upstream", "franz"},
		Consumer:  "fork",
		Runs: []results.Run{
			consumeRun("upstream", 2, 20<<20, 2500),
			consumeRun("fork", 1.5, 30<<20, 2000),
			consumeRun("franz", 0.75, 25<<20, 0),
		},
	}
	md := Markdown(in)
	for _, want := range []string{
		"## Consumers",
		"| fork | 500k | 50.0 | 1.50 | 30 | 0.0 | 0.15 | 2.00 | n/a | 0.75x |",
		"| franz | 500k | 50.0 | 0.75 | 25 | 0.0 | 0.15 | n/a | n/a | 0.38x |",
		"0.75x the CPU per message of upstream and 1.50x its peak RSS (**more**)",
		"2.00x the CPU per message of franz (**more**) and 1.20x its peak RSS (**more**)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("missing %q in:\n%s", want, md)
		}
	}
}
