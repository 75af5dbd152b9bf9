package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/fetch"
	"github.com/segmentio/kafka-go/protocol/findcoordinator"
	"github.com/segmentio/kafka-go/protocol/heartbeat"
	"github.com/segmentio/kafka-go/protocol/joingroup"
	"github.com/segmentio/kafka-go/protocol/leavegroup"
	"github.com/segmentio/kafka-go/protocol/listoffsets"
	"github.com/segmentio/kafka-go/protocol/offsetcommit"
	"github.com/segmentio/kafka-go/protocol/offsetfetch"
	"github.com/segmentio/kafka-go/protocol/syncgroup"
)

// coopGroupStub is the coordinator and the partition leader of topic "t"
// for one follower of a cooperative-sticky group: the n-th JoinGroup
// makes generation n, whose SyncGroup gives assign(n); a heartbeat
// answers REBALANCE_IN_PROGRESS after rebalance() was called. Partition
// p holds records from 0 to limit(p) (records appear when it grows).
type coopGroupStub struct {
	mu        sync.Mutex
	joins     int
	rebalance bool
	assign    func(gen int) []int
	limits    map[int32]int64
	fetches   map[int32]int
	committed map[int32]int64
	coord     *fakebroker.Broker
	// protocol, when set, names the protocol the coordinator chose for
	// generation gen (else the member's first); onJoin, when set, is
	// called with the lock held as JoinGroup n arrives, and the answer
	// waits for the channel it returns to close.
	protocol func(gen int) string
	onJoin   func(n int) <-chan struct{}
	// commitErr, when set, is the error code of every partition of an
	// OffsetCommit; heartbeats and commits of generation badGen, when set,
	// get badCode.
	commitErr int16
	badGen    int32
	badCode   int16
	// commitsOf counts the OffsetCommits of each generation ID.
	commitsOf map[int32]int
}

func newCoopGroupStub(assign func(gen int) []int, limits map[int32]int64) *coopGroupStub {
	return &coopGroupStub{assign: assign, limits: limits, fetches: map[int32]int{}, committed: map[int32]int64{}, commitsOf: map[int32]int{}}
}

func (s *coopGroupStub) RoundTrip(ctx context.Context, _ net.Addr, req Request) (Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch r := req.(type) {
	case *findcoordinator.Request:
		return &findcoordinator.Response{NodeID: s.coord.ID, Host: s.coord.Host, Port: s.coord.Port}, nil
	case *joingroup.Request:
		s.joins++
		gen := s.joins
		res := &joingroup.Response{GenerationID: int32(gen), ProtocolName: r.Protocols[0].Name, LeaderID: "a-leader", MemberID: "m-1"}
		if s.protocol != nil {
			res.ProtocolName = s.protocol(gen)
		}
		if s.onJoin != nil {
			if hold := s.onJoin(gen); hold != nil {
				s.mu.Unlock()
				<-hold
				s.mu.Lock()
			}
		}
		return res, nil
	case *syncgroup.Request:
		b, err := encodeAssignment(map[string][]int{"t": s.assign(int(r.GenerationID))})
		return &syncgroup.Response{Assignments: b}, err
	case *heartbeat.Request:
		res := &heartbeat.Response{}
		if s.badGen != 0 && r.GenerationID == s.badGen {
			res.ErrorCode = s.badCode
			return res, nil
		}
		if s.rebalance && r.GenerationID == int32(s.joins) {
			s.rebalance = false
			res.ErrorCode = int16(RebalanceInProgress)
		}
		return res, nil
	case *offsetfetch.Request:
		return offsetFetchAnswer(r, s.committed), nil
	case *offsetcommit.Request:
		s.commitsOf[r.GenerationID]++
		if s.commitErr != 0 {
			return offsetCommitAnswer(r, s.commitErr, nil), nil
		}
		if s.badGen != 0 && r.GenerationID == s.badGen {
			return offsetCommitAnswer(r, s.badCode, nil), nil
		}
		return offsetCommitAnswer(r, 0, func(p int32, off int64) { s.committed[p] = off }), nil
	case *leavegroup.Request:
		return &leavegroup.Response{}, nil
	case *listoffsets.Request:
		p := r.Topics[0].Partitions[0]
		offset := s.limits[p.Partition]
		if p.Timestamp == FirstOffset {
			offset = 0
		}
		return &listoffsets.Response{Topics: []listoffsets.ResponseTopic{{
			Topic:      "t",
			Partitions: []listoffsets.ResponsePartition{{Partition: p.Partition, Offset: offset}},
		}}}, nil
	case *fetch.Request:
		p := r.Topics[0].Partitions[0]
		s.fetches[p.Partition]++
		part := fetch.ResponsePartition{Partition: p.Partition, HighWatermark: s.limits[p.Partition]}
		if to := min(p.FetchOffset+10, s.limits[p.Partition]); to > p.FetchOffset {
			part.RecordSet = stubSet(stubBatch(1, false, p.FetchOffset, to))
		} else {
			s.mu.Unlock()
			select { // a broker holds an empty fetch for MaxWait
			case <-time.After(5 * time.Millisecond):
			case <-ctx.Done():
			}
			s.mu.Lock()
		}
		return &fetch.Response{Topics: []fetch.ResponseTopic{{Topic: "t", Partitions: []fetch.ResponsePartition{part}}}}, nil
	}
	return nil, fmt.Errorf("unexpected request %T", req)
}

