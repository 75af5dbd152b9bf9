package main

import (
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/segmentio/kafka-go/bench/clients/loadgen"
)

var runtimeNumCPU = runtime.NumCPU

func TestParseProcStatCPU(t *testing.T) {
	// Field 2 may hold spaces and parentheses; utime=250 stime=50 ticks.
	line := "4242 (clu ster) (x)) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 50 0 0 20 0 9 0 100 0 0"
	if got := parseProcStatCPU(line); math.Abs(got-3.0) > 1e-9 {
		t.Fatalf("parseProcStatCPU = %v, want 3.0", got)
	}
	for _, bad := range []string{"", "4242 (x) S 1 2", "no parenthesis here 1 2 3 4 5 6 7 8 9 10 11 12 13"} {
		if got := parseProcStatCPU(bad); got != -1 {
			t.Errorf("parseProcStatCPU(%q) = %v, want -1", bad, got)
		}
	}
}

func TestModulePath(t *testing.T) {
	if got := modulePath([]byte("// c\nmodule github.com/segmentio/kafka-go\n\ngo 1.23\n")); got != "github.com/segmentio/kafka-go" {
		t.Fatalf("modulePath = %q", got)
	}
	if got := modulePath([]byte("go 1.23\n")); got != "" {
		t.Fatalf("modulePath without module line = %q", got)
	}
}

func TestWorkloads(t *testing.T) {
	for _, quick := range []bool{false, true} {
		ws := workloads(&options{quick: quick, slowDelay: 100e6})
		scen := map[string]int{}
		for _, w := range ws {
			scen[w.scenario]++
			if w.messages < 1 || w.size < 1 {
				t.Errorf("workload %s has no messages", w.id)
			}
		}
		if scen["throughput"] != 10 || scen["slow"] != 1 || scen["latency"] != 1 {
			t.Errorf("quick=%v: scenarios %v", quick, scen)
		}
		if !quick && (ws[0].messages != 1_000_000 || ws[1].messages != 200_000 || ws[1].size != 1024) {
			t.Errorf("full sizes: %+v %+v", ws[0], ws[1])
		}
	}
	if got := workloads(&options{slowDelay: 100e6})[0].title; !strings.HasPrefix(got, "1M x 100 B, none") {
		t.Errorf("title %q", got)
	}
}

func TestParseFlagsRejects(t *testing.T) {
	for _, args := range [][]string{
		{"-clients", "upstream,nope"},
		{"-scenarios", "throughput,bogus"},
		{"-max-buffered-bytes", "1000"},
		{"-max-buffered-bytes", "0", "-max-buffered-batches", "0"},
		{"extra"},
	} {
		if _, err := parseFlags(args); err == nil {
			t.Errorf("parseFlags(%q) accepted", args)
		}
	}
	o, err := parseFlags([]string{"-quick"})
	if err != nil || o.rounds != 1 {
		t.Fatalf("-quick: %+v, %v", o, err)
	}
}

func TestMachineCPU(t *testing.T) {
	a := parseMachineCPU("cpu  100 0 100 700 100 0 0 0 0 0\ncpu0 1 2 3\n")
	b := parseMachineCPU("cpu  250 0 150 800 100 0 0 0 50 0\ncpu0 1 2 3\n")
	if !a.ok || a.busy != 200 || a.total != 1000 {
		t.Fatalf("parsed %+v", a)
	}
	// 200 busy jiffies of 300: two thirds of every CPU.
	want := 2.0 / 3 * float64(runtimeNumCPU())
	if got := a.busyCoresSince(b); math.Abs(got-want) > 1e-9 {
		t.Fatalf("busyCoresSince = %v, want %v", got, want)
	}
	if got := a.busyCoresSince(machineCPU{}); got != -1 {
		t.Fatalf("unknown later sample: %v", got)
	}
	if parseMachineCPU("intr 1 2 3").ok {
		t.Fatal("non-cpu line parsed")
	}
}

func TestBoundedCaseLabel(t *testing.T) {
	o, err := parseFlags([]string{"-max-buffered-bytes", "0"})
	if err != nil {
		t.Fatal(err)
	}
	c := caseByName("fork-n")
	if got := c.label(o); got != "this fork, MaxBufferedBatches 4" {
		t.Errorf("label %q", got)
	}
	if got := c.args(o, workload{size: 1024}); strings.Join(got, " ") != "-max-buffered-batches 4 -max-buffered-bytes 0" {
		t.Errorf("args %q", got)
	}
	if got := caseByName("semaphore").args(o, workload{size: 1024}); got[1] != "16384" {
		t.Errorf("semaphore args %q: want the 16 MiB default budget", got)
	}
}

func TestReservedPorts(t *testing.T) {
	for _, p := range []int{9092, 9096, 19000, 19092, 29999, 39500, 49092, 59999} {
		if !reservedPort(p) {
			t.Errorf("port %d not reserved", p)
		}
	}
	for _, p := range []int{9091, 9097, 14092, 18999, 20000, 33000, 60000, 60999} {
		if reservedPort(p) {
			t.Errorf("port %d reserved", p)
		}
	}
	got, err := freePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	ps := strings.Split(got, ",")
	if len(ps) != 3 || ps[0] == ps[1] || ps[1] == ps[2] || ps[0] == ps[2] {
		t.Fatalf("freePorts(3) = %q", got)
	}
}

func TestThroughputWorkloads(t *testing.T) {
	for _, quick := range []bool{false, true} {
		codecs := map[string]int{}
		for _, w := range workloads(&options{quick: quick, slowDelay: 100e6}) {
			if w.scenario != loadgen.Throughput {
				continue
			}
			codecs[w.compression]++
			args := strings.Join((&bench{o: &options{partitions: 3}}).args(w, "b", "t"), " ")
			if !strings.Contains(args, "-compression "+w.compression) {
				t.Errorf("%s args %q lack the codec", w.id, args)
			}
			if !quick && w.messages != map[int]int{100: 1_000_000, 1024: 200_000}[w.size] {
				t.Errorf("full mode %s: %d messages", w.id, w.messages)
			}
		}
		// Every codec at both sizes.
		for _, c := range []string{"none", "zstd", "snappy", "lz4", "gzip"} {
			if codecs[c] != 2 {
				t.Errorf("quick=%v: codec %s has %d throughput workloads", quick, c, codecs[c])
			}
		}
		if len(codecs) != 5 {
			t.Errorf("quick=%v: codecs %v", quick, codecs)
		}
	}
}

func TestConsumeWorkloads(t *testing.T) {
	ws := workloads(&options{slowDelay: 100e6})
	n, charts := 0, 0
	for _, w := range ws {
		if !loadgen.IsConsume(w.scenario) {
			continue
		}
		n++
		if w.chart {
			charts++
			if w.scenario != loadgen.ConsumePartition || w.size != 1024 || w.compression != "none" {
				t.Errorf("chart workload %s", w.id)
			}
		}
		if w.duration <= 0 {
			t.Errorf("%s has no duration", w.id)
		}
		args := (&bench{o: &options{partitions: 3}}).args(w, "b", "t")
		if !strings.Contains(strings.Join(args, " "), "-partitions 3") {
			t.Errorf("%s args %q lack -partitions", w.id, args)
		}
	}
	// 3 modes x 2 codecs x 2 sizes, one of them charted.
	if n != 12 || charts != 1 {
		t.Errorf("%d consumer workloads, %d charted", n, charts)
	}
	for _, c := range cases {
		if c.consume != (c.name == "upstream" || c.name == "fork" || c.name == "franz") {
			t.Errorf("case %s consume=%v", c.name, c.consume)
		}
	}
}
