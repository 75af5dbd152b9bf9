package report

import (
	"strings"
	"testing"

	"github.com/segmentio/kafka-go/bench/internal/results"
)

func TestRewriteBlocks(t *testing.T) {
	blocks := map[string]string{"a": "new A", "b": "| x |\n| y |"}
	in := "text 1\n<!-- bench:a -->\nold A\n<!-- /bench:a -->\nmiddle\n<!-- bench:b -->\n<!-- /bench:b -->\nend\n"
	out, err := RewriteBlocks(in, blocks)
	if err != nil {
		t.Fatal(err)
	}
	want := "text 1\n<!-- bench:a -->\nnew A\n<!-- /bench:a -->\nmiddle\n<!-- bench:b -->\n| x |\n| y |\n<!-- /bench:b -->\nend\n"
	if out != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	again, err := RewriteBlocks(out, blocks)
	if err != nil || again != out {
		t.Fatalf("a rewritten text changes again: %v\n%s", err, again)
	}
	for name, bad := range map[string]string{
		"unknown":  "<!-- bench:zzz -->\nx\n<!-- /bench:zzz -->",
		"mismatch": "<!-- bench:a -->\nx\n<!-- /bench:b -->",
		"unclosed": "<!-- bench:a -->\nx\n",
	} {
		if _, err := RewriteBlocks(bad, blocks); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// A figure missing from the run is written as n/a, never as a number
// (a quick run without the slow scenario must not look like a result).
func TestDocBlocksMissingFigures(t *testing.T) {
	runs := []results.Run{{Case: "fork-n", Workload: "latency", P50US: 210, P99US: 420}}
	blocks := DocBlocks(runs)
	if got := blocks["latency"]; !strings.Contains(got, "0.210 / 0.420 for the bounded fork") || !strings.Contains(got, "n/a / n/a for upstream") {
		t.Fatalf("latency block: %s", got)
	}
	if got := blocks["slow-summary"]; strings.Count(got, "n/a") < 8 {
		t.Fatalf("slow-summary without slow runs: %s", got)
	}
}