// serveCoopGroupStub starts a fake broker that plays stub, leading
// partitions 0 and 1 of "t", and returns its address.
func serveCoopGroupStub(t *testing.T, stub *coopGroupStub) net.Addr {
	return serveGroupStub(t, stub, stub)
}

// serveGroupStub is serveCoopGroupStub with handler, a wrapper of stub
// (forgettingCoopStub), answering the requests.
func serveGroupStub(t *testing.T, stub *coopGroupStub, handler RoundTripper) net.Addr {
	fc := fakebroker.New(t, 1)
	fc.SetLeader(1, 1)
	// The stub reads and answers OffsetFetch in the one-group layout of
	// v0-7.
	fc.Brokers[0].SetApiKey(protocol.OffsetFetch, 1, 7)
	stub.coord = fc.Brokers[0]
	serveStub(t, fc, handler)
	return fc.Addr()
}

// holdJoin makes the stub's n-th JoinGroup close joined as it arrives and
// wait for the test to close hold before it is answered.
func (s *coopGroupStub) holdJoin(n int) (joined, hold chan struct{}) {
	joined, hold = make(chan struct{}), make(chan struct{})
	s.onJoin = func(i int) <-chan struct{} {
		if i == n {
			close(joined)
			return hold
		}
		return nil
	}
	return joined, hold
}

// stubGroupReader returns a Reader of topic "t" in group "g" at addr with
// balancer and the settings the stub tests share (10 ms heartbeats and
// fetch waits, 20 queued messages); adjust, when set, changes more.
func stubGroupReader(addr net.Addr, balancer GroupBalancer, adjust func(*ReaderConfig)) *Reader {
	cfg := ReaderConfig{
		Brokers:           []string{addr.String()},
		GroupID:           "g",
		Topic:             "t",
		GroupBalancers:    []GroupBalancer{balancer},
		HeartbeatInterval: 10 * time.Millisecond,
		MaxWait:           10 * time.Millisecond,
		QueueCapacity:     20,
	}
	if adjust != nil {
		adjust(&cfg)
	}
	return NewReader(cfg)
}

func (s *coopGroupStub) startRebalance() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rebalance = true
}

func (s *coopGroupStub) setLimit(p int32, limit int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits[p] = limit
}

// settledFetches waits until fetches() has not changed for quiet (at most
// limit) and returns its last value. A fetch a partition reader sent before
// it stopped may reach a stub after a request the test waits for (it comes
// on another connection); a reader still running fetches every MaxWait and
// never lets a window of quiet pass, so counting from here tells the two
// apart without depending on how fast the machine is.
func settledFetches(fetches func() int, quiet, limit time.Duration) int {
	n := fetches()
	for since, start := time.Now(), time.Now(); time.Since(since) < quiet && time.Since(start) < limit; time.Sleep(5 * time.Millisecond) {
		if m := fetches(); m != n {
			n, since = m, time.Now()
		}
	}
	return n
}

