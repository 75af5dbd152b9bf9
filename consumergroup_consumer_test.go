package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/apiversions"
	cgh "github.com/segmentio/kafka-go/protocol/consumergroupheartbeat"
	"github.com/segmentio/kafka-go/protocol/metadata"
	"github.com/segmentio/kafka-go/protocol/offsetcommit"
	"github.com/segmentio/kafka-go/protocol/offsetfetch"
)

var stubTopicID = [16]byte{0: 't', 15: 1}

// stub848 is a coordinator of the "consumer" protocol whose assignment
// the test sets: every heartbeat is answered with epoch and assign (topic
// t); fence makes the next one fail with FENCED_MEMBER_EPOCH. old makes
// ApiVersions leave ConsumerGroupHeartbeat out, as brokers before 4.0 do.
type stub848 struct {
	mu       sync.Mutex
	requests []protocol.Message
	epoch    int32
	assign   []int32
	fence    bool
	old      bool
	// failNext answers the next heartbeat with this error code;
	// staleCommits answers that many commits with STALE_MEMBER_EPOCH.
	failNext     int16
	staleCommits int

	// onHeartbeat, when set, sees each heartbeat before it is answered.
	onHeartbeat func(*cgh.Request)
}

func (s *stub848) RoundTrip(ctx context.Context, addr net.Addr, req Request) (Response, error) {
	if hb, ok := req.(*cgh.Request); ok {
		s.mu.Lock()
		fn := s.onHeartbeat
		s.mu.Unlock()
		if fn != nil {
			fn(hb)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)
	switch r := req.(type) {
	case *apiversions.Request:
		res := &apiversions.Response{ApiKeys: []apiversions.ApiKeyResponse{{ApiKey: int16(protocol.OffsetCommit), MaxVersion: 9}}}
		if !s.old {
			res.ApiKeys = append(res.ApiKeys, apiversions.ApiKeyResponse{ApiKey: int16(protocol.ConsumerGroupHeartbeat), MaxVersion: 1})
		}
		return res, nil
	case *cgh.Request:
		switch {
		case r.MemberEpoch < 0:
			return &cgh.Response{MemberID: r.MemberID, MemberEpoch: r.MemberEpoch}, nil
		case s.fence:
			s.fence = false
			return &cgh.Response{ErrorCode: int16(FencedMemberEpoch), MemberEpoch: -1}, nil
		case s.failNext != 0:
			code := s.failNext
			s.failNext = 0
			return &cgh.Response{ErrorCode: code}, nil
		}
		res := &cgh.Response{MemberEpoch: s.epoch, HeartbeatIntervalMs: 5}
		if r.MemberEpoch == 0 {
			res.MemberID = r.MemberID
		}
		res.Assignment = &cgh.Assignment{TopicPartitions: []cgh.TopicPartitions{{TopicID: stubTopicID, Partitions: slices.Clone(s.assign)}}}
		return res, nil
	case *metadata.Request:
		res := &metadata.Response{Brokers: []metadata.ResponseBroker{{NodeID: 1, Host: "h", Port: 9092}}}
		res.Topics = []metadata.ResponseTopic{{Name: "t", TopicID: stubTopicID}}
		for i := int32(0); i < 4; i++ {
			res.Topics[0].Partitions = append(res.Topics[0].Partitions, metadata.ResponsePartition{PartitionIndex: i, LeaderID: 1})
		}
		return res, nil
	case *offsetfetch.Request:
		return offsetFetchAnswer(r, nil), nil
	case *offsetcommit.Request:
		var code int16
		if s.staleCommits > 0 {
			s.staleCommits--
			code = int16(StaleMemberEpoch)
		}
		return offsetCommitAnswer(r, code, nil), nil
	}
	return nil, fmt.Errorf("unexpected request %T", req)
}

func (s *stub848) set(epoch int32, assign ...int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch, s.assign = epoch, assign
}

// find returns the index of the first request from from on that match
// accepts, or -1.
func (s *stub848) find(from int, match func(protocol.Message) bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := from; i < len(s.requests); i++ {
		if match(s.requests[i]) {
			return i
		}
	}
	return -1
}

func (s *stub848) waitFor(t *testing.T, what string, from int, match func(protocol.Message) bool) (int, protocol.Message) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if i := s.find(from, match); i >= 0 {
			s.mu.Lock()
			defer s.mu.Unlock()
			return i, s.requests[i]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// owning matches a heartbeat that says the member owns exactly parts of t
// with epoch.
func owning(epoch int32, parts ...int32) func(protocol.Message) bool {
	return func(m protocol.Message) bool {
		hb, ok := m.(*cgh.Request)
		if !ok || hb.MemberEpoch != epoch || hb.TopicPartitions == nil {
			return false
		}
		var got []int32
		for _, tp := range hb.TopicPartitions {
			if tp.TopicID != stubTopicID {
				return false
			}
			got = append(got, tp.Partitions...)
		}
		slices.Sort(got)
		return slices.Equal(got, parts)
	}
}

func newStub848Reader(stub *stub848, modify func(*ReaderConfig)) *Reader {
	config := ReaderConfig{
		Brokers:          unreachableBrokers,
		GroupID:          "g",
		Topic:            "t",
		GroupProtocol:    GroupProtocolConsumer,
		ServerAssignor:   "uniform",
		GroupInstanceID:  "host-1",
		CommitInterval:   time.Hour,
		JoinGroupBackoff: time.Millisecond,
		MaxWait:          10 * time.Millisecond,
		transport:        stub,
	}
	if modify != nil {
		modify(&config)
	}
	return NewReader(config)
}

// The exchange of a static member with the coordinator: it joins (epoch 0,
// its own member ID and instance ID, its topics, an empty owned set),
// acknowledges what it is assigned, and when the coordinator takes
// partition 1 away, commits the offset pending for it with the member
// epoch before it tells the coordinator it gave it up. Fenced, it joins
// again with epoch 0 and the same member ID; it leaves with epoch -2.
func TestConsumerProtocolExchange(t *testing.T) {
	stub := &stub848{}
	stub.set(1, 0, 1)
	r := newStub848Reader(stub, nil)

	_, m := stub.waitFor(t, "join", 0, func(m protocol.Message) bool { _, ok := m.(*cgh.Request); return ok })
	join := m.(*cgh.Request)
	if join.MemberEpoch != 0 || join.MemberID == "" || join.InstanceID != "host-1" || join.GroupID != "g" ||
		!slices.Equal(join.SubscribedTopicNames, []string{"t"}) || join.RebalanceTimeoutMs != 30000 ||
		join.ServerAssignor != "uniform" || join.TopicPartitions == nil || len(join.TopicPartitions) != 0 {
		t.Fatalf("join %+v", join)
	}
	memberID := join.MemberID
	acked, _ := stub.waitFor(t, "acknowledgement of partitions 0 and 1", 0, owning(1, 0, 1))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.CommitMessages(ctx, Message{Topic: "t", Partition: 1, Offset: 5}); err != nil {
		t.Fatal(err)
	}
	// When it says partition 1 is free, its partition reader is gone.
	var stillReading []bool
	stub.mu.Lock()
	stub.onHeartbeat = func(hb *cgh.Request) {
		if owning(2, 0)(hb) {
			r.mu.Lock()
			_, ok := r.coop[topicPartition{topic: "t", partition: 1}]
			r.mu.Unlock()
			stub.mu.Lock()
			stillReading = append(stillReading, ok)
			stub.mu.Unlock()
		}
	}
	stub.mu.Unlock()
	stub.set(2, 0)
	released, _ := stub.waitFor(t, "acknowledgement of partition 0 alone", acked, owning(2, 0))
	commit, m := stub.waitFor(t, "commit of partition 1", acked, func(m protocol.Message) bool {
		c, ok := m.(*offsetcommit.Request)
		return ok && len(c.Topics) == 1 && len(c.Topics[0].Partitions) == 1 && c.Topics[0].Partitions[0].PartitionIndex == 1
	})
	c := m.(*offsetcommit.Request)
	if commit > released {
		t.Errorf("partition 1 committed (request %d) after it was given up (request %d)", commit, released)
	}
	stub.mu.Lock()
	if len(stillReading) == 0 || stillReading[0] {
		t.Errorf("partition 1 given up while its partition reader ran: %v", stillReading)
	}
	stub.onHeartbeat = nil
	stub.mu.Unlock()
	if c.MemberID != memberID || c.GenerationID != 2 || c.GroupInstanceID != "host-1" || c.Topics[0].Partitions[0].CommittedOffset != 6 {
		t.Errorf("commit %+v", c)
	}

	stub.mu.Lock()
	stub.fence = true
	from := len(stub.requests)
	stub.mu.Unlock()
	_, m = stub.waitFor(t, "join after being fenced", from, func(m protocol.Message) bool {
		hb, ok := m.(*cgh.Request)
		return ok && hb.MemberEpoch == 0
	})
	if rejoin := m.(*cgh.Request); rejoin.MemberID != memberID || rejoin.TopicPartitions == nil || len(rejoin.TopicPartitions) != 0 || rejoin.SubscribedTopicNames == nil {
		t.Errorf("rejoin %+v", rejoin)
	}
	stub.waitFor(t, "acknowledgement after the rejoin", from, owning(2, 0))

	r.Close()
	_, m = stub.waitFor(t, "leave", from, func(m protocol.Message) bool {
		hb, ok := m.(*cgh.Request)
		return ok && hb.MemberEpoch < 0
	})
	if leave := m.(*cgh.Request); leave.MemberEpoch != cgh.StaticLeaveEpoch || leave.MemberID != memberID {
		t.Errorf("leave %+v", leave)
	}
}

// A dynamic member leaves with epoch -1.
func TestConsumerProtocolDynamicLeave(t *testing.T) {
	stub := &stub848{}
	stub.set(1, 0)
	r := newStub848Reader(stub, func(c *ReaderConfig) { c.GroupInstanceID = "" })
	stub.waitFor(t, "acknowledgement", 0, owning(1, 0))
	r.Close()
	_, m := stub.waitFor(t, "leave", 0, func(m protocol.Message) bool {
		hb, ok := m.(*cgh.Request)
		return ok && hb.MemberEpoch < 0
	})
	if leave := m.(*cgh.Request); leave.MemberEpoch != cgh.LeaveEpoch || leave.InstanceID != "" {
		t.Errorf("leave %+v", leave)
	}
}

// A broker without ConsumerGroupHeartbeat gets no heartbeat: the Reader
// fails, for good, with an error that names the option and the Kafka
// version it needs.
func TestConsumerProtocolOldBroker(t *testing.T) {
	stub := &stub848{old: true}
	r := newStub848Reader(stub, nil)
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := 0; i < 2; i++ {
		_, err := r.FetchMessage(ctx)
		if !errors.Is(err, UnsupportedVersion) || !strings.Contains(err.Error(), `ReaderConfig.GroupProtocol "consumer" needs Kafka 4.0`) {
			t.Fatalf("error %v", err)
		}
	}
	if i := stub.find(0, func(m protocol.Message) bool { _, ok := m.(*cgh.Request); return ok }); i >= 0 {
		t.Fatal("a heartbeat was sent")
	}

	cg, err := NewConsumerGroup(ConsumerGroupConfig{ID: "g", Brokers: unreachableBrokers, Topics: []string{"t"},
		GroupProtocol: GroupProtocolConsumer, transport: stub})
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	if _, err := cg.Next(ctx); !errors.Is(err, UnsupportedVersion) || !strings.Contains(err.Error(), `ConsumerGroupConfig.GroupProtocol "consumer" needs Kafka 4.0`) {
		t.Fatalf("ConsumerGroup: %v", err)
	}
}

func TestConsumerProtocolValidate(t *testing.T) {
	cg := ConsumerGroupConfig{ID: "g", Brokers: unreachableBrokers, Topics: []string{"t"}, ServerAssignor: "range"}
	if err := cg.Validate(); err == nil || err.Error() != `kafka: ServerAssignor needs ConsumerGroupConfig.GroupProtocol "consumer"` {
		t.Errorf("ConsumerGroupConfig: %v", err)
	}
	base := ReaderConfig{Brokers: unreachableBrokers, Topic: "t", GroupID: "g"}
	for _, tc := range []struct {
		modify func(*ReaderConfig)
		err    string
	}{
		{func(c *ReaderConfig) { c.GroupProtocol = "classic" }, ""},
		{func(c *ReaderConfig) { c.GroupProtocol = "consumer"; c.ServerAssignor = "range" }, ""},
		{func(c *ReaderConfig) { c.GroupProtocol = "next" }, `kafka: ReaderConfig.GroupProtocol is "next": it must be "classic" (the default) or "consumer"`},
		{func(c *ReaderConfig) { c.ServerAssignor = "range" }, `kafka: ServerAssignor needs ReaderConfig.GroupProtocol "consumer"`},
		{func(c *ReaderConfig) { c.GroupID = ""; c.GroupProtocol = "consumer" }, "GroupProtocol and ServerAssignor are only available with GroupID"},
		{func(c *ReaderConfig) {
			c.GroupProtocol = "consumer"
			c.GroupBalancers = []GroupBalancer{RangeGroupBalancer{}}
		}, `kafka: ReaderConfig.GroupBalancers cannot be used with GroupProtocol "consumer": the broker's group.consumer.* settings replace it`},
		{func(c *ReaderConfig) { c.GroupProtocol = "consumer"; c.SessionTimeout = time.Second },
			`kafka: ReaderConfig.SessionTimeout cannot be used with GroupProtocol "consumer": the broker's group.consumer.* settings replace it`},
		{func(c *ReaderConfig) { c.GroupProtocol = "consumer"; c.HeartbeatInterval = time.Second },
			`kafka: ReaderConfig.HeartbeatInterval cannot be used with GroupProtocol "consumer": the broker's group.consumer.* settings replace it`},
	} {
		c := base
		tc.modify(&c)
		err := c.Validate()
		if (err == nil) != (tc.err == "") || err != nil && err.Error() != tc.err {
			t.Errorf("%+v: %v, want %q", c, err, tc.err)
		}
	}
}

// A heartbeat that finds no coordinator does not cost the member its
// partitions: it keeps reading them, and says everything again (topics,
// owned partitions, same epoch) in the next heartbeat. A commit refused
// with STALE_MEMBER_EPOCH is sent again, and succeeds.
func TestConsumerProtocolTransientErrors(t *testing.T) {
	stub := &stub848{}
	stub.set(3, 0, 1)
	r := newStub848Reader(stub, func(c *ReaderConfig) { c.CommitInterval = 0 })
	defer r.Close()
	acked, _ := stub.waitFor(t, "acknowledgement", 0, owning(3, 0, 1))
	stub.mu.Lock()
	stub.failNext = int16(NotCoordinatorForGroup)
	stub.mu.Unlock()
	failed, _ := stub.waitFor(t, "failed heartbeat", acked+1, func(m protocol.Message) bool { _, ok := m.(*cgh.Request); return ok })
	_, m := stub.waitFor(t, "heartbeat after the failure", failed+1, func(m protocol.Message) bool { _, ok := m.(*cgh.Request); return ok })
	if hb := m.(*cgh.Request); !owning(3, 0, 1)(hb) || hb.SubscribedTopicNames == nil || hb.RebalanceTimeoutMs != 30000 {
		t.Fatalf("heartbeat after the failure %+v", hb)
	}
	r.mu.Lock()
	readers := len(r.coop)
	r.mu.Unlock()
	if readers != 2 {
		t.Fatalf("%d partition readers after a failed heartbeat, want 2", readers)
	}

	stub.mu.Lock()
	stub.staleCommits = 1
	stub.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.CommitMessages(ctx, Message{Topic: "t", Partition: 0, Offset: 9}); err != nil {
		t.Fatalf("commit after STALE_MEMBER_EPOCH: %v", err)
	}
	if n := stub.find(0, func(m protocol.Message) bool { _, ok := m.(*offsetcommit.Request); return ok }); n < 0 {
		t.Fatal("no commit")
	}
	commits := 0
	for i := 0; ; i++ {
		j := stub.find(i, func(m protocol.Message) bool { _, ok := m.(*offsetcommit.Request); return ok })
		if j < 0 {
			break
		}
		commits++
		i = j
	}
	if commits != 2 {
		t.Fatalf("%d commits, want 2 (one refused, one retried)", commits)
	}
}
