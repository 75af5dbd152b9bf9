package reader

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/itest/clustertest"
)

// groupState describes a group as its coordinator sees it: the members and
// the partitions (of topic) the leader assigned to each.
type groupState struct {
	state   string
	members map[string][]int32
}

func describeGroup(ctx context.Context, t *testing.T, admin *kgo.Client, group, topic string) groupState {
	t.Helper()
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = []string{group}
	res, err := req.RequestWith(ctx, admin)
	if err != nil || len(res.Groups) != 1 {
		return groupState{}
	}
	g := res.Groups[0]
	st := groupState{state: g.State, members: map[string][]int32{}}
	for _, m := range g.Members {
		var a kmsg.ConsumerMemberAssignment
		if err := a.ReadFrom(m.MemberAssignment); err != nil {
			continue
		}
		st.members[m.MemberID] = []int32{}
		for _, tp := range a.Topics {
			if tp.Topic == topic {
				st.members[m.MemberID] = append(st.members[m.MemberID], tp.Partitions...)
			}
		}
	}
	return st
}

// waitStable waits until the group is stable with n members whose
// assignments cover the partitions of topic exactly once.
func waitStable(t *testing.T, admin *kgo.Client, group, topic string, n, partitions int) groupState {
	t.Helper()
	ctx := ctxTimeout(t, 60*time.Second)
	var last groupState
	for ctx.Err() == nil {
		last = describeGroup(ctx, t, admin, group, topic)
		if last.state == "Stable" && len(last.members) == n && coversOnce(last.members, partitions) {
			return last
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("group %s did not settle with %d members: %+v", group, n, last)
	return last
}

func coversOnce(members map[string][]int32, partitions int) bool {
	seen := map[int32]int{}
	for _, ps := range members {
		for _, p := range ps {
			seen[p]++
		}
	}
	if len(seen) != partitions {
		return false
	}
	for p, n := range seen {
		if n != 1 || p < 0 || int(p) >= partitions {
			return false
		}
	}
	return true
}

func groupReader(addrs []string, group, topic string, opts ...func(*kafka.ReaderConfig)) *kafka.Reader {
	cfg := kafka.ReaderConfig{
		Brokers:           addrs,
		GroupID:           group,
		Topic:             topic,
		MaxWait:           100 * time.Millisecond,
		HeartbeatInterval: 100 * time.Millisecond,
		SessionTimeout:    6 * time.Second,
		RebalanceTimeout:  5 * time.Second,
		JoinGroupBackoff:  200 * time.Millisecond,
	}
	for _, o := range opts {
		o(&cfg)
	}
	return kafka.NewReader(cfg)
}

type seenMessage struct {
	partition int
	offset    int64
}

// collector gathers the messages the readers of a test return.
type collector struct {
	mu    sync.Mutex
	count map[seenMessage]int
	by    map[string]map[int][]int64 // reader -> partition -> offsets in order
}

func newCollector() *collector {
	return &collector{count: map[seenMessage]int{}, by: map[string]map[int][]int64{}}
}

func (c *collector) add(reader string, m kafka.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.count[seenMessage{m.Partition, m.Offset}]++
	if c.by[reader] == nil {
		c.by[reader] = map[int][]int64{}
	}
	c.by[reader][m.Partition] = append(c.by[reader][m.Partition], m.Offset)
}

func (c *collector) distinct() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.count)
}

// consume reads with r until ctx ends, committing each message once it is
// recorded (commitRead).
func consume(ctx context.Context, name string, r *kafka.Reader, c *collector, wg *sync.WaitGroup) {
	defer wg.Done()
	for {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			return
		}
		c.add(name, m)
		if err := commitRead(r, m); err != nil {
			return
		}
	}
}

// commitRead commits msgs, which the caller has counted as read, with a
// context of its own: a member being stopped (its context ended) between
// the count and the commit would leave them uncommitted, and the
// partition's next owner would read them again, as it may; the tests check
// that every message counted is read exactly once.
func commitRead(r *kafka.Reader, msgs ...kafka.Message) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return r.CommitMessages(ctx, msgs...)
}

func waitDistinct(t *testing.T, c *collector, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for c.distinct() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d messages read", c.distinct(), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkExactlyOnce verifies every message 0..n-1 of every partition was
// read exactly once, in order within each reader.
func (c *collector) checkExactlyOnce(t *testing.T, partitions int, from, to int64) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for p := 0; p < partitions; p++ {
		for o := from; o < to; o++ {
			if n := c.count[seenMessage{p, o}]; n != 1 {
				t.Fatalf("partition %d offset %d read %d times", p, o, n)
			}
		}
	}
	for name, parts := range c.by {
		for p, offsets := range parts {
			if !sort.SliceIsSorted(offsets, func(i, j int) bool { return offsets[i] < offsets[j] }) {
				t.Fatalf("reader %s read partition %d out of order: %v", name, p, offsets)
			}
		}
	}
}

