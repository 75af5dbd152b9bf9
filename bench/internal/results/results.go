// Package results holds what the bench tool knows about each run of a load
// generator: the JSON the child printed, decoded and checked, plus what the
// parent measured from outside (CPU time, peak RSS, broker CPU).
package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/segmentio/kafka-go/bench/clients/loadgen"
	"github.com/segmentio/kafka-go/bench/internal/stats"
)

// Run is one execution of one client case on one workload.
type Run struct {
	Case     string `json:"case"`     // e.g. "fork-n"
	Workload string `json:"workload"` // e.g. "throughput 1M x 100 B none"
	Round    int    `json:"round"`

	loadgen.Result

	// Measured by the parent from the child's rusage.
	CPUSec      float64 `json:"cpu_sec"`
	MaxRSSBytes int64   `json:"max_rss_bytes"`
	WallSec     float64 `json:"wall_sec"`
	// BrokerCPUSec is the embedded cluster's CPU time over the child's
	// lifetime; negative when unknown (external brokers).
	BrokerCPUSec float64 `json:"broker_cpu_sec"`

	P50US float64 `json:"p50_us,omitempty"`
	P99US float64 `json:"p99_us,omitempty"`

	// Err is set when the run did not produce a usable result.
	Err string `json:"error,omitempty"`
}

// Parse decodes a load generator's standard output: the result is the last
// non-empty line, a JSON object (anything a client library printed before
// it is ignored).
func Parse(stdout []byte) (loadgen.Result, error) {
	var res loadgen.Result
	lines := bytes.Split(bytes.TrimSpace(stdout), []byte("\n"))
	last := bytes.TrimSpace(lines[len(lines)-1])
	if len(last) == 0 {
		return res, errors.New("no output")
	}
	if last[0] != '{' {
		return res, fmt.Errorf("last output line is not a JSON object: %.80q", last)
	}
	dec := json.NewDecoder(bytes.NewReader(last))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		return res, fmt.Errorf("decoding result: %w", err)
	}
	if dec.More() {
		return res, errors.New("trailing data after the result object")
	}
	if res.Scenario == "" || res.Client == "" {
		return res, errors.New("result has no client or scenario")
	}
	return res, nil
}

// Check reports why a decoded result cannot be used for the table, or nil.
// Throughput and latency runs must have written every message without an
// error; a slow-broker run must have written something and failed nothing
// (it ends while messages are still buffered, by design).
func Check(r loadgen.Result) error {
	switch {
	case r.Failed > 0:
		return fmt.Errorf("%d messages failed: %s", r.Failed, r.FirstError)
	case r.FirstError != "":
		return errors.New(r.FirstError)
	case r.Acked > r.Produced:
		return fmt.Errorf("acked %d > produced %d", r.Acked, r.Produced)
	case r.ElapsedSec <= 0:
		return errors.New("no measured time")
	}
	switch r.Scenario {
	case loadgen.Throughput:
		if r.Acked != int64(r.Messages) {
			return fmt.Errorf("acked %d of %d messages", r.Acked, r.Messages)
		}
	case loadgen.Latency:
		if len(r.LatenciesUS) != r.Messages {
			return fmt.Errorf("%d latencies for %d messages", len(r.LatenciesUS), r.Messages)
		}
	case loadgen.ConsumePartition, loadgen.ConsumeGroupRead, loadgen.ConsumeGroupCommit:
		if r.Acked != int64(r.Messages) {
			return fmt.Errorf("read %d of %d messages", r.Acked, r.Messages)
		}
		if r.ReadCPUSec <= 0 {
			return errors.New("no CPU time measured")
		}
	case loadgen.Idle:
		if r.Acked != 1 || r.FirstAckMs <= 0 {
			return fmt.Errorf("acked %d, first ack after %.1f ms: want one message acknowledged", r.Acked, r.FirstAckMs)
		}
		if r.IdleCPUSec <= 0 || r.IdleRSSBytes <= 0 {
			return errors.New("no idle CPU time or RSS measured")
		}
	case loadgen.SlowBroker:
		if r.Acked == 0 {
			return errors.New("nothing acknowledged under the slow broker")
		}
		if len(r.Samples) == 0 {
			return errors.New("no heap samples")
		}
	default:
		return fmt.Errorf("unexpected scenario %q", r.Scenario)
	}
	return nil
}

// OK reports whether the run is usable.
func (r *Run) OK() bool { return r.Err == "" }

// Finish computes the derived latency fields and drops the raw samples,
// which are too many to keep in the results file.
func (r *Run) Finish() {
	if len(r.LatenciesUS) > 0 {
		r.P50US = stats.Percentile(r.LatenciesUS, 50)
		r.P99US = stats.Percentile(r.LatenciesUS, 99)
		r.LatenciesUS = nil
	}
}

// MsgsPerSec is the acknowledged message rate over the measured window.
func (r *Run) MsgsPerSec() float64 { return div(float64(r.Acked), r.ElapsedSec) }

// MBPerSec is the acknowledged value payload in MB (10^6 bytes) per second.
func (r *Run) MBPerSec() float64 {
	return div(float64(r.Acked)*float64(r.Size)/1e6, r.ElapsedSec)
}

// CPUPerMillion is the child's CPU seconds per million acknowledged (or,
// for consumers, read) messages; see ClientCPUSec.
func (r *Run) CPUPerMillion() float64 { return div(r.ClientCPUSec(), float64(r.Acked)/1e6) }

// ClientCPUSec is the child's CPU time (user + system): its whole lifetime
// for producers; for consumers, up to the last message of the topic, as
// the child measured it (the rebalance phase that follows is not counted).
func (r *Run) ClientCPUSec() float64 {
	if r.ReadCPUSec > 0 {
		return r.ReadCPUSec
	}
	return r.CPUSec
}

// BrokerCores is the broker's average CPU use, in cores, while the child ran.
func (r *Run) BrokerCores() float64 {
	if r.BrokerCPUSec < 0 {
		return math.NaN()
	}
	return div(r.BrokerCPUSec, r.WallSec)
}

func div(a, b float64) float64 {
	if b <= 0 {
		return math.NaN()
	}
	return a / b
}

// LongestStallSec is the longest stretch of the sample series during which
// messages were buffered and none was acknowledged: a client that stops
// making progress shows up here rather than as a flattering flat heap line.
func (r *Run) LongestStallSec() float64 {
	longest, start := 0.0, -1.0
	for i, s := range r.Samples {
		if i > 0 && s.Acked == r.Samples[i-1].Acked && r.Samples[i-1].Buffered > 0 {
			if start < 0 {
				start = r.Samples[i-1].TMs
			}
			longest = max(longest, (s.TMs-start)/1e3)
		} else {
			start = -1
		}
	}
	return longest
}

// ReadFile reads the runs of a results.json written by the bench tool.
func ReadFile(path string) ([]Run, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var file struct {
		Runs []Run `json:"runs"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(file.Runs) == 0 {
		return nil, fmt.Errorf("%s: no runs", path)
	}
	return file.Runs, nil
}
