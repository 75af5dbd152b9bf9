package kafka

// A classic member whose heartbeat or commit is answered UNKNOWN_MEMBER_ID
// (dropped by the coordinator) has lost its partitions: the Reader stops
// them before the member joins again, at once, as a new member; late
// commits of the lost generation neither fence it nor drop the new ID.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/heartbeat"
	"github.com/segmentio/kafka-go/protocol/joingroup"
	"github.com/segmentio/kafka-go/protocol/leavegroup"
	"github.com/segmentio/kafka-go/protocol/offsetcommit"
)

// forgettingCoopStub is a coopGroupStub whose coordinator, once forget is
// called, refuses JoinGroups carrying the forgotten member ID (as Kafka
// does), until a JoinGroup without a member ID comes. Refused JoinGroups
// do not count as joins of the coopGroupStub.
type forgettingCoopStub struct {
	*coopGroupStub
	fmu       sync.Mutex
	forgotten string
	refused   int
}

// dropFirstMember makes the coordinator drop member m-1 (its heartbeats
// and commits of generation 1 answered UNKNOWN_MEMBER_ID, its ID refused)
// and waits for the member's next JoinGroup, which closes joined.
func (s *forgettingCoopStub) dropFirstMember(ctx context.Context, t *testing.T, joined <-chan struct{}) {
	t.Helper()
	s.mu.Lock()
	s.badGen, s.badCode = 1, int16(UnknownMemberId)
	s.mu.Unlock()
	s.forget("m-1")
	select {
	case <-joined:
	case <-ctx.Done():
		t.Fatal("no rejoin")
	}
}

func (s *forgettingCoopStub) forget(memberID string) {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	s.forgotten = memberID
}

func (s *forgettingCoopStub) RoundTrip(ctx context.Context, addr net.Addr, req Request) (Response, error) {
	if j, ok := req.(*joingroup.Request); ok {
		s.fmu.Lock()
		if s.forgotten != "" && j.MemberID == s.forgotten {
			s.refused++
			s.fmu.Unlock()
			return &joingroup.Response{ErrorCode: int16(UnknownMemberId)}, nil
		}
		if j.MemberID == "" {
			s.forgotten = ""
		}
		s.fmu.Unlock()
	}
	return s.coopGroupStub.RoundTrip(ctx, addr, req)
}

func serveForgettingCoopStub(t *testing.T, s *forgettingCoopStub) net.Addr {
	return serveGroupStub(t, s.coopGroupStub, s)
}

// A cooperative Reader whose heartbeat is answered UNKNOWN_MEMBER_ID (its
// session expired: the coordinator has handed its partitions to others)
// must stop reading its partitions while it joins again, as it does when a
// commit gets the same answer (TestReaderCooperativeUnknownMemberCommitStopsPartitions):
// Next reports the loss, and the Reader calls stopCooperative.
func TestMemberLostCooperativeHeartbeatUnknownMemberStopsPartitions(t *testing.T) {
	stub := &forgettingCoopStub{coopGroupStub: newCoopGroupStub(func(int) []int { return []int{0, 1} }, map[int32]int64{0: 1 << 40, 1: 1 << 40})}
	joined2, hold := stub.holdJoin(2) // the coordinator holds the new member's join (others are slow to rejoin)
	defer close(hold)
	r := stubGroupReader(serveForgettingCoopStub(t, stub), CooperativeStickyGroupBalancer{}, func(c *ReaderConfig) {
		c.JoinGroupBackoff = 10 * time.Millisecond
	})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := r.FetchMessage(ctx); err != nil {
		t.Fatal(err)
	}
	stub.dropFirstMember(ctx, t, joined2)
	// The join may start while the Reader is still stopping its partition
	// readers (it heard of the loss just before): wait until no fetch came
	// for 200 ms (they fetch every MaxWait, 10 ms, while they run), or 5 s.
	before := settledFetches(func() int {
		stub.mu.Lock()
		defer stub.mu.Unlock()
		return stub.fetches[0] + stub.fetches[1]
	}, 200*time.Millisecond, 5*time.Second)
	// Both partitions have records without end: any message now comes from
	// a partition reader the coordinator no longer counts as this member's.
	wctx, wcancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer wcancel()
	delivered := 0
	var first Message
	for {
		m, err := r.FetchMessage(wctx)
		if err != nil {
			break
		}
		if delivered == 0 {
			first = m
		}
		delivered++
	}
	stub.mu.Lock()
	during := stub.fetches[0] + stub.fetches[1] - before
	stub.mu.Unlock()
	if delivered > 0 || during > 0 {
		t.Fatalf("while rejoining after UNKNOWN_MEMBER_ID (heartbeat): %d messages delivered (first %d@%d), %d fetches of the lost partitions",
			delivered, first.Partition, first.Offset, during)
	}
}