// A group reader commits with CommitMessages; after Close, a new reader of
// the same group resumes right after the last committed message.
func TestGroupReaderResumesFromCommittedOffset(t *testing.T) {
	const topic, group, partitions, n = "resume", "resume-group", 3, 40
	addrs, _ := startCluster(t, topic, partitions)
	produce(t, newProducer(t, addrs), topic, partitions, n)
	ctx := ctxTimeout(t, 60*time.Second)

	seen := map[seenMessage]int{}
	r := groupReader(addrs, group, topic)
	// Fetch half of all messages, commit them.
	var last []kafka.Message
	for i := 0; i < partitions*n/2; i++ {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		seen[seenMessage{m.Partition, m.Offset}]++
		last = append(last, m)
	}
	if err := r.CommitMessages(ctx, last...); err != nil {
		t.Fatal(err)
	}
	if r.Offset() != -1 || r.Lag() != -1 {
		t.Fatalf("group reader Offset %d Lag %d", r.Offset(), r.Lag())
	}
	if _, err := r.ReadLag(ctx); err == nil {
		t.Fatal("ReadLag on a group reader")
	}
	if err := r.SetOffset(0); err == nil {
		t.Fatal("SetOffset on a group reader")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	checkNoGoroutines(t)

	r2 := groupReader(addrs, group, topic)
	defer r2.Close()
	for len(seen) < partitions*n {
		m, err := r2.ReadMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		k := seenMessage{m.Partition, m.Offset}
		if seen[k] > 0 {
			t.Fatalf("message %+v read again after the commit", k)
		}
		seen[k]++
	}
}

// With CommitInterval, commits happen in the background and pending ones
// are flushed by Close.
func TestGroupReaderPeriodicCommitFlushedOnClose(t *testing.T) {
	const topic, group, n = "periodic", "periodic-group", 20
	addrs, _ := startCluster(t, topic, 1)
	produce(t, newProducer(t, addrs), topic, 1, n)
	ctx := ctxTimeout(t, 60*time.Second)

	r := groupReader(addrs, group, topic, func(c *kafka.ReaderConfig) { c.CommitInterval = time.Hour })
	for i := 0; i < 12; i++ {
		m, err := r.ReadMessage(ctx) // returns at once: the commit is queued
		if err != nil || m.Offset != int64(i) {
			t.Fatalf("message %d: %+v %v", i, m, err)
		}
	}
	r.Close()

	r2 := groupReader(addrs, group, topic)
	defer r2.Close()
	m, err := r2.FetchMessage(ctx)
	if err != nil || m.Offset != 12 {
		t.Fatalf("after reopening: offset %d, %v", m.Offset, err)
	}
}

// Two then three readers of a group split the partitions; each message is
// read once; when members leave, the others take over their partitions
// from the committed offsets.
func TestGroupReadersShareAndRebalance(t *testing.T) {
	const topic, group, partitions, n = "shared", "shared-group", 6, 30
	addrs, _ := startCluster(t, topic, partitions)
	producer := newProducer(t, addrs)
	admin := producer

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newCollector()
	var wg sync.WaitGroup
	readers := map[string]*kafka.Reader{}
	ctxs := map[string]context.CancelFunc{}
	startReader := func(name string) {
		rctx, rcancel := context.WithCancel(ctx)
		r := groupReader(addrs, group, topic)
		readers[name], ctxs[name] = r, rcancel
		wg.Add(1)
		go consume(rctx, name, r, c, &wg)
	}
	stopReader := func(name string) {
		ctxs[name]()
		readers[name].Close()
	}

	startReader("a")
	startReader("b")
	st := waitStable(t, admin, group, topic, 2, partitions)
	for id, ps := range st.members {
		if len(ps) != 3 {
			t.Fatalf("member %s has %v", id, ps)
		}
	}
	produce(t, producer, topic, partitions, n)
	waitDistinct(t, c, partitions*n)

	startReader("c")
	waitStable(t, admin, group, topic, 3, partitions)
	produce(t, producer, topic, partitions, n) // offsets n..2n-1
	waitDistinct(t, c, 2*partitions*n)

	stopReader("c")
	stopReader("b")
	waitStable(t, admin, group, topic, 1, partitions)
	produce(t, producer, topic, partitions, n) // offsets 2n..3n-1
	waitDistinct(t, c, 3*partitions*n)

	stopReader("a")
	wg.Wait()
	c.checkExactlyOnce(t, partitions, 0, 3*n)
	for _, name := range []string{"a", "b", "c"} {
		if len(c.by[name]) == 0 {
			t.Fatalf("reader %s read nothing", name)
		}
	}
	checkNoGoroutines(t)
}

// With WatchPartitionChanges, partitions added to the topic are picked up
// by a rebalance and read.
func TestGroupReaderWatchesPartitionChanges(t *testing.T) {
	const topic, group = "growing", "growing-group"
	addrs, _ := startCluster(t, topic, 1)
	producer := newProducer(t, addrs)
	ctx := ctxTimeout(t, 60*time.Second)

	r := groupReader(addrs, group, topic, func(c *kafka.ReaderConfig) {
		c.WatchPartitionChanges = true
		c.PartitionWatchInterval = 100 * time.Millisecond
	})
	defer r.Close()
	produce(t, producer, topic, 1, 1)
	if m, err := r.ReadMessage(ctx); err != nil || m.Partition != 0 {
		t.Fatalf("first message: %+v %v", m, err)
	}

	req := kmsg.NewPtrCreatePartitionsRequest()
	rt := kmsg.NewCreatePartitionsRequestTopic()
	rt.Topic, rt.Count = topic, 3
	req.Topics = append(req.Topics, rt)
	res, err := req.RequestWith(ctx, producer)
	if err != nil || res.Topics[0].ErrorCode != 0 {
		t.Fatalf("create partitions: %v %+v", err, res)
	}
	// A new client, which sees the new partitions.
	if err := newProducer(t, addrs).ProduceSync(ctx, record(topic, 2, 0)).FirstErr(); err != nil {
		t.Fatal(err)
	}
	m, err := r.ReadMessage(ctx)
	if err != nil || m.Partition != 2 || string(m.Key) != "p2-0" {
		t.Fatalf("message of the new partition: %+v %v", m, err)
	}
}

// Members come and go while records are being written and read: every
// record is still read (at least once: a record returned just before a
// rebalance may be read again by its next owner), and the group ends up
// with the last member holding every partition.
func TestGroupReadersChurnLosesNothing(t *testing.T) {
	const topic, group, partitions, n = "churn", "churn-group", 6, 120
	addrs, _ := startCluster(t, topic, partitions)
	producer := newProducer(t, addrs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	c := newCollector()
	var wg sync.WaitGroup
	readers := map[string]*kafka.Reader{}
	stops := map[string]context.CancelFunc{}
	start := func(name string) {
		rctx, rcancel := context.WithCancel(ctx)
		r := groupReader(addrs, group, topic)
		readers[name], stops[name] = r, rcancel
		wg.Add(1)
		go consume(rctx, name, r, c, &wg)
	}
	stop := func(name string) {
		stops[name]()
		readers[name].Close()
	}

	// Written in 4 rounds, with a membership change after each.
	produceRound := func(round int) {
		var recs []*kgo.Record
		for p := 0; p < partitions; p++ {
			for i := round * n / 4; i < (round+1)*n/4; i++ {
				recs = append(recs, record(topic, p, i))
			}
		}
		if err := producer.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	start("a")
	start("b")
	produceRound(0)
	start("c")
	produceRound(1)
	stop("a")
	produceRound(2)
	start("d")
	stop("b")
	produceRound(3)
	stop("c")

	waitDistinct(t, c, partitions*n)
	st := waitStable(t, producer, group, topic, 1, partitions)
	for _, ps := range st.members {
		if len(ps) != partitions {
			t.Fatalf("last member holds %v", ps)
		}
	}
	stop("d")
	wg.Wait()
	checkNoGoroutines(t)
}

// GroupTopics: a group reader consumes several topics; two members split
// each topic's partitions, and every record of both is read once.
func TestGroupReadersSeveralTopics(t *testing.T) {
	const group, partitions, n = "multi-group", 3, 20
	topics := []string{"multi-a", "multi-b"}
	addrs, _ := clustertest.Start(t, kfake.SeedTopics(partitions, topics...))
	producer := newProducer(t, addrs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	c := map[string]*collector{topics[0]: newCollector(), topics[1]: newCollector()}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var readers []*kafka.Reader
	for _, name := range []string{"x", "y"} {
		r := groupReader(addrs, group, "", func(cfg *kafka.ReaderConfig) { cfg.GroupTopics = topics })
		readers = append(readers, r)
		wg.Add(1)
		go func(name string, r *kafka.Reader) {
			defer wg.Done()
			for {
				m, err := r.FetchMessage(ctx)
				if err != nil {
					return
				}
				mu.Lock()
				c[m.Topic].add(name, m)
				mu.Unlock()
				if err := commitRead(r, m); err != nil {
					return
				}
			}
		}(name, r)
	}
	for _, topic := range topics {
		st := waitStable(t, producer, group, topic, 2, partitions)
		for id, ps := range st.members {
			if len(ps) == 0 || len(ps) == partitions {
				t.Fatalf("%s: member %s has %v", topic, id, ps)
			}
		}
	}
	for _, topic := range topics {
		produce(t, producer, topic, partitions, n)
	}
	for _, topic := range topics {
		waitDistinct(t, c[topic], partitions*n)
	}
	cancel()
	for _, r := range readers {
		r.Close()
	}
	wg.Wait()
	for _, topic := range topics {
		c[topic].checkExactlyOnce(t, partitions, 0, n)
	}
}
