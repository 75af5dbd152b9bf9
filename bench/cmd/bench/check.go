package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/segmentio/kafka-go/bench/internal/report"
	"github.com/segmentio/kafka-go/bench/internal/results"
)

// check tells whether the broker limits throughput: franz-go (the fastest
// client in practice) alone, then two franz-go processes at once with half
// the messages each, rounds alternating. If two producers do not get more
// through than one, the broker side (or the CPU it shares) is the limit.
func (b *bench) check(ctx context.Context) *report.Check {
	w := workloads(b.o)[0] // the small-message, uncompressed throughput workload
	// Runs of well under a second are dominated by process start and
	// connection set-up, which would hide the effect of a second producer.
	w.messages = max(w.messages, 1_000_000)
	w.id = "check"
	c := &report.Check{Client: "franz-go", Messages: w.messages, Size: w.size, Cores: runtime.NumCPU()}
	franz := caseByName("franz")
	// The first run of a session is slower (cold caches, binaries paged
	// in); it is not counted.
	b.runCase(ctx, w, franz, 0)
	for round := 1; round <= max(b.o.rounds, 2); round++ {
		r := b.runCase(ctx, w, franz, round)
		r.Workload = "check-1"
		c.Single = append(c.Single, r)

		m0 := readMachineCPU()
		pair, wall, brokerCPU, err := b.pair(ctx, w)
		machine := m0.busyCoresSince(readMachineCPU())
		if err != nil {
			b.fails = append(b.fails, fmt.Sprintf("bottleneck check, two producers, round %d: %v", round, err))
			continue
		}
		logf("check: two producers: %d+%d msgs in %.2fs wall, broker CPU %.2fs", pair[0].Acked, pair[1].Acked, wall, brokerCPU)
		c.Pairs = append(c.Pairs, pair)
		c.PairWallSec = append(c.PairWallSec, wall)
		c.PairBrokerCPUSec = append(c.PairBrokerCPUSec, brokerCPU)
		c.PairMachineBusy = append(c.PairMachineBusy, machine)
	}
	return c
}

// pair runs two franz-go producers at once against one cluster.
func (b *bench) pair(ctx context.Context, w workload) ([2]results.Run, float64, float64, error) {
	var out [2]results.Run
	t, err := b.target(ctx, false)
	if err != nil {
		return out, 0, 0, err
	}
	defer t.close()
	topic, err := b.newTopic(ctx, t, "check")
	if err != nil {
		return out, 0, 0, err
	}
	half := w
	half.messages = w.messages / 2
	args := b.args(half, t.brokers, topic)
	broker0 := t.cl.cpuSec()
	var wg sync.WaitGroup
	var crs [2]childResult
	for i := range crs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The broker CPU of each child's window overlaps; it is taken
			// for the pair as a whole below.
			crs[i] = b.child(ctx, &target{brokers: t.brokers}, b.bins.clients["franz"], args, timeoutOf(w))
		}()
	}
	wg.Wait()
	brokerCPU := -1.0
	if broker1 := t.cl.cpuSec(); broker0 >= 0 && broker1 >= 0 {
		brokerCPU = broker1 - broker0
	}
	wall := max(crs[0].wall, crs[1].wall)
	for i, cr := range crs {
		r := results.Run{Case: "franz", Workload: "check-2", Round: i + 1, CPUSec: cr.cpu, MaxRSSBytes: cr.rss, WallSec: cr.wall, BrokerCPUSec: -1}
		if cr.err != nil {
			return out, 0, 0, fmt.Errorf("producer %d: %v", i+1, cr.err)
		}
		res, err := results.Parse(cr.stdout)
		if err == nil {
			err = results.Check(res)
		}
		if err != nil {
			return out, 0, 0, fmt.Errorf("producer %d: %v", i+1, err)
		}
		r.Result = res
		out[i] = r
	}
	return out, wall, brokerCPU, nil
}

// machineCPU is the aggregate line of /proc/stat: jiffies spent busy and
// in total by all CPUs, so that the check also sees load from processes
// that are not ours (other jobs on a shared machine).
type machineCPU struct {
	busy, total uint64
	ok          bool
}

func readMachineCPU() machineCPU {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return machineCPU{}
	}
	return parseMachineCPU(string(b))
}

func parseMachineCPU(stat string) machineCPU {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return machineCPU{}
	}
	var m machineCPU
	for i, v := range f[1:] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return machineCPU{}
		}
		// Fields: user nice system idle iowait irq softirq steal guest
		// guest_nice; guest time is already counted in user and nice.
		if i >= 8 {
			break
		}
		m.total += n
		if i != 3 && i != 4 {
			m.busy += n
		}
	}
	m.ok = true
	return m
}

// busyCoresSince is the average number of busy CPUs between m and later;
// -1 when unknown.
func (m machineCPU) busyCoresSince(later machineCPU) float64 {
	if !m.ok || !later.ok || later.total <= m.total {
		return -1
	}
	return float64(later.busy-m.busy) / float64(later.total-m.total) * float64(runtime.NumCPU())
}
