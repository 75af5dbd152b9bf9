package reader

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	kafka "github.com/segmentio/kafka-go"
)

// Tests of GroupProtocol "consumer" (KIP-848) on kfake, whose coordinator
// implements it: heartbeats every 100 ms, members expire after 6 s.

func start848(t *testing.T, topic string, partitions int) ([]string, *kfake.Cluster) {
	t.Helper()
	return startCluster(t, topic, partitions, kfake.BrokerConfigs(map[string]string{
		"group.consumer.heartbeat.interval.ms": "100",
		"group.consumer.session.timeout.ms":    "6000",
	}))
}

func consumerProtocol(c *kafka.ReaderConfig) {
	c.GroupProtocol = kafka.GroupProtocolConsumer
	c.HeartbeatInterval, c.SessionTimeout = 0, 0
}

func static848(id string) func(*kafka.ReaderConfig) {
	return func(c *kafka.ReaderConfig) { c.GroupInstanceID = id }
}

// member848 is a member of a "consumer" group as the coordinator describes
// it.
type member848 struct {
	instance   string
	epoch      int32
	partitions []int32 // of the test's one topic
	settled    bool    // partitions are the broker's target assignment
}

// describe848 returns the members of a "consumer" group by member ID.
func describe848(t *testing.T, admin *kgo.Client, group string) map[string]member848 {
	t.Helper()
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = []string{group}
	res, err := req.RequestWith(context.Background(), admin)
	if err != nil || len(res.Groups) != 1 {
		t.Fatalf("describe group: %v", err)
	}
	out := map[string]member848{}
	for _, m := range res.Groups[0].Members {
		mm := member848{epoch: m.MemberEpoch}
		if m.InstanceID != nil {
			mm.instance = *m.InstanceID
		}
		var target []int32
		for _, tp := range m.Assignment.TopicPartitions {
			mm.partitions = append(mm.partitions, tp.Partitions...)
		}
		for _, tp := range m.TargetAssignment.TopicPartitions {
			target = append(target, tp.Partitions...)
		}
		sort.Slice(mm.partitions, func(i, j int) bool { return mm.partitions[i] < mm.partitions[j] })
		sort.Slice(target, func(i, j int) bool { return target[i] < target[j] })
		mm.settled = fmt.Sprint(target) == fmt.Sprint(mm.partitions)
		out[m.MemberID] = mm
	}
	return out
}

// wait848 waits until the group has n members that own every one of
// partitions exactly once, as evenly as possible, each what the broker
// means it to have (no reconciliation under way), and returns them.
func wait848(t *testing.T, admin *kgo.Client, group string, n, partitions int) map[string]member848 {
	t.Helper()
	var last map[string]member848
	waitFor(t, "the group to settle", func() bool {
		last = describe848(t, admin, group)
		if len(last) != n {
			return false
		}
		byMember := map[string][]int32{}
		for id, m := range last {
			if !m.settled || len(m.partitions) < partitions/n || len(m.partitions) > (partitions+n-1)/n {
				return false
			}
			byMember[id] = m.partitions
		}
		return coversOnce(byMember, partitions)
	})
	return last
}

// One member reads and commits everything; Close leaves the group (a
// dynamic member, epoch -1), and the next member of the group starts
// after the last committed message.
func TestConsumerProtocolCommitsSurviveRestart(t *testing.T) {
	const topic, group, partitions, n = "kip848-resume", "kip848-resume-group", 3, 40
	addrs, _ := start848(t, topic, partitions)
	cl := newProducer(t, addrs)
	produce(t, cl, topic, partitions, n)

	c := newCollector()
	m := startMember(t, addrs, group, topic, "a", c, consumerProtocol)
	waitDistinct(t, c, partitions*n)
	for id, mm := range wait848(t, cl, group, 1, partitions) {
		if mm.epoch <= 0 {
			t.Fatalf("member %s: %+v", id, mm)
		}
	}
	m.stop()
	waitFor(t, "the member to leave", func() bool { return len(describe848(t, cl, group)) == 0 })

	produce(t, cl, topic, partitions, n) // offsets n..2n-1
	m2 := startMember(t, addrs, group, topic, "b", c, consumerProtocol)
	waitDistinct(t, c, 2*partitions*n)
	m2.stop()
	c.checkExactlyOnce(t, partitions, 0, 2*n)
	checkNoGoroutines(t)
}

// heartbeats848 records the member epoch and instance ID of every
// ConsumerGroupHeartbeat the cluster receives.
type heartbeats848 struct {
	mu   sync.Mutex
	sent []kmsg.ConsumerGroupHeartbeatRequest
}