// A cooperative Reader that lost its membership (heartbeat answered
// UNKNOWN_MEMBER_ID) and gets a partition back as a new member must read
// it from the group's committed offset: meanwhile another member owned it
// and committed further. A partition reader kept across the loss goes on
// from where it was, and delivers again what the other member consumed.
func TestMemberLostCooperativeLostPartitionRestartsAtCommitted(t *testing.T) {
	stub := &forgettingCoopStub{coopGroupStub: newCoopGroupStub(func(int) []int { return []int{0} }, map[int32]int64{0: 1 << 40})}
	joined2, hold := stub.holdJoin(2)
	r := stubGroupReader(serveForgettingCoopStub(t, stub), CooperativeStickyGroupBalancer{}, func(c *ReaderConfig) {
		c.JoinGroupBackoff = 10 * time.Millisecond
	})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if m, err := r.FetchMessage(ctx); err != nil || m.Offset != 0 {
		t.Fatalf("first message %d, %v", m.Offset, err)
	}
	stub.dropFirstMember(ctx, t, joined2)
	// While this member was out of the group, another one read partition
	// 0 up to 1000 and committed.
	stub.mu.Lock()
	stub.committed[0] = 1000
	stub.mu.Unlock()
	close(hold)
	// Let generation 2 start (its SyncGroup, OffsetFetch, reconcile).
	waitStub(t, stub.coopGroupStub, "join 2 answered", func() bool { return stub.joins >= 2 })
	time.Sleep(200 * time.Millisecond)
	below, last := 0, int64(-1)
	for i := 0; i < 60; i++ {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m.Offset < 1000 {
			below, last = below+1, m.Offset
		}
	}
	if below > 0 {
		t.Fatalf("generation 2 (new member, committed offset 1000): %d of 60 messages below 1000, the last at offset %d: the partition reader kept across the loss goes on from its old position", below, last)
	}
}

// The same with an eager balancer: unchanged behaviour, the partition
// readers stop with the generation and the next generation reads from the
// committed offset.
func TestMemberLostEagerLostPartitionRestartsAtCommitted(t *testing.T) {
	stub := &forgettingCoopStub{coopGroupStub: newCoopGroupStub(func(int) []int { return []int{0} }, map[int32]int64{0: 1 << 40})}
	joined2, hold := stub.holdJoin(2)
	r := stubGroupReader(serveForgettingCoopStub(t, stub), RangeGroupBalancer{}, func(c *ReaderConfig) {
		c.JoinGroupBackoff = 10 * time.Millisecond
	})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if m, err := r.FetchMessage(ctx); err != nil || m.Offset != 0 {
		t.Fatalf("first message %d, %v", m.Offset, err)
	}
	stub.dropFirstMember(ctx, t, joined2)
	// A fetch sent before the stop may arrive after the JoinGroup: count
	// from a quiet window (settledFetches).
	before := settledFetches(func() int {
		stub.mu.Lock()
		defer stub.mu.Unlock()
		return stub.fetches[0]
	}, 100*time.Millisecond, 2*time.Second)
	time.Sleep(100 * time.Millisecond)
	stub.mu.Lock()
	during := stub.fetches[0] - before
	stub.committed[0] = 1000
	stub.mu.Unlock()
	if during != 0 {
		t.Errorf("eager: partition 0 fetched %d times while rejoining", during)
	}
	close(hold)
	waitStub(t, stub.coopGroupStub, "join 2 answered", func() bool { return stub.joins >= 2 })
	time.Sleep(200 * time.Millisecond)
	for i := 0; i < 30; i++ {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m.Offset < 1000 {
			t.Fatalf("eager, after rejoining: message %d@%d below the committed offset 1000 (read %d)", m.Partition, m.Offset, i)
		}
	}
	stub.fmu.Lock()
	refused := stub.refused
	stub.fmu.Unlock()
	if refused != 0 {
		t.Errorf("%d JoinGroups with the forgotten member ID", refused)
	}
}

