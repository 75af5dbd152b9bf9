package loadgen

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Idle is the idle scenario: a producer writes one message (the time to
// its acknowledgement is measured from the producer's creation), a
// consumer of partition 0 starts, and both stay idle for Duration: what
// the process spends meanwhile (CPU, RSS) is what the client costs at
// rest, metadata refreshes included. Run on clusters of different sizes,
// it shows whether that cost depends on topics the program does not use.
const Idle = "idle"

func runIdle(ctx context.Context, cfg Config, c Client, res *Result) error {
	cc, ok := c.(ConsumerClient)
	if !ok {
		return fmt.Errorf("client %s has no consumer", cfg.Client)
	}
	var cnt counters
	s := startSampler(cfg.SampleEvery, &cnt, false)
	start := time.Now()
	p, err := c.Sync(cfg)
	if err != nil {
		return err
	}
	if err := p.Send(ctx, newValues(cfg.Size).next()); err != nil {
		return fmt.Errorf("first write: %w", err)
	}
	res.FirstAckMs = float64(time.Since(start).Microseconds()) / 1e3
	cnt.produced.Add(1)
	cnt.acked.Add(1)
	res.Settings = p.Settings()

	ccfg := cfg
	ccfg.Scenario, ccfg.Partitions = ConsumePartition, 1
	cons, err := cc.Consumer(ccfg)
	if err != nil {
		return err
	}
	res.Settings += "; " + cons.Settings() + " (partition 0)"
	rctx, stopReading := context.WithCancel(ctx)
	read := make(chan error, 1)
	go func() { read <- cons.Run(rctx, func(int32, int64, int) {}) }()

	cpu0 := cpuSelf()
	t0 := time.Now()
	select {
	case <-time.After(cfg.Duration):
	case err := <-read:
		stopReading()
		return fmt.Errorf("the consumer stopped while idle: %v", err)
	}
	res.IdleCPUSec = cpuSelf() - cpu0
	res.ElapsedSec = time.Since(t0).Seconds()
	res.IdleRSSBytes = currentRSS()
	stopReading()
	<-read
	s.stop(res)
	cons.Close()
	p.Close()
	cnt.fill(res)
	return nil
}

// currentRSS is the process's resident set now (Linux; 0 elsewhere).
func currentRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}
