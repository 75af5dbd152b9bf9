package reader

import (
	"context"
	"errors"
	"reflect"
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

// groupRequests records what the members of a group ask its coordinator:
// the generation of every SyncGroup, and the GroupInstanceID of every
// JoinGroup.
type groupRequests struct {
	mu        sync.Mutex
	syncGens  []int32
	instances []string
}

func watchGroupRequests(c *kfake.Cluster) *groupRequests {
	g := &groupRequests{}
	c.ControlKey(int16(kmsg.SyncGroup), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		g.mu.Lock()
		g.syncGens = append(g.syncGens, req.(*kmsg.SyncGroupRequest).Generation)
		g.mu.Unlock()
		return nil, nil, false
	})
	c.ControlKey(int16(kmsg.JoinGroup), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		id := "<dynamic>"
		if p := req.(*kmsg.JoinGroupRequest).InstanceID; p != nil {
			id = *p
		}
		g.mu.Lock()
		g.instances = append(g.instances, id)
		g.mu.Unlock()
		return nil, nil, false
	})
	return g
}

func (g *groupRequests) maxGeneration() int32 {
	g.mu.Lock()
	defer g.mu.Unlock()
	var max int32
	for _, gen := range g.syncGens {
		max = kmax(max, gen)
	}
	return max
}

func kmax(a, b int32) int32 {
	if a > b {
		return a
	}
	return b
}

func (g *groupRequests) joins(instance string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, id := range g.instances {
		if id == instance {
			n++
		}
	}
	return n
}

// producer writes one record to each partition of a topic every few
// milliseconds until stopped, and says how many it wrote.
type producer struct {
	cancel context.CancelFunc
	done   chan struct{}
	n      int
}

func produceSteadily(t *testing.T, cl *kgo.Client, topic string, partitions int) *producer {
	ctx, cancel := context.WithCancel(context.Background())
	p := &producer{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for i := 0; ctx.Err() == nil; i++ {
			var recs []*kgo.Record
			for part := 0; part < partitions; part++ {
				recs = append(recs, record(topic, part, i))
			}
			if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
				t.Errorf("produce: %v", err)
				return
			}
			p.n = i + 1
			time.Sleep(3 * time.Millisecond)
		}
	}()
	t.Cleanup(func() { p.stop() })
	return p
}

// stop stops producing and returns how many records each partition got.
func (p *producer) stop() int {
	p.cancel()
	<-p.done
	return p.n
}

// member is a group reader consuming in the background, committing every
// message it records.
type member struct {
	r      *kafka.Reader
	cancel context.CancelFunc
	done   chan struct{}
	err    error // why consumption stopped, once done is closed
}

func startMember(t *testing.T, addrs []string, group, topic, name string, c *collector, opts ...func(*kafka.ReaderConfig)) *member {
	ctx, cancel := context.WithCancel(context.Background())
	m := &member{r: groupReader(addrs, group, topic, opts...), cancel: cancel, done: make(chan struct{})}
	t.Cleanup(m.stop)
	go func() {
		defer close(m.done)
		for {
			msg, err := m.r.FetchMessage(ctx)
			if err != nil {
				m.err = err
				return
			}
			c.add(name, msg)
			if err := commitRead(m.r, msg); err != nil {
				m.err = err
				return
			}
		}
	}()
	return m
}

// stop stops the member; it can be called more than once.
func (m *member) stop() {
	m.cancel()
	<-m.done
	m.r.Close()
}

func static(id string) func(*kafka.ReaderConfig) {
	return func(c *kafka.ReaderConfig) {
		c.GroupInstanceID = id
		c.SessionTimeout = 30 * time.Second
	}
}

// byInstance returns the partitions of topic that each static member of
// group holds, by GroupInstanceID.
func byInstance(t *testing.T, admin *kgo.Client, group, topic string) map[string][]int32 {
	t.Helper()
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = []string{group}
	res, err := req.RequestWith(context.Background(), admin)
	if err != nil || len(res.Groups) != 1 {
		t.Fatalf("describe group: %v", err)
	}
	out := map[string][]int32{}
	for _, m := range res.Groups[0].Members {
		var a kmsg.ConsumerMemberAssignment
		if m.InstanceID == nil || a.ReadFrom(m.MemberAssignment) != nil {
			t.Fatalf("member %+v", m)
		}
		for _, tp := range a.Topics {
			if tp.Topic == topic {
				ps := append([]int32(nil), tp.Partitions...)
				sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
				out[*m.InstanceID] = ps
			}
		}
	}
	return out
}