// endGeneration makes the stub answer heartbeats with code until gen ends,
// then answers them without error again.
func endGeneration(t *testing.T, stub *stubCoordinator, gen *Generation, code Error) {
	t.Helper()
	stub.mu.Lock()
	stub.heartbeat = int16(code)
	stub.mu.Unlock()
	ended := make(chan struct{})
	gen.Start(func(ctx context.Context) { <-ctx.Done(); close(ended) })
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("generation did not end")
	}
	stub.mu.Lock()
	stub.heartbeat = 0
	stub.mu.Unlock()
}

func joinsSince(stub *stubCoordinator, seen int) []*joingroup.Request {
	stub.mu.Lock()
	defer stub.mu.Unlock()
	var joins []*joingroup.Request
	for _, req := range stub.requests[seen:] {
		if j, ok := req.(*joingroup.Request); ok {
			joins = append(joins, j)
		}
	}
	return joins
}

func requestCount(stub *stubCoordinator) int {
	stub.mu.Lock()
	defer stub.mu.Unlock()
	return len(stub.requests)
}

// A late commit of a stale generation, answered UNKNOWN_MEMBER_ID, does
// not mark the current generation of a healthy member: it keeps its
// member ID at the next rebalance. Two cases: the stale generation had
// the same member ID (a rebalance), and it had the ID the member lost.
func TestMemberLostStaleCommitLeavesCurrentGeneration(t *testing.T) {
	for _, balancer := range []GroupBalancer{RangeGroupBalancer{}, CooperativeStickyGroupBalancer{}} {
		t.Run(balancer.ProtocolName(), func(t *testing.T) {
			stub := &stubCoordinator{committed: map[int32]int64{}, left: make(chan string, 8), alone: true}
			cg, err := NewConsumerGroup(ConsumerGroupConfig{
				ID:                "g",
				Brokers:           unreachableBrokers,
				Topics:            []string{"t"},
				GroupBalancers:    []GroupBalancer{balancer},
				HeartbeatInterval: 20 * time.Millisecond,
				JoinGroupBackoff:  time.Hour,
				transport:         stub,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer cg.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			gen1, err := cg.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			endGeneration(t, stub, gen1, RebalanceInProgress)
			gen2, err := cg.Next(ctx)
			if err != nil || gen2.MemberID != "m-1" {
				t.Fatalf("gen2 %v, %v", gen2, err)
			}
			// A commit of gen1 comes late, and is answered UNKNOWN_MEMBER_ID.
			stub.mu.Lock()
			stub.commitErr = int16(UnknownMemberId)
			stub.newMemberID = "m-2"
			stub.mu.Unlock()
			if err := gen1.CommitOffsets(map[string]map[int]int64{"t": {0: 1}}); !errors.Is(err, UnknownMemberId) {
				t.Fatalf("stale commit: %v", err)
			}
			stub.mu.Lock()
			stub.commitErr = 0
			stub.mu.Unlock()
			seen := requestCount(stub)
			endGeneration(t, stub, gen2, RebalanceInProgress)
			gen3, err := cg.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if gen3.MemberID != "m-1" {
				t.Fatalf("after a stale generation's commit was refused, the member joined as %q, want m-1", gen3.MemberID)
			}
			if joins := joinsSince(stub, seen); len(joins) == 0 || joins[0].MemberID != "m-1" {
				t.Fatalf("joins %+v", joins)
			}

			// Now the member is forgotten for real and rejoins as m-2; a late
			// commit of gen3 (m-1) is refused; m-2 keeps its ID.
			stub.mu.Lock()
			stub.unknownMember = "m-1"
			stub.mu.Unlock()
			endGeneration(t, stub, gen3, UnknownMemberId)
			gen4, err := nextAfterLoss(ctx, cg)
			if err != nil || gen4.MemberID != "m-2" {
				t.Fatalf("gen4 %v, %v", gen4, err)
			}
			stub.mu.Lock()
			stub.commitErr = int16(UnknownMemberId)
			stub.newMemberID = "m-3"
			stub.mu.Unlock()
			if err := gen3.CommitOffsets(map[string]map[int]int64{"t": {0: 2}}); !errors.Is(err, UnknownMemberId) {
				t.Fatalf("stale commit: %v", err)
			}
			stub.mu.Lock()
			stub.commitErr = 0
			stub.mu.Unlock()
			seen = requestCount(stub)
			endGeneration(t, stub, gen4, RebalanceInProgress)
			gen5, err := cg.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if gen5.MemberID != "m-2" {
				t.Fatalf("member joined as %q after a stale commit of the lost ID, want m-2", gen5.MemberID)
			}
			if joins := joinsSince(stub, seen); len(joins) == 0 || joins[0].MemberID != "m-2" {
				t.Fatalf("joins %+v", joins)
			}
		})
	}
}

// A static member forgotten by the coordinator joins again with its
// GroupInstanceID and no member ID (the coordinator gives it one at once),
// sends no LeaveGroup, and claims no partitions.
func TestMemberLostStaticMemberRejoins(t *testing.T) {
	stub := &stubCoordinator{committed: map[int32]int64{}, left: make(chan string, 4), alone: true}
	cg, err := NewConsumerGroup(ConsumerGroupConfig{
		ID:                "g",
		Brokers:           unreachableBrokers,
		Topics:            []string{"t"},
		GroupBalancers:    []GroupBalancer{CooperativeStickyGroupBalancer{}},
		GroupInstanceID:   "host-1",
		HeartbeatInterval: 20 * time.Millisecond,
		JoinGroupBackoff:  time.Hour,
		transport:         stub,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	gen, err := cg.Next(ctx)
	if err != nil || gen.MemberID != "m-1" {
		t.Fatalf("gen %v, %v", gen, err)
	}
	stub.mu.Lock()
	stub.unknownMember, stub.newMemberID = "m-1", "m-2"
	stub.mu.Unlock()
	seen := requestCount(stub)
	endGeneration(t, stub, gen, UnknownMemberId)
	gen2, err := nextAfterLoss(ctx, cg)
	if err != nil || gen2.MemberID != "m-2" {
		t.Fatalf("gen2 %v, %v", gen2, err)
	}
	joins := joinsSince(stub, seen)
	if len(joins) != 1 || joins[0].MemberID != "" || joins[0].GroupInstanceID != "host-1" {
		t.Fatalf("joins after the loss: %+v", joins)
	}
	sub, err := decodeSubscription(joins[0].Protocols[0].Metadata)
	if err != nil || len(sub.OwnedPartitions) != 0 {
		t.Fatalf("subscription %+v, %v", sub, err)
	}
	stub.mu.Lock()
	for _, r := range stub.requests[seen:] {
		if _, ok := r.(*leavegroup.Request); ok {
			t.Errorf("static member sent LeaveGroup: %+v", r)
		}
	}
	stub.mu.Unlock()
}

// noteError: only UNKNOWN_MEMBER_ID (wrapped too), only in classic
// generations; lostMember reads it.
func TestMemberLostNoteError(t *testing.T) {
	classic := &Generation{}
	for _, err := range []error{nil, RebalanceInProgress, IllegalGeneration, FencedInstanceID, context.DeadlineExceeded, errors.New("x")} {
		classic.noteError(err)
	}
	if classic.lostMember() {
		t.Fatal("lost after other errors")
	}
	classic.noteError(fmt.Errorf("wrapped: %w", UnknownMemberId))
	if !classic.lostMember() {
		t.Fatal("wrapped UNKNOWN_MEMBER_ID not noted")
	}
	consumer := &Generation{memberEpoch: new(atomic.Int32)}
	consumer.noteError(UnknownMemberId)
	if consumer.lostMember() {
		t.Fatal(`"consumer" protocol generation marked lost`)
	}
}

// Heartbeat and commits noting the error concurrently while the group reads
// it (run with -race).
func TestMemberLostConcurrentNote(t *testing.T) {
	stub := &stubCoordinator{committed: map[int32]int64{}, left: make(chan string, 4), alone: true}
	cg, err := NewConsumerGroup(ConsumerGroupConfig{
		ID:                "g",
		Brokers:           unreachableBrokers,
		Topics:            []string{"t"},
		HeartbeatInterval: time.Millisecond,
		JoinGroupBackoff:  time.Hour,
		transport:         stub,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	gen, err := cg.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stub.mu.Lock()
	stub.unknownMember, stub.newMemberID = "m-1", "m-2"
	stub.heartbeat, stub.commitErr = int16(UnknownMemberId), int16(UnknownMemberId)
	stub.mu.Unlock()
	// Commits note the error while the heartbeat does, until the
	// heartbeat ends the generation and the group reads the flag.
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; !gen.over() || j < 20; j++ {
				gen.CommitOffsets(map[string]map[int]int64{"t": {0: int64(j)}})
			}
		}()
	}
	wg.Wait()
	stub.mu.Lock()
	stub.heartbeat, stub.commitErr = 0, 0
	stub.mu.Unlock()
	gen2, err := nextAfterLoss(ctx, cg)
	if err != nil || gen2.MemberID != "m-2" {
		t.Fatalf("gen2 %v, %v", gen2, err)
	}
}

// staticCoopStub is a coopGroupStub whose coordinator keeps one static
// member (GroupInstanceID set) as Kafka does: a JoinGroup without member
// ID gets a new one (m-1, m-2, ...) that replaces the instance's previous
// ID; heartbeats and commits of another member ID of the instance are
// answered FENCED_INSTANCE_ID; once expire is called (the session timed
// out) the instance is unknown: heartbeats, commits and JoinGroups with a
// member ID get UNKNOWN_MEMBER_ID until a JoinGroup without one.
type staticCoopStub struct {
	*coopGroupStub
	smu     sync.Mutex
	current string
	ids     int
	expired bool
	refused int
	fenced  []string
}

func (s *staticCoopStub) expire() {
	s.smu.Lock()
	defer s.smu.Unlock()
	s.expired = true
}

func (s *staticCoopStub) RoundTrip(ctx context.Context, addr net.Addr, req Request) (Response, error) {
	s.smu.Lock()
	switch r := req.(type) {
	case *joingroup.Request:
		if r.MemberID == "" {
			s.ids++
			s.current, s.expired = fmt.Sprintf("m-%d", s.ids), false
		} else if s.expired || r.MemberID != s.current {
			s.refused++
			s.smu.Unlock()
			return &joingroup.Response{ErrorCode: int16(UnknownMemberId)}, nil
		}
		current := s.current
		s.smu.Unlock()
		res, err := s.coopGroupStub.RoundTrip(ctx, addr, req)
		if j, ok := res.(*joingroup.Response); ok {
			j.MemberID = current
		}
		return res, err
	case *heartbeat.Request:
		if code := s.check(r.MemberID); code != 0 {
			s.smu.Unlock()
			return &heartbeat.Response{ErrorCode: code}, nil
		}
	case *offsetcommit.Request:
		if code := s.check(r.MemberID); code != 0 {
			if code == int16(FencedInstanceID) {
				s.fenced = append(s.fenced, fmt.Sprintf("commit of %s, generation %d", r.MemberID, r.GenerationID))
			}
			s.smu.Unlock()
			return offsetCommitAnswer(r, code, nil), nil
		}
	}
	s.smu.Unlock()
	return s.coopGroupStub.RoundTrip(ctx, addr, req)
}

func (s *staticCoopStub) check(memberID string) int16 {
	switch {
	case s.expired:
		return int16(UnknownMemberId)
	case memberID != s.current:
		return int16(FencedInstanceID)
	}
	return 0
}

// A static member whose session expired rejoins at once with its
// GroupInstanceID and gets a new member ID. The commit loop of the lost
// generation, started by a Reader slow to take that generation (as in
// TestReaderCooperativeStaleCommitLoopLeavesNextGeneration), is not waited
// for by the group: its flush, with the old member ID, may reach the
// coordinator after the new JoinGroup and be answered FENCED_INSTANCE_ID.
// That must not stop the Reader for good as if another process owned its
// GroupInstanceID: the generation is known lost, so the answer is about the
// old ID; and UNKNOWN_MEMBER_ID is not retried (the retries ~0.5 s later
// were the commits fenced).
func TestMemberLostStaticStaleCommitLoopNotFenced(t *testing.T) {
	stub := &staticCoopStub{coopGroupStub: newCoopGroupStub(func(int) []int { return []int{0, 1} }, map[int32]int64{0: 1 << 40, 1: 1 << 40})}
	joined2, hold := stub.holdJoin(2)
	fc := fakebroker.New(t, 1)
	fc.SetLeader(1, 1)
	fc.Brokers[0].SetApiKey(protocol.OffsetFetch, 1, 7)
	stub.coord = fc.Brokers[0]
	serveStub(t, fc, stub)
	r := stubGroupReader(fc.Addr(), CooperativeStickyGroupBalancer{}, func(c *ReaderConfig) {
		c.GroupInstanceID = "host-1"
		c.CommitInterval = time.Hour // JoinGroupBackoff: the default, 5 s
	})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := r.FetchMessage(ctx); err != nil {
		t.Fatal(err)
	}
	stub.startRebalance()
	<-joined2
	// Read while the rebalance goes on: committed by the next commit loop.
	if _, err := r.ReadMessage(ctx); err != nil {
		t.Fatal(err)
	}
	// The session of host-1 expires meanwhile: generation 2's heartbeats
	// are answered UNKNOWN_MEMBER_ID.
	stub.expire()
	// The Reader's group loop is slow to take generation 2.
	r.mu.Lock()
	close(hold)
	// Generation 2's heartbeats fail meanwhile; the rejoin waits for the
	// Reader to hear of the loss (Next), which it does once it lets go.
	time.Sleep(300 * time.Millisecond)
	r.mu.Unlock()
	time.Sleep(time.Second) // the stale loop's flush
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	for i := 0; i < 50; i++ {
		if _, err := r.FetchMessage(wctx); err != nil {
			stub.smu.Lock()
			fenced := stub.fenced
			stub.smu.Unlock()
			t.Fatalf("after %d messages: %v (requests answered FENCED_INSTANCE_ID: %v)", i, err, fenced)
		}
	}
}

// The harm of the previous two: a message of a partition the member lost
// (heartbeat answered UNKNOWN_MEMBER_ID), delivered while it rejoins, is
// committed by the program under the new member's generation, which the
// coordinator accepts: the offset another member committed for that
// partition meanwhile goes back.
func TestMemberLostCooperativeLostPartitionCommitRegresses(t *testing.T) {
	stub := &forgettingCoopStub{coopGroupStub: newCoopGroupStub(func(gen int) []int {
		if gen == 1 {
			return []int{0, 1}
		}
		return []int{0} // partition 1 is another member's now
	}, map[int32]int64{0: 1 << 40, 1: 1 << 40})}
	joined2, hold := stub.holdJoin(2)
	r := stubGroupReader(serveForgettingCoopStub(t, stub), CooperativeStickyGroupBalancer{}, func(c *ReaderConfig) {
		c.JoinGroupBackoff = 10 * time.Millisecond
	})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := r.FetchMessage(ctx); err != nil {
		t.Fatal(err)
	}
	stub.dropFirstMember(ctx, t, joined2)
	var lost *Message
	wctx, wcancel := context.WithTimeout(ctx, 500*time.Millisecond)
	for lost == nil {
		m, err := r.FetchMessage(wctx)
		if err != nil {
			break
		}
		if m.Partition == 1 {
			lost = &m
		}
	}
	wcancel()
	// Another member owns partition 1 and has committed up to 1000.
	stub.mu.Lock()
	stub.committed[1] = 1000
	stub.mu.Unlock()
	close(hold)
	waitStub(t, stub.coopGroupStub, "join 2 answered", func() bool { return stub.joins >= 2 })
	time.Sleep(200 * time.Millisecond)
	if lost == nil {
		return // nothing of the lost partition was delivered
	}
	err := r.CommitMessages(ctx, *lost)
	stub.mu.Lock()
	committed := stub.committed[1]
	stub.mu.Unlock()
	if committed != 1000 {
		t.Fatalf("message 1@%d, read while the member was out of the group, committed (%v) as the new member: partition 1's committed offset went from 1000 back to %d",
			lost.Offset, err, committed)
	}
}