func watch848(c *kfake.Cluster) *heartbeats848 {
	h := &heartbeats848{}
	c.ControlKey(int16(kmsg.ConsumerGroupHeartbeat), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		h.mu.Lock()
		h.sent = append(h.sent, *req.(*kmsg.ConsumerGroupHeartbeatRequest))
		h.mu.Unlock()
		return nil, nil, false
	})
	return h
}

// count counts the heartbeats of instance ("" for dynamic members) with
// member epoch epoch.
func (h *heartbeats848) count(instance string, epoch int32) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, r := range h.sent {
		id := ""
		if r.InstanceID != nil {
			id = *r.InstanceID
		}
		if id == instance && r.MemberEpoch == epoch {
			n++
		}
	}
	return n
}

// While records arrive every few ms on 6 partitions read by a group of
// two, a third member joins: the broker moves two partitions to it, the
// four others stay where they were and are never stopped (no commits are
// made, so a restarted partition reader would read its partition again
// from offset 0), and every record is read.
func TestConsumerProtocolMemberJoinsMidStream(t *testing.T) {
	const topic, group, partitions = "kip848-join", "kip848-join-group", 6
	addrs, _ := start848(t, topic, partitions)
	cl := newProducer(t, addrs)
	a := newArrivals()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var readers []*kafka.Reader
	start := func(name string) {
		r := groupReader(addrs, group, topic, consumerProtocol)
		readers = append(readers, r)
		wg.Add(1)
		go fetchOnly(ctx, name, r, a, &wg)
	}
	start("a")
	start("b")
	before := wait848(t, cl, group, 2, partitions)
	prod := produceSteadily(t, cl, topic, partitions)
	waitFor(t, "every partition read", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return len(a.high) == partitions
	})
	start("c")
	after := wait848(t, cl, group, 3, partitions)
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
	cancel()
	wg.Wait()
	for _, r := range readers {
		r.Close()
	}

	kept := 0
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, m := range before {
		for _, p := range m.partitions {
			stayed := false
			for _, q := range after[id].partitions {
				stayed = stayed || q == p
			}
			if !stayed {
				continue
			}
			kept++
			for name := range a.offsets {
				seen := map[int64]bool{}
				for _, o := range a.offsets[name][int(p)] {
					if seen[o] {
						t.Errorf("reader %s read partition %d offset %d twice: its partition reader restarted", name, p, o)
					}
					seen[o] = true
				}
			}
		}
	}
	if kept != 4 {
		t.Errorf("%d partitions stayed with their member, want 4 (before %v, after %v)", kept, before, after)
	}
	checkNoGoroutines(t)
}

// A dynamic member leaves with epoch -1 on Close, and the other member
// gets its partitions; a static one leaves with epoch -2.
func TestConsumerProtocolLeave(t *testing.T) {
	const topic, group, partitions = "kip848-leave", "kip848-leave-group", 4
	addrs, cluster := start848(t, topic, partitions)
	hb := watch848(cluster)
	cl := newProducer(t, addrs)
	c := newCollector()
	a := startMember(t, addrs, group, topic, "a", c, consumerProtocol)
	b := startMember(t, addrs, group, topic, "b", c, consumerProtocol)
	s := startMember(t, addrs, group, topic, "s", c, consumerProtocol, static848("s"))
	wait848(t, cl, group, 3, partitions)
	a.stop()
	if n := hb.count("", -1); n != 1 {
		t.Errorf("%d heartbeats with epoch -1 after a dynamic member closed, want 1", n)
	}
	s.stop()
	if n := hb.count("s", -2); n != 1 {
		t.Errorf("%d heartbeats with epoch -2 after a static member closed, want 1", n)
	}
	if n := hb.count("s", -1); n != 0 {
		t.Errorf("the static member left with epoch -1")
	}
	// s keeps its partitions for the session timeout; b gets a's.
	produce(t, cl, topic, partitions, 10)
	waitFor(t, "b reading", func() bool { return c.countBy("b") > 0 })
	b.stop()
	checkNoGoroutines(t)
}