func (c *collector) countBy(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, offsets := range c.by[name] {
		n += len(offsets)
	}
	return n
}

// A group of three static members, one of which restarts with the same
// GroupInstanceID while records keep coming: the group does not rebalance
// (no new generation, the other two never restart their partition
// readers), the restarted member gets its own partitions back, and every
// record is read. Then a second process takes the GroupInstanceID of a
// running member: that member is fenced and told so, for good, and the
// newcomer reads its partitions without ever being fenced in turn.
func TestStaticMembersRestartWithoutRebalance(t *testing.T) {
	const topic, group, partitions = "static", "static-group", 6
	addrs, cluster := startCluster(t, topic, partitions)
	requests := watchGroupRequests(cluster)
	cl := newProducer(t, addrs)
	c := newCollector()

	members := map[string]*member{}
	for _, id := range []string{"a", "b", "c"} {
		members[id] = startMember(t, addrs, group, topic, id, c, static(id))
	}
	waitStable(t, cl, group, topic, 3, partitions)
	before := byInstance(t, cl, group, topic)
	prod := produceSteadily(t, cl, topic, partitions)
	waitFor(t, "each member reading", func() bool {
		return c.countBy("a") > 0 && c.countBy("b") > 0 && c.countBy("c") > 0
	})
	generation := requests.maxGeneration()
	members["b"].r.Stats() // resets the counters
	members["c"].r.Stats()

	// Restart a.
	members["a"].stop()
	restarted := startMember(t, addrs, group, topic, "a2", c, static("a"))
	waitFor(t, "the restarted member reading", func() bool { return c.countBy("a2") > 0 })
	if after := byInstance(t, cl, group, topic); !reflect.DeepEqual(after, before) {
		t.Errorf("assignments after the restart %v, before %v", after, before)
	}
	if g := requests.maxGeneration(); g != generation {
		t.Errorf("generation %d after the restart, was %d", g, generation)
	}
	for _, id := range []string{"b", "c"} {
		if n := members[id].r.Stats().Rebalances; n != 0 {
			t.Errorf("member %s went through %d rebalances while a restarted", id, n)
		}
	}

	// A second process takes b's GroupInstanceID.
	joinsOfB := requests.joins("b")
	intruder := startMember(t, addrs, group, topic, "b2", c, static("b"))
	select {
	case <-members["b"].done:
	case <-time.After(30 * time.Second):
		t.Fatal("the member whose GroupInstanceID was taken kept reading")
	}
	if err := members["b"].err; !errors.Is(err, kafka.FencedInstanceID) || !strings.Contains(err.Error(), `GroupInstanceID "b"`) {
		t.Fatalf("fenced member stopped with %v", err)
	}
	if _, err := members["b"].r.FetchMessage(context.Background()); !errors.Is(err, kafka.FencedInstanceID) {
		t.Fatalf("fenced member's next FetchMessage: %v", err)
	}
	fencedAt := c.countBy("b2")
	waitFor(t, "the newcomer reading", func() bool { return c.countBy("b2") > fencedAt })

	n := prod.stop()
	waitDistinct(t, c, partitions*n)
	if j := requests.joins("b") - joinsOfB; j != 1 {
		t.Errorf("%d JoinGroups with GroupInstanceID b since the newcomer came, want 1 (the fenced member must not join again)", j)
	}
	if after := byInstance(t, cl, group, topic); !reflect.DeepEqual(after, before) {
		t.Errorf("assignments after the newcomer took b's place %v, before %v", after, before)
	}
	if intruder.err != nil {
		t.Errorf("the newcomer stopped: %v", intruder.err)
	}
	if g := requests.maxGeneration(); g != generation {
		t.Errorf("generation %d after the newcomer joined, was %d", g, generation)
	}
	for _, m := range []*member{members["b"], members["c"], restarted, intruder} {
		m.stop()
	}

	// Partitions that stayed with c were read exactly once.
	c.mu.Lock()
	for p := 0; p < partitions; p++ {
		for _, off := range c.by["c"][p] {
			if k := (seenMessage{p, off}); c.count[k] != 1 {
				t.Errorf("partition %d offset %d of member c read %d times", p, off, c.count[k])
			}
		}
	}
	c.mu.Unlock()
	checkNoGoroutines(t)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
