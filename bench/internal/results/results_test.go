package results

import (
	"math"
	"strings"
	"testing"

	"github.com/segmentio/kafka-go/bench/clients/loadgen"
)

func TestParse(t *testing.T) {
	out := "some library log line\n\n" +
		`{"client":"fork","scenario":"throughput","messages":1000,"size":100,"compression":"zstd",` +
		`"settings":"Writer{...}","produced":1000,"acked":1000,"failed":0,"elapsed_sec":0.5,` +
		`"peak_heap_bytes":1048576,"peak_buffered":40}` + "\n"
	r, err := Parse([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if r.Client != "fork" || r.Scenario != "throughput" || r.Messages != 1000 || r.Size != 100 ||
		r.Compression != "zstd" || r.Acked != 1000 || r.ElapsedSec != 0.5 || r.PeakHeapBytes != 1<<20 || r.PeakBuffered != 40 {
		t.Fatalf("decoded %+v", r)
	}
	if err := Check(r); err != nil {
		t.Fatalf("Check: %v", err)
	}

	run := Run{Result: r, CPUSec: 0.25, WallSec: 1, BrokerCPUSec: 0.5}
	if got := run.MsgsPerSec(); got != 2000 {
		t.Errorf("MsgsPerSec = %v", got)
	}
	if got := run.MBPerSec(); got != 0.2 {
		t.Errorf("MBPerSec = %v", got)
	}
	if got := run.CPUPerMillion(); got != 250 {
		t.Errorf("CPUPerMillion = %v", got)
	}
	if got := run.BrokerCores(); got != 0.5 {
		t.Errorf("BrokerCores = %v", got)
	}
	run.BrokerCPUSec = -1
	if !math.IsNaN(run.BrokerCores()) {
		t.Error("unknown broker CPU not NaN")
	}
}

func TestParseRejects(t *testing.T) {
	for name, out := range map[string]string{
		"empty":         "",
		"blank":         "\n\n  \n",
		"not json":      "panic: boom\n",
		"truncated":     `{"client":"fork","scenario":"throughput","messages":10`,
		"unknown field": `{"client":"fork","scenario":"throughput","bogus":1}`,
		"wrong type":    `{"client":"fork","scenario":"throughput","messages":"ten"}`,
		"trailing":      `{"client":"fork","scenario":"throughput"} {"x":1}`,
		"no scenario":   `{"client":"fork"}`,
		"json not last": `{"client":"fork","scenario":"throughput"}` + "\nexiting\n",
		"array not obj": `[1,2]`,
	} {
		if _, err := Parse([]byte(out)); err == nil {
			t.Errorf("%s: Parse(%q) accepted", name, out)
		}
	}
}

func TestCheck(t *testing.T) {
	ok := loadgen.Result{Client: "c", Scenario: loadgen.Throughput, Messages: 10, Produced: 10, Acked: 10, ElapsedSec: 1}
	if err := Check(ok); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		mod  func(*loadgen.Result)
		want string
	}{
		"short":    {func(r *loadgen.Result) { r.Acked = 9 }, "acked 9 of 10"},
		"failed":   {func(r *loadgen.Result) { r.Failed = 1; r.FirstError = "boom" }, "boom"},
		"error":    {func(r *loadgen.Result) { r.FirstError = "close: x" }, "close: x"},
		"no time":  {func(r *loadgen.Result) { r.ElapsedSec = 0 }, "no measured time"},
		"too many": {func(r *loadgen.Result) { r.Acked = 11 }, "acked 11 > produced"},
		"latency":  {func(r *loadgen.Result) { r.Scenario = loadgen.Latency; r.LatenciesUS = []float64{1} }, "1 latencies for 10"},
		"slow":     {func(r *loadgen.Result) { r.Scenario = loadgen.SlowBroker; r.Acked = 0 }, "nothing acknowledged"},
		"samples":  {func(r *loadgen.Result) { r.Scenario = loadgen.SlowBroker }, "no heap samples"},
		"scenario": {func(r *loadgen.Result) { r.Scenario = "other" }, "unexpected scenario"},
	} {
		r := ok
		tc.mod(&r)
		err := Check(r)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Check = %v, want %q", name, err, tc.want)
		}
	}
	slow := ok
	slow.Scenario = loadgen.SlowBroker
	slow.Acked = 3 // still buffered at the end: fine for this scenario
	slow.Samples = []loadgen.Sample{{TMs: 0, HeapBytes: 1}}
	if err := Check(slow); err != nil {
		t.Errorf("slow run with messages still buffered rejected: %v", err)
	}
}

func TestFinish(t *testing.T) {
	r := Run{Result: loadgen.Result{LatenciesUS: []float64{5, 1, 3, 2, 4, 100, 6, 7, 8, 9}}}
	r.Finish()
	if r.P50US != 5 || r.P99US != 100 || r.LatenciesUS != nil {
		t.Fatalf("after Finish: p50 %v p99 %v raw %v", r.P50US, r.P99US, r.LatenciesUS)
	}
}

func TestLongestStall(t *testing.T) {
	r := Run{Result: loadgen.Result{Samples: []loadgen.Sample{
		{TMs: 0, Buffered: 0, Acked: 0},
		{TMs: 100, Buffered: 0, Acked: 0}, // nothing buffered: idle, not stalled
		{TMs: 200, Buffered: 5, Acked: 0},
		{TMs: 300, Buffered: 5, Acked: 0}, // stalled 200..500
		{TMs: 400, Buffered: 9, Acked: 0},
		{TMs: 500, Buffered: 9, Acked: 0},
		{TMs: 600, Buffered: 2, Acked: 7}, // progress
		{TMs: 700, Buffered: 2, Acked: 7}, // stalled 600..700
	}}}
	if got := r.LongestStallSec(); got != 0.3 {
		t.Fatalf("LongestStallSec = %v, want 0.3", got)
	}
	if got := (&Run{}).LongestStallSec(); got != 0 {
		t.Fatalf("no samples: %v", got)
	}
}