// A group of three static members, one of which restarts with the same
// GroupInstanceID while records keep coming: it gets its partitions back,
// the two others are never handed a new assignment, and every record is
// read exactly once (all commit). A second process started with the
// GroupInstanceID of a running member is refused with
// UNRELEASED_INSTANCE_ID and stops, and the running member goes on.
func TestConsumerProtocolStaticRestart(t *testing.T) {
	const topic, group, partitions = "kip848-static", "kip848-static-group", 6
	addrs, _ := start848(t, topic, partitions)
	cl := newProducer(t, addrs)
	c := newCollector()
	members := map[string]*member{}
	for _, id := range []string{"a", "b", "c"} {
		members[id] = startMember(t, addrs, group, topic, id, c, consumerProtocol, static848(id))
	}
	byInstance := func() map[string][]int32 {
		out := map[string][]int32{}
		for _, m := range wait848(t, cl, group, 3, partitions) {
			out[m.instance] = m.partitions
		}
		return out
	}
	before := byInstance()
	prod := produceSteadily(t, cl, topic, partitions)
	waitFor(t, "each member reading", func() bool {
		return c.countBy("a") > 0 && c.countBy("b") > 0 && c.countBy("c") > 0
	})
	members["b"].r.Stats() // resets the counters
	members["c"].r.Stats()

	members["a"].stop()
	restarted := startMember(t, addrs, group, topic, "a2", c, consumerProtocol, static848("a"))
	waitFor(t, "the restarted member reading", func() bool { return c.countBy("a2") > 0 })
	if after := byInstance(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("assignments after the restart %v, before %v", after, before)
	}
	for _, id := range []string{"b", "c"} {
		if n := members[id].r.Stats().Rebalances; n != 0 {
			t.Errorf("member %s was handed %d assignments while a restarted", id, n)
		}
	}

	intruder := startMember(t, addrs, group, topic, "b2", c, consumerProtocol, static848("b"))
	select {
	case <-intruder.done:
	case <-time.After(30 * time.Second):
		t.Fatal("a second process with a running member's GroupInstanceID kept going")
	}
	if err := intruder.err; !errors.Is(err, kafka.UnreleasedInstanceID) || !strings.Contains(err.Error(), `GroupInstanceID "b"`) {
		t.Fatalf("second process stopped with %v", err)
	}
	readByB := c.countBy("b")
	waitFor(t, "b still reading", func() bool { return c.countBy("b") > readByB })

	n := prod.stop()
	waitDistinct(t, c, partitions*n)
	for _, m := range []*member{members["b"], members["c"], restarted, intruder} {
		m.stop()
	}
	c.checkExactlyOnce(t, partitions, 0, int64(n))
	checkNoGoroutines(t)
}

// A group shared by two kafka-go Readers and two franz-go consumers, all
// with the "consumer" protocol (franz-go: ServerSideBalancer): the broker
// spreads the partitions over the four, and once it settled, every record
// produced is read exactly once across them.
func TestConsumerProtocolMixedWithFranzGo(t *testing.T) {
	const topic, group, partitions, n = "kip848-mixed", "kip848-mixed-group", 8, 50
	addrs, _ := start848(t, topic, partitions)
	cl := newProducer(t, addrs)
	c := newCollector()
	uniform := func(cfg *kafka.ReaderConfig) { cfg.ServerAssignor = "uniform" }
	r1 := startMember(t, addrs, group, topic, "kafka-go-1", c, consumerProtocol, uniform)
	r2 := startMember(t, addrs, group, topic, "kafka-go-2", c, consumerProtocol, uniform)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, name := range []string{"franz-go-1", "franz-go-2"} {
		kc, err := kgo.NewClient(
			kgo.SeedBrokers(addrs...),
			kgo.ConsumerGroup(group),
			kgo.ConsumeTopics(topic),
			kgo.Balancers(kgo.StickyBalancer()),
			kgo.ServerSideBalancer(),
			kgo.FetchMaxWait(100*time.Millisecond),
		)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func(name string) {
			defer wg.Done()
			for ctx.Err() == nil {
				fetches := kc.PollFetches(ctx)
				fetches.EachRecord(func(rec *kgo.Record) {
					c.add(name, kafka.Message{Partition: int(rec.Partition), Offset: rec.Offset})
				})
				if err := kc.CommitUncommittedOffsets(ctx); err != nil && ctx.Err() == nil {
					t.Errorf("%s commit: %v", name, err)
				}
			}
		}(name)
		t.Cleanup(kc.Close)
	}
	members := wait848(t, cl, group, 4, partitions)
	for id, m := range members {
		if len(m.partitions) != partitions/4 {
			t.Fatalf("member %s has partitions %v, want %d", id, m.partitions, partitions/4)
		}
	}
	produce(t, cl, topic, partitions, n)
	waitDistinct(t, c, partitions*n)
	time.Sleep(500 * time.Millisecond) // a record read twice would show by now
	cancel()
	wg.Wait()
	r1.stop()
	r2.stop()
	c.checkExactlyOnce(t, partitions, 0, n)
	for _, name := range []string{"kafka-go-1", "kafka-go-2", "franz-go-1", "franz-go-2"} {
		if c.countBy(name) == 0 {
			t.Errorf("%s read nothing", name)
		}
	}
	if got := describe848(t, cl, group); len(got) != 2 {
		// the franz-go clients are closed by Cleanup; the Readers left
		t.Logf("members after the Readers left: %v", got)
	}
}

