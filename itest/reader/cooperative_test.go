package reader

import (
	"context"
	"sync"
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"
)

// arrivals records, per reader and partition, the offsets read in order
// and when each new highest offset of a partition arrived.
type arrivals struct {
	mu      sync.Mutex
	offsets map[string]map[int][]int64
	high    map[int]int64
	times   map[int][]time.Time
}

func newArrivals() *arrivals {
	return &arrivals{offsets: map[string]map[int][]int64{}, high: map[int]int64{}, times: map[int][]time.Time{}}
}

func (a *arrivals) add(name string, m kafka.Message) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.offsets[name] == nil {
		a.offsets[name] = map[int][]int64{}
	}
	a.offsets[name][m.Partition] = append(a.offsets[name][m.Partition], m.Offset)
	if h, ok := a.high[m.Partition]; !ok || m.Offset > h {
		a.high[m.Partition] = m.Offset
		a.times[m.Partition] = append(a.times[m.Partition], time.Now())
	}
}

// longestGap is, per partition, the longest time after since without a
// new highest offset.
func (a *arrivals) longestGap(since time.Time) map[int]time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	gaps := map[int]time.Duration{}
	for p, ts := range a.times {
		last := since
		for _, t := range ts {
			if t.Before(since) {
				continue
			}
			if d := t.Sub(last); d > gaps[p] {
				gaps[p] = d
			}
			last = t
		}
	}
	return gaps
}

// fetchOnly reads with r until ctx ends, without committing: a partition
// reader that restarted would read its partition again from the start.
func fetchOnly(ctx context.Context, name string, r *kafka.Reader, a *arrivals, wg *sync.WaitGroup) {
	defer wg.Done()
	for {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			return
		}
		a.add(name, m)
	}
}

// While records arrive every few ms on 6 partitions read by a group of
// two, a third member joins. With the cooperative-sticky balancer, the
// partitions that stay with their member are never stopped: nothing of
// them is read twice by that member (no commits are made, so a restarted
// partition reader would start over from offset 0), and each member ends
// with two partitions; every record is read. The longest pause of each
// partition during the join is logged next to the eager balancer's.
func TestCooperativeRebalanceKeepsReading(t *testing.T) {
	for _, tc := range []struct {
		name     string
		balancer kafka.GroupBalancer
	}{
		{"cooperative-sticky", kafka.CooperativeStickyGroupBalancer{}},
		{"range", kafka.RangeGroupBalancer{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			coop := tc.name == "cooperative-sticky"
			const topic, group, partitions = "coop", "coop-group", 6
			addrs, _ := startCluster(t, topic, partitions)
			cl := newProducer(t, addrs)
			a := newArrivals()
			opt := func(c *kafka.ReaderConfig) { c.GroupBalancers = []kafka.GroupBalancer{tc.balancer} }
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			var readers []*kafka.Reader
			start := func(name string) {
				r := groupReader(addrs, group, topic, opt)
				readers = append(readers, r)
				wg.Add(1)
				go fetchOnly(ctx, name, r, a, &wg)
			}
			start("a")
			start("b")
			waitStable(t, cl, group, topic, 2, partitions)
			prod := produceSteadily(t, cl, topic, partitions)
			waitFor(t, "every partition read", func() bool {
				a.mu.Lock()
				defer a.mu.Unlock()
				return len(a.high) == partitions
			})
			before := describeGroup(context.Background(), t, cl, group, topic)
			joined := time.Now()
			start("c")
			after := waitStable(t, cl, group, topic, 3, partitions)
			time.Sleep(time.Second) // records keep coming after the rebalance
			n := prod.stop()
			waitFor(t, "every record read", func() bool {
				a.mu.Lock()
				defer a.mu.Unlock()
				for p := 0; p < partitions; p++ {
					if a.high[p] < int64(n-1) {
						return false
					}
				}
				return true
			})
			gaps := a.longestGap(joined)
			cancel()
			wg.Wait()
			for _, r := range readers {
				r.Close()
			}
			t.Logf("%s: longest pause per partition after the third member joined: %v", tc.name, gaps)

			// Partitions kept by a and b: read by the same member before
			// and after; each offset once by it.
			kept := 0
			a.mu.Lock()
			defer a.mu.Unlock()
			for member, parts := range before.members {
				for _, p := range parts {
					stayed := false
					for _, q := range after.members[member] {
						stayed = stayed || q == p
					}
					if !stayed {
						continue
					}
					kept++
					for name := range a.offsets {
						offs := a.offsets[name][int(p)]
						seen := map[int64]bool{}
						for _, o := range offs {
							if seen[o] && coop {
								t.Errorf("member %s read partition %d offset %d twice: its partition reader restarted", name, p, o)
							}
							seen[o] = true
						}
					}
				}
			}
			if coop && kept != 4 {
				t.Errorf("%d partitions stayed with their member, want 4 (before %v, after %v)", kept, before.members, after.members)
			}
		})
	}
}
