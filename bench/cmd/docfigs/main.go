// Command docfigs checks (by default) or rewrites (-write) the blocks of
// README.md, CONTRIBUTING.md and docs/ that quote the committed benchmark
// run, against docs/bench/results.json. `make docs-check`, part of `make
// lint`, runs it; the bench tool rewrites the blocks itself after a run.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/segmentio/kafka-go/bench/internal/report"
)

func main() {
	write := flag.Bool("write", false, "rewrite the blocks instead of checking them")
	repo := flag.String("repo", "..", "the repository root")
	flag.Parse()
	stale, err := report.SyncDocs(*repo, *write)
	if err != nil {
		fmt.Fprintln(os.Stderr, "docfigs:", err)
		os.Exit(1)
	}
	if len(stale) > 0 && !*write {
		for _, f := range stale {
			rel, _ := filepath.Rel(*repo, f)
			fmt.Fprintf(os.Stderr, "docfigs: %s quotes figures that differ from docs/bench/results.json\n", rel)
		}
		fmt.Fprintln(os.Stderr, "docfigs: run `cd bench && go run ./cmd/docfigs -write` (or rerun the benchmark)")
		os.Exit(1)
	}
}
