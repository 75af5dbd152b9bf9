package faults_test

import (
	"strings"
	"testing"
)

// The checker itself: each broken promise is caught.
func TestFindProblems(t *testing.T) {
	rec := func(producer, seq int) logRecord { return logRecord{id: msgID{producer, seq}} }
	ledgerOf := func(outcomes map[msgID]outcome) *ledger { return &ledger{outcomes: outcomes} }
	ok := map[msgID]outcome{{0, 0}: delivered, {0, 1}: unknownOutcome, {1, 0}: failed, {0, 2}: refused}
	for _, tc := range []struct {
		name    string
		log     []logRecord
		dups    int
		want    string
		dupRuns int
	}{
		{"clean", []logRecord{rec(0, 0), rec(1, 0), rec(0, 1)}, 0, "", 0},
		{"failed may be missing", []logRecord{rec(0, 0), rec(0, 1)}, 0, "", 0},
		{"lost", []logRecord{rec(0, 0)}, 0, "not in the log", 0},
		{"refused written", []logRecord{rec(0, 0), rec(0, 1), rec(0, 2)}, 0, "refused", 0},
		{"order", []logRecord{rec(0, 1), rec(0, 0)}, 0, "order broken", 0},
		{"stranger", []logRecord{rec(0, 0), rec(0, 1), rec(5, 5)}, 0, "never written", 0},
		{"duplicate allowed", []logRecord{rec(0, 0), rec(0, 1), rec(0, 0), rec(0, 1)}, 1, "", 1},
		{"duplicate not allowed", []logRecord{rec(0, 0), rec(0, 1), rec(0, 1)}, 0, "runs of duplicates", 1},
		{"two runs", []logRecord{rec(0, 0), rec(0, 0), rec(0, 1), rec(0, 1)}, 1, "runs of duplicates", 2},
		{"resent twice", []logRecord{rec(0, 0), rec(0, 1), rec(0, 0), rec(0, 1), rec(0, 0), rec(0, 1), rec(1, 0)}, 2, "", 1},
		{"resent late", []logRecord{rec(0, 0), rec(1, 0), rec(0, 0)}, 1, "do not repeat the batch", 1},
		{"resent in part", []logRecord{rec(0, 0), rec(0, 1), rec(0, 1), rec(1, 0)}, 1, "", 1},
		{"resent in part, then more", []logRecord{rec(0, 0), rec(0, 1), rec(0, 0), rec(1, 0)}, 1, "do not repeat the batch", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, problems := findProblems(ledgerOf(ok), map[int32][]logRecord{0: tc.log}, tc.dups)
			got := strings.Join(problems, "\n")
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Fatalf("problems %q, want one containing %q", got, tc.want)
			}
			if v.dupRuns != tc.dupRuns {
				t.Fatalf("%d duplicate runs, want %d", v.dupRuns, tc.dupRuns)
			}
		})
	}
}