// Moving a group to the "consumer" protocol once it is empty: the classic
// members commit and leave, and the first member of the new protocol
// starts where they stopped. While a classic member is still in the group,
// kfake refuses the newcomer (it does not convert groups online, which
// Kafka does when group.consumer.migration.policy allows it): the Reader
// reports the error and tries again, and joins once the classic member
// is gone.
func TestConsumerProtocolTakesOverEmptyClassicGroup(t *testing.T) {
	const topic, group, partitions, n = "kip848-move", "kip848-move-group", 3, 20
	addrs, _ := start848(t, topic, partitions)
	cl := newProducer(t, addrs)
	produce(t, cl, topic, partitions, n)
	c := newCollector()
	classic := startMember(t, addrs, group, topic, "classic", c)
	waitDistinct(t, c, partitions*n)

	// The newcomer's FetchMessage returns the refusals (after
	// MaxAttempts of them); its program reads on.
	r := groupReader(addrs, group, topic, consumerProtocol)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	refusals := 0
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			m, err := r.FetchMessage(ctx)
			if err != nil {
				refusals++
				time.Sleep(10 * time.Millisecond)
				continue
			}
			c.add("consumer", m)
			if err := commitRead(r, m); err != nil && ctx.Err() == nil {
				t.Errorf("commit: %v", err)
			}
		}
	}()
	stopNext := func() {
		cancel()
		<-done
		r.Close()
	}
	defer stopNext()
	produce(t, cl, topic, partitions, n)
	waitDistinct(t, c, 2*partitions*n) // read by the classic member
	if got := c.countBy("consumer"); got != 0 {
		t.Fatalf("the consumer-protocol member read %d records while the classic member was in the group", got)
	}
	classic.stop()
	wait848(t, cl, group, 1, partitions)
	produce(t, cl, topic, partitions, n)
	waitDistinct(t, c, 3*partitions*n)
	stopNext()
	t.Logf("FetchMessage returned %d errors while the classic member was in the group", refusals)
	c.checkExactlyOnce(t, partitions, 0, 3*n)
	if got := c.countBy("consumer"); got != partitions*n {
		t.Fatalf("the consumer-protocol member read %d records, want the %d produced after the classic member left", got, partitions*n)
	}
	checkNoGoroutines(t)
}

// ConsumerGroup with GroupProtocol "consumer": three members join one
// after the other. A partition is never held by two members' generations
// at once (a member tells the broker it gave partitions up only once the
// functions of its previous generation returned), and the latest
// generation of each member holds what the broker says it assigned.
func TestConsumerProtocolConsumerGroup(t *testing.T) {
	const topic, group, partitions = "kip848-cg", "kip848-cg-group", 6
	addrs, _ := start848(t, topic, partitions)
	admin := newProducer(t, addrs)
	var mu sync.Mutex
	owner := map[int]string{}
	latest := map[string][]int{} // member ID -> partitions of its latest generation
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	var groups []*kafka.ConsumerGroup
	join := func() {
		cg, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
			ID:               group,
			Brokers:          addrs,
			Topics:           []string{topic},
			GroupProtocol:    kafka.GroupProtocolConsumer,
			JoinGroupBackoff: 200 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		groups = append(groups, cg)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				gen, err := cg.Next(ctx)
				if err != nil {
					if ctx.Err() == nil && !errors.Is(err, kafka.ErrGroupClosed) {
						t.Errorf("Next: %v", err)
					}
					return
				}
				var mine []int
				for _, a := range gen.Assignments[topic] {
					mine = append(mine, a.ID)
				}
				sort.Ints(mine)
				gen.Start(func(ctx context.Context) {
					mu.Lock()
					latest[gen.MemberID] = mine
					for _, p := range mine {
						if o, ok := owner[p]; ok {
							t.Errorf("partition %d handed to %s while %s holds it", p, gen.MemberID, o)
						}
						owner[p] = gen.MemberID
					}
					mu.Unlock()
					<-ctx.Done()
					time.Sleep(20 * time.Millisecond) // a slow hand-over
					mu.Lock()
					for _, p := range mine {
						if owner[p] == gen.MemberID {
							delete(owner, p)
						}
					}
					mu.Unlock()
				})
			}
		}()
	}
	for n := 1; n <= 3; n++ {
		join()
		members := wait848(t, admin, group, n, partitions)
		waitFor(t, "the generations to match the assignment", func() bool {
			mu.Lock()
			defer mu.Unlock()
			for id, m := range members {
				if fmt.Sprint(latest[id]) != fmt.Sprint(int32sToInts(m.partitions)) {
					return false
				}
			}
			return true
		})
	}
	for _, cg := range groups {
		cg.Close()
	}
	cancel()
	wg.Wait()
}

func int32sToInts(s []int32) []int {
	out := make([]int, len(s))
	for i, v := range s {
		out[i] = int(v)
	}
	return out
}
