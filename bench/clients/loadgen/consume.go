package loadgen

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Consumer scenarios. The topic is filled beforehand (by the bench tool,
// with the franz load generator); the consumer reads it from the start.
const (
	// ConsumePartition reads every partition of the topic with a
	// partition consumer (kafka-go: one Reader per partition, ReadMessage).
	ConsumePartition = "consume-partition"
	// ConsumeGroupRead reads as a consumer group member whose offsets are
	// committed periodically (kafka-go: ReadMessage, CommitInterval 1s).
	ConsumeGroupRead = "consume-group-read"
	// ConsumeGroupCommit reads as a group member that commits itself,
	// synchronously, every CommitEvery messages (kafka-go: FetchMessage
	// and CommitMessages).
	ConsumeGroupCommit = "consume-group-commit"
)

// IsConsume reports whether scenario is one of the consumer scenarios.
func IsConsume(scenario string) bool {
	switch scenario {
	case ConsumePartition, ConsumeGroupRead, ConsumeGroupCommit:
		return true
	}
	return false
}

// Delivery is called for every message a Consumer returns, possibly from
// several goroutines at once.
type Delivery func(partition int32, offset int64, size int)

// Consumer reads until its context ends.
type Consumer interface {
	// Run calls deliver for every message read, until ctx ends (nil) or
	// reading fails (the error).
	Run(ctx context.Context, deliver Delivery) error
	Close() error
	Settings() string
}

// ConsumerClient builds consumers for one client library.
type ConsumerClient interface {
	Consumer(cfg Config) (Consumer, error)
}

// progress counts how far the partitions have been read: the sum over the
// partitions of the highest offset delivered + 1. A prefilled topic of N
// messages (offsets 0..n-1 in each partition) is read to its end when the
// sum reaches N, however often a rebalance made members read a message
// again.
type progress struct {
	high      []atomic.Int64
	sum       atomic.Int64
	delivered atomic.Int64
	bytes     atomic.Int64
}

func newProgress(partitions int) *progress {
	return &progress{high: make([]atomic.Int64, partitions)}
}

// deliver records one message and returns the new sum.
func (p *progress) deliver(partition int32, offset int64, size int) (int64, error) {
	p.delivered.Add(1)
	p.bytes.Add(int64(size))
	if partition < 0 || int(partition) >= len(p.high) {
		return p.sum.Load(), fmt.Errorf("message from partition %d of a %d-partition topic", partition, len(p.high))
	}
	h := &p.high[partition]
	for {
		cur := h.Load()
		if offset+1 <= cur {
			return p.sum.Load(), nil
		}
		if h.CompareAndSwap(cur, offset+1) {
			return p.sum.Add(offset + 1 - cur), nil
		}
	}
}

// cpuSelf is this process's CPU time so far (user + system).
func cpuSelf() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// runConsume reads the prefilled topic to its end with one member, then,
// for the group scenarios, starts a second member of the same group while
// a trickle of new messages arrives and measures how long the second one
// takes to get its first message (the rebalance as the program sees it).
//
// The CPU figure is taken when the first member has read everything, so
// that the rebalance phase is not counted in the CPU per message.
func runConsume(ctx context.Context, cfg Config, c Client, res *Result) error {
	cc, ok := c.(ConsumerClient)
	if !ok {
		return fmt.Errorf("client %s has no consumer", cfg.Client)
	}
	if cfg.Partitions < 1 {
		return errors.New("-partitions must be positive")
	}
	if cfg.MemProfile != "" {
		runtime.MemProfileRate = 64 << 10
	}
	prog := newProgress(cfg.Partitions)
	total := int64(cfg.Messages)
	s := startSampler(cfg.SampleEvery, &counters{}, cfg.KeepSamples)

	var (
		firstOnce sync.Once
		first     time.Time
		doneOnce  sync.Once
		done      = make(chan struct{})
		doneAt    time.Time
		profOnce  sync.Once
		profErr   error
		failOnce  sync.Once
		failErr   error
	)
	profDone := make(chan struct{})
	if cfg.MemProfile == "" {
		close(profDone)
	}
	deliver1 := func(partition int32, offset int64, size int) {
		firstOnce.Do(func() { first = time.Now() })
		sum, err := prog.deliver(partition, offset, size)
		if err != nil {
			failOnce.Do(func() { failErr = err })
		}
		if cfg.MemProfile != "" && sum >= total/2 {
			// The heap half way through: what a reader holds while busy.
			profOnce.Do(func() {
				go func() {
					defer close(profDone)
					profErr = writeHeapProfile(cfg.MemProfile)
				}()
			})
		}
		if sum >= total {
			doneOnce.Do(func() {
				doneAt = time.Now()
				close(done)
			})
		}
	}

	start := time.Now()
	c1, err := cc.Consumer(cfg)
	if err != nil {
		return err
	}
	res.Settings = c1.Settings()
	ctx1, stop1 := context.WithCancel(ctx)
	defer stop1()
	run1 := make(chan error, 1)
	go func() { run1 <- c1.Run(ctx1, deliver1) }()

	timeout := time.NewTimer(cfg.Duration)
	defer timeout.Stop()
	select {
	case <-done:
	case err := <-run1:
		if err == nil {
			err = errors.New("consumer stopped before reading everything")
		}
		return fmt.Errorf("after %d of %d messages: %w", prog.sum.Load(), total, err)
	case <-timeout.C:
		return fmt.Errorf("read %d of %d messages in %s", prog.sum.Load(), total, cfg.Duration)
	}
	res.ReadCPUSec = cpuSelf()
	// A CPU profile covers what ReadCPUSec counts, not the rebalance
	// measured next (a no-op without -cpuprofile; Main's stop then is too).
	pprof.StopCPUProfile()
	res.FirstMessageMs = float64(first.Sub(start).Microseconds()) / 1e3
	res.ElapsedSec = doneAt.Sub(first).Seconds()
	<-profDone
	s.stop(res)
	res.Acked = prog.sum.Load()
	res.Produced = prog.delivered.Load()
	if failErr != nil {
		res.FirstError = failErr.Error()
		res.Failed = 1
	}
	if profErr != nil {
		return fmt.Errorf("memprofile: %w", profErr)
	}

	if cfg.Scenario != ConsumePartition {
		ms, err := measureRebalance(ctx, cfg, c, cc)
		if err != nil {
			res.RebalanceError = err.Error()
		} else {
			res.RebalanceMs = ms
		}
	}
	stop1()
	// The first member's error after its context ended is of no interest:
	// the rebalance may have failed some of its commits on purpose.
	<-run1
	if err := c1.Close(); err != nil && res.FirstError == "" {
		res.FirstError = "close: " + err.Error()
	}
	return nil
}

// measureRebalance starts a second member of the group, with one message
// written every 10 ms, and returns the milliseconds from its creation to
// its first message.
func measureRebalance(ctx context.Context, cfg Config, c Client, cc ConsumerClient) (float64, error) {
	pcfg := cfg
	pcfg.Compression = "none"
	pcfg.RoundRobin = true
	prod, err := c.Sync(pcfg)
	if err != nil {
		return 0, fmt.Errorf("trickle producer: %w", err)
	}
	defer prod.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	var prodErr atomic.Value
	wg.Add(1)
	go func() {
		defer wg.Done()
		vals := newValues(16)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			if err := prod.Send(ctx, vals.next()); err != nil && ctx.Err() == nil {
				prodErr.CompareAndSwap(nil, err.Error())
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()

	start := time.Now()
	c2, err := cc.Consumer(cfg)
	if err != nil {
		return 0, fmt.Errorf("second member: %w", err)
	}
	defer c2.Close()
	got := make(chan time.Time, 1)
	run2 := make(chan error, 1)
	go func() {
		run2 <- c2.Run(ctx, func(int32, int64, int) {
			select {
			case got <- time.Now():
			default:
			}
		})
	}()
	stopped := false
	defer func() {
		cancel()
		if !stopped {
			<-run2
		}
	}()
	select {
	case t := <-got:
		return float64(t.Sub(start).Microseconds()) / 1e3, nil
	case err := <-run2:
		stopped = true
		return 0, fmt.Errorf("second member stopped: %v", err)
	case <-ctx.Done():
		if e, _ := prodErr.Load().(string); e != "" {
			return 0, fmt.Errorf("second member got no message in 2m (trickle producer: %s)", e)
		}
		return 0, errors.New("second member got no message in 2m")
	}
}

func writeHeapProfile(path string) error {
	runtime.GC() // make the in-use figures current
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