// waitStub waits until cond, read under the stub's lock, holds.
func waitStub(t *testing.T, s *coopGroupStub, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		ok := cond()
		s.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// A partition revoked in a cooperative rebalance is not read anymore,
// also when its partition reader was the last one started (so that its
// batches are of the Reader's latest version): what it had queued is
// dropped, as its new owner reads it from the committed offset.
func TestReaderCooperativeRevokedPartitionStops(t *testing.T) {
	// Generation 1: partition 0; 2: partitions 0 and 1; 3 and after: 0.
	stub := newCoopGroupStub(func(gen int) []int {
		if gen == 2 {
			return []int{0, 1}
		}
		return []int{0}
	}, map[int32]int64{0: 1, 1: 1 << 40})
	r := stubGroupReader(serveCoopGroupStub(t, stub), CooperativeStickyGroupBalancer{}, func(c *ReaderConfig) {
		c.HeartbeatInterval = time.Millisecond
		c.QueueCapacity = 40
	})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := r.FetchMessage(ctx)
	if err != nil || m.Partition != 0 || m.Offset != 0 {
		t.Fatalf("first message %d@%d, %v", m.Partition, m.Offset, err)
	}

	// Partition 1 comes; once its reader fetches a second time, its first
	// batch is queued (nothing is read meanwhile).
	stub.startRebalance()
	waitStub(t, stub, "partition 1 to be fetched twice", func() bool { return stub.fetches[1] >= 2 })
	// Partition 1 goes; the follow-up rebalance (join 4) comes after the
	// Reader stopped its reader.
	stub.startRebalance()
	waitStub(t, stub, "the follow-up rebalance", func() bool { return stub.joins >= 4 })

	// Partition 0 gets records after partition 1's, in the queue too.
	stub.setLimit(0, 30)
	for next := int64(1); next < 30; next++ {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m.Partition != 0 || m.Offset != next {
			t.Fatalf("after partition 1 was revoked: message %d@%d, want 0@%d", m.Partition, m.Offset, next)
		}
	}
}

// Two FetchMessage calls may each take a batch from the queue while the
// first batch is still being returned. In a cooperative group the two may
// come from partition readers started in different generations, kept
// since: both batches are returned in full and in order, also after a
// partition reader started for a newly assigned partition; a batch of a
// partition given up meanwhile is not.
func TestReaderBatchesOfKeptPartitionReaders(t *testing.T) {
	batch := func(partition int, from, to int64) []Message {
		var msgs []Message
		for o := from; o < to; o++ {
			msgs = append(msgs, Message{Topic: "t", Partition: partition, Offset: o})
		}
		return msgs
	}
	tp := func(p int32) topicPartition { return topicPartition{topic: "t", partition: p} }
	r := &Reader{generation: 3, coop: map[topicPartition]*coopReader{
		tp(0): {version: 1}, tp(2): {version: 2}, tp(3): {version: 3},
	}}
	r.take(readerMessage{version: 1, messages: batch(0, 0, 3)})
	if m, ok := r.next(false); !ok || m.Partition != 0 || m.Offset != 0 {
		t.Fatalf("first message %d@%d, %v", m.Partition, m.Offset, ok)
	}
	// Other calls take batches of partitions 2 and 3 meanwhile.
	r.take(readerMessage{version: 2, messages: batch(2, 10, 13)})
	r.take(readerMessage{version: 3, messages: batch(3, 20, 23)})
	if n := r.queueLength(); n != 8 {
		t.Errorf("queue length %d, want 8", n)
	}
	// Partition 1 is assigned, partition 3 given up.
	r.mu.Lock()
	r.generation++
	r.coop[tp(1)] = &coopReader{version: r.generation}
	delete(r.coop, tp(3))
	r.mu.Unlock()
	var got []string
	for {
		m, ok := r.next(false)
		if !ok {
			break
		}
		got = append(got, fmt.Sprintf("%d@%d", m.Partition, m.Offset))
	}
	if want := "[0@1 0@2 2@10 2@11 2@12]"; fmt.Sprint(got) != want {
		t.Fatalf("messages %v, want %s", got, want)
	}
}

// A member that offers an eager balancer besides cooperative-sticky gives
// up all its partitions before each join, as the Java client and
// librdkafka do, even while the group uses cooperative-sticky: the group
// may pick the eager balancer in any rebalance (a member that only offers
// it joins), and the leader then assigns this member's partitions to
// others while it would still be reading them.
func TestReaderCooperativeWithEagerBalancerRevokesBeforeJoin(t *testing.T) {
	release := make(chan struct{})
	joined := make(chan struct{})
	stub := newCoopGroupStub(func(gen int) []int {
		if gen == 1 {
			return []int{0}
		}
		return []int{1} // range gives partition 0 to another member
	}, map[int32]int64{0: 25, 1: 1 << 40})
	stub.protocol = func(gen int) string {
		if gen == 1 {
			return "cooperative-sticky"
		}
		return "range"
	}
	stub.onJoin = func(n int) <-chan struct{} {
		if n != 2 {
			return nil
		}
		close(joined)
		return release
	}
	r := NewReader(ReaderConfig{
		Brokers:           []string{serveCoopGroupStub(t, stub).String()},
		GroupID:           "g",
		Topic:             "t",
		GroupBalancers:    []GroupBalancer{CooperativeStickyGroupBalancer{}, RangeGroupBalancer{}},
		HeartbeatInterval: time.Millisecond,
		MaxWait:           10 * time.Millisecond,
		QueueCapacity:     40,
	})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var read int64
	for ; read < 25; read++ {
		m, err := r.FetchMessage(ctx)
		if err != nil || m.Partition != 0 || m.Offset != read {
			t.Fatalf("message %d@%d, %v; want 0@%d", m.Partition, m.Offset, err, read)
		}
		if err := r.CommitMessages(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	stub.startRebalance()
	select {
	case <-joined:
	case <-ctx.Done():
		t.Fatal("no second JoinGroup")
	}
	// While the coordinator holds the JoinGroup, partition 0 is not
	// fetched (a running reader would, every MaxWait, the records being
	// all read): its reader stopped before the join. The count starts
	// once none came for 100 ms (settledFetches).
	base := settledFetches(func() int {
		stub.mu.Lock()
		defer stub.mu.Unlock()
		return stub.fetches[0]
	}, 100*time.Millisecond, 2*time.Second)
	time.Sleep(50 * time.Millisecond)
	stub.mu.Lock()
	during := stub.fetches[0] - base
	committed := stub.committed[0]
	stub.mu.Unlock()
	close(release)
	if during != 0 {
		t.Errorf("partition 0 fetched %d times while the member was joining", during)
	}
	if committed != read {
		t.Errorf("committed offset of partition 0 %d, want %d", committed, read)
	}
	for i := 0; i < 5; i++ {
		m, err := r.FetchMessage(ctx)
		if err != nil || m.Partition != 1 {
			t.Fatalf("after the rebalance: message %d@%d, %v; want partition 1", m.Partition, m.Offset, err)
		}
	}
}

// A commit answered UNKNOWN_MEMBER_ID means the coordinator no longer
// counts this member in the group, so the partitions it kept reading across
// rebalances may be another member's now: the Reader stops reading them at
// once (and drops what they queued), as a failed rejoin would, and
// rejoins, instead of delivering them until its next heartbeat or join
// fails too.
func TestReaderCooperativeUnknownMemberCommitStopsPartitions(t *testing.T) {
	stub := newCoopGroupStub(func(int) []int { return []int{0, 1} }, map[int32]int64{0: 1 << 40, 1: 1 << 40})
	release := make(chan struct{})
	defer close(release)
	stub.onJoin = func(n int) <-chan struct{} {
		if n >= 2 {
			return release // a later join is held, as a coordinator can
		}
		return nil
	}
	r := stubGroupReader(serveCoopGroupStub(t, stub), CooperativeStickyGroupBalancer{}, func(c *ReaderConfig) {
		c.HeartbeatInterval = time.Second
	})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := r.FetchMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.CommitMessages(ctx, m); err != nil {
		t.Fatalf("first commit: %v", err)
	}
	stub.mu.Lock()
	stub.commitErr = int16(UnknownMemberId)
	stub.mu.Unlock()
	if err := r.CommitMessages(ctx, m); !errors.Is(err, UnknownMemberId) {
		t.Fatalf("commit after the member was dropped: %v, want UNKNOWN_MEMBER_ID", err)
	}
	// Both partitions have records without end: any message now comes from
	// a partition reader that should have stopped.
	wctx, wcancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer wcancel()
	if m, err := r.FetchMessage(wctx); err == nil {
		t.Fatalf("message %d@%d delivered after the coordinator said the member is unknown", m.Partition, m.Offset)
	} else if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("FetchMessage: %v, want the deadline", err)
	}
	// And it rejoins without waiting for a heartbeat to fail (they do not
	// here).
	waitStub(t, stub, "the member to rejoin", func() bool { return stub.joins >= 2 })
}

// The commit loop of a generation that ended before the Reader started it
// is not waited for by the group: its final flush, answered
// UNKNOWN_MEMBER_ID, must not stop the partition readers of the next
// generation, which goes on reading.
func TestReaderCooperativeStaleCommitLoopLeavesNextGeneration(t *testing.T) {
	stub := newCoopGroupStub(func(int) []int { return []int{0, 1} }, map[int32]int64{0: 1 << 40, 1: 1 << 40})
	joined2, hold := stub.holdJoin(2)
	r := stubGroupReader(serveCoopGroupStub(t, stub), CooperativeStickyGroupBalancer{}, func(c *ReaderConfig) {
		c.CommitInterval = time.Hour
	})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := r.FetchMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Generation 2: its heartbeats and commits are answered
	// UNKNOWN_MEMBER_ID (the member was dropped meanwhile).
	stub.mu.Lock()
	stub.badGen, stub.badCode = 2, int16(UnknownMemberId)
	stub.mu.Unlock()
	stub.startRebalance()
	<-joined2
	// Read (committed by the commit loop of the next generation started).
	if _, err := r.ReadMessage(ctx); err != nil {
		t.Fatal(err)
	}
	// The Reader's group loop is slow to take generation 2 (reconcile
	// waiting for r.mu here; in life, for revoked readers to stop).
	r.mu.Lock()
	close(hold)
	// Generation 2 ends (heartbeat) before the Reader starts its commit
	// loop; once the Reader has heard of the loss (Next), the group joins
	// generation 3.
	time.Sleep(300 * time.Millisecond)
	r.mu.Unlock()
	waitStub(t, stub, "join 3", func() bool { return stub.joins >= 3 })
	time.Sleep(2 * time.Second) // the stale loop's flush and its retries
	r.mu.Lock()
	n := len(r.coop)
	r.mu.Unlock()
	stub.mu.Lock()
	joins := stub.joins
	stub.mu.Unlock()
	// Drain what is queued, then nothing comes although generation 3
	// owns partitions 0 and 1 of unbounded records.
	wctx, wcancel := context.WithTimeout(ctx, time.Second)
	defer wcancel()
	for i := 0; i < 200; i++ {
		if _, err := r.FetchMessage(wctx); err != nil {
			t.Fatalf("after %d messages: %v (generation %d live, %d partition readers)", i, err, joins, n)
		}
	}
}

// A classic coordinator answers the commits of a generation that is being
// replaced REBALANCE_IN_PROGRESS (or ILLEGAL_GENERATION), however often
// they come. The final flush of a cooperative generation so answered is
// sent once, not retried into the join deadline (the member would be
// dropped, and its partitions read again from the last commit by others),
// and what it could not commit is committed by the next generation, which
// keeps the partitions: the messages ReadMessage returned stay committed
// without another call.
func TestReaderCooperativeRebalanceCommitCarriedToNextGeneration(t *testing.T) {
	stub := newCoopGroupStub(func(int) []int { return []int{0, 1} }, map[int32]int64{0: 1 << 40, 1: 1 << 40})
	r := stubGroupReader(serveCoopGroupStub(t, stub), CooperativeStickyGroupBalancer{}, func(c *ReaderConfig) {
		c.CommitInterval = time.Hour // only the end of the generation commits
	})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	want := map[int32]int64{}
	for i := 0; i < 25; i++ {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want[int32(m.Partition)] = m.Offset + 1
	}
	stub.mu.Lock()
	if stub.joins != 1 || len(stub.committed) != 0 {
		stub.mu.Unlock()
		t.Fatalf("before the rebalance: %d joins, committed %v", stub.joins, stub.committed)
	}
	stub.badGen, stub.badCode = 1, int16(RebalanceInProgress)
	stub.mu.Unlock()

	waitStub(t, stub, "the carried offsets to be committed", func() bool {
		for p, off := range want {
			if stub.committed[p] != off {
				return false
			}
		}
		return true
	})
	stub.mu.Lock()
	defer stub.mu.Unlock()
	if n := stub.commitsOf[1]; n != 1 {
		t.Errorf("generation 1 sent %d OffsetCommits after the rebalance began, want 1 (no retry of a refused generation)", n)
	}
	if stub.joins != 2 {
		t.Errorf("%d joins, want 2", stub.joins)
	}
}

// Offsets carried from a generation whose commits were refused belong to
// the member that read them for as long as it keeps its partitions. A
// member that is then dropped (its JoinGroup answered UNKNOWN_MEMBER_ID)
// and joins again must not commit them: meanwhile another member owned the
// partitions and committed further, and the carried offsets would move its
// commits back.
func TestReaderCooperativeCarriedCommitsDroppedWithMembership(t *testing.T) {
	stub := &forgettingCoopStub{coopGroupStub: newCoopGroupStub(func(int) []int { return []int{0, 1} }, map[int32]int64{0: 1 << 40, 1: 1 << 40})}
	r := stubGroupReader(serveForgettingCoopStub(t, stub), CooperativeStickyGroupBalancer{}, func(c *ReaderConfig) {
		c.CommitInterval = time.Hour // only the end of a generation commits
		c.JoinGroupBackoff = 10 * time.Millisecond
	})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := 0; i < 25; i++ {
		if _, err := r.ReadMessage(ctx); err != nil {
			t.Fatal(err)
		}
	}
	const other = 1 << 20 // what the other member committed
	stub.forget("m-1")
	stub.mu.Lock()
	stub.committed[0], stub.committed[1] = other, other
	stub.badGen, stub.badCode = 1, int16(RebalanceInProgress)
	stub.mu.Unlock()

	// The member joins again and reads from the other member's offsets.
	m, err := r.FetchMessage(ctx)
	for err == nil && m.Offset < other {
		m, err = r.FetchMessage(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil { // the last generation's final flush
		t.Fatal(err)
	}
	stub.mu.Lock()
	defer stub.mu.Unlock()
	if stub.refused == 0 {
		t.Fatal("the member's JoinGroup was never refused: the test did not drop it")
	}
	for p, off := range stub.committed {
		if off != other {
			t.Errorf("partition %d committed at %d after the member joined again, want the other member's %d", p, off, other)
		}
	}
}

// A message fetched while its partition was this member's, committed after
// the partition went to another member, is not committed: the coordinator
// would take it (it does not check who owns a partition) and move the
// other member's commits back. Commits of the partitions kept go on.
func TestReaderLateCommitOfMovedPartitionDropped(t *testing.T) {
	stub := newCoopGroupStub(func(gen int) []int {
		if gen == 1 {
			return []int{0, 1}
		}
		return []int{0}
	}, map[int32]int64{0: 1 << 40, 1: 1 << 40})
	r := stubGroupReader(serveCoopGroupStub(t, stub), CooperativeStickyGroupBalancer{}, func(c *ReaderConfig) {
		c.HeartbeatInterval = time.Millisecond
	})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var kept, moved Message
	for kept.Offset == 0 || moved.Offset == 0 {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m.Partition == 1 {
			moved = m
		} else {
			kept = m
		}
	}
	stub.startRebalance()
	waitStub(t, stub, "partition 1 to be revoked and the follow-up rebalance", func() bool { return stub.joins >= 3 })
	if err := r.CommitMessages(ctx, moved, kept); err != nil {
		t.Fatal(err)
	}
	stub.mu.Lock()
	defer stub.mu.Unlock()
	if off, ok := stub.committed[1]; ok {
		t.Errorf("partition 1, another member's now, committed at %d", off)
	}
	if stub.committed[0] != kept.Offset+1 {
		t.Errorf("partition 0 committed at %d, want %d", stub.committed[0], kept.Offset+1)
	}
}

// When an eager generation ends, the messages its partition readers
// queued are not returned while the member waits for the next one: their
// partitions may be another member's by then.
func TestReaderEagerGenerationEndStopsQueuedMessages(t *testing.T) {
	stub := newCoopGroupStub(func(int) []int { return []int{0, 1} }, map[int32]int64{0: 1 << 40, 1: 1 << 40})
	hold := make(chan struct{})
	defer close(hold)
	stub.onJoin = func(n int) <-chan struct{} {
		if n == 2 {
			return hold
		}
		return nil
	}
	r := stubGroupReader(serveCoopGroupStub(t, stub), RangeGroupBalancer{}, func(c *ReaderConfig) {
		c.HeartbeatInterval = time.Millisecond
	})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := r.FetchMessage(ctx); err != nil {
		t.Fatal(err)
	}
	waitStub(t, stub, "a batch to be queued", func() bool { return r.queued.Load() > 0 })
	stub.startRebalance()
	waitStub(t, stub, "the member to rejoin", func() bool { return stub.joins >= 2 })
	wctx, wcancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer wcancel()
	if m, err := r.FetchMessage(wctx); err == nil {
		t.Fatalf("message %d@%d of the ended generation returned", m.Partition, m.Offset)
	} else if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
}
