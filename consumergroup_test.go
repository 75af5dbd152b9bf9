package kafka

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/apiversions"
	"github.com/segmentio/kafka-go/protocol/consumer"
	"github.com/segmentio/kafka-go/protocol/heartbeat"
	"github.com/segmentio/kafka-go/protocol/joingroup"
	"github.com/segmentio/kafka-go/protocol/leavegroup"
	"github.com/segmentio/kafka-go/protocol/metadata"
	"github.com/segmentio/kafka-go/protocol/offsetcommit"
	"github.com/segmentio/kafka-go/protocol/offsetfetch"
	"github.com/segmentio/kafka-go/protocol/syncgroup"
)

func TestConsumerGroupConfigValidate(t *testing.T) {
	valid := ConsumerGroupConfig{ID: "g", Brokers: unreachableBrokers, Topics: []string{"t"}}
	tests := []struct {
		name   string
		modify func(*ConsumerGroupConfig)
		err    string
	}{
		{"no brokers", func(c *ConsumerGroupConfig) { c.Brokers = nil }, "cannot create a consumer group with an empty list of broker addresses"},
		{"no topics", func(c *ConsumerGroupConfig) { c.Topics = nil }, "cannot create a consumer group without a topic"},
		{"no ID", func(c *ConsumerGroupConfig) { c.ID = "" }, "cannot create a consumer group without an ID"},
		{"heartbeat", func(c *ConsumerGroupConfig) { c.HeartbeatInterval = -1 }, "HeartbeatInterval out of bounds: -1"},
		{"session", func(c *ConsumerGroupConfig) { c.SessionTimeout = -1 }, "SessionTimeout out of bounds: -1"},
		{"huge session", func(c *ConsumerGroupConfig) { c.SessionTimeout = 1 << 62 }, fmt.Sprintf("SessionTimeout out of bounds: %d", int64(1<<62))},
		{"rebalance", func(c *ConsumerGroupConfig) { c.RebalanceTimeout = -1 }, "RebalanceTimeout out of bounds: -1"},
		{"join backoff", func(c *ConsumerGroupConfig) { c.JoinGroupBackoff = -1 }, "JoinGroupBackoff out of bounds: -1"},
		{"retention", func(c *ConsumerGroupConfig) { c.RetentionTime = -2 * time.Millisecond }, "RetentionTime out of bounds: -2000000"},
		{"watch", func(c *ConsumerGroupConfig) { c.PartitionWatchInterval = -1 }, "PartitionWachInterval out of bounds -1"},
		{"start offset", func(c *ConsumerGroupConfig) { c.StartOffset = 5 }, "StartOffset is not valid 5"},
	}
	for _, tt := range tests {
		c := valid
		tt.modify(&c)
		err := c.Validate()
		if err == nil || err.Error() != tt.err {
			t.Errorf("%s: got %v, want %q", tt.name, err, tt.err)
		}
		if _, err := NewConsumerGroup(c); err == nil {
			t.Errorf("%s: NewConsumerGroup accepted the config", tt.name)
		}
	}

	c := valid
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Dialer != DefaultDialer || len(c.GroupBalancers) != 2 || c.HeartbeatInterval != 3*time.Second ||
		c.SessionTimeout != 30*time.Second || c.RebalanceTimeout != 30*time.Second || c.JoinGroupBackoff != 5*time.Second ||
		c.RetentionTime != -time.Millisecond || c.PartitionWatchInterval != 5*time.Second || c.StartOffset != FirstOffset ||
		c.Timeout != 5*time.Second {
		t.Fatalf("defaults: %+v", c)
	}
	c = valid
	c.StartOffset = LastOffset
	if err := c.Validate(); err != nil || c.StartOffset != LastOffset {
		t.Fatal(err)
	}
}

func TestGenerationStart(t *testing.T) {
	gen := &Generation{ended: make(chan struct{}), log: func(func(Logger)) {}}
	started := make(chan struct{})
	var errs []error
	var mu sync.Mutex
	gen.Start(func(ctx context.Context) {
		close(started)
		<-ctx.Done()
		mu.Lock()
		errs = append(errs, ctx.Err())
		mu.Unlock()
	})
	<-started
	// One function returning ends the generation for the others.
	second := make(chan error, 1)
	gen.Start(func(ctx context.Context) { second <- ctx.Err() })
	if err := <-second; err != nil {
		t.Fatalf("context done too early: %v", err)
	}
	gen.close()
	if len(errs) != 1 || !errors.Is(errs[0], ErrGenerationEnded) {
		t.Fatalf("errs %v", errs)
	}
	// After the end, Start still calls fn, with a done context.
	ran := make(chan error, 1)
	gen.Start(func(ctx context.Context) { ran <- ctx.Err() })
	if err := <-ran; !errors.Is(err, ErrGenerationEnded) {
		t.Fatalf("late fn: %v", err)
	}
	var ctx context.Context = generationContext{gen}
	if _, ok := ctx.Deadline(); ok || ctx.Value("k") != nil {
		t.Fatal("deadline or value")
	}
}

func TestDecodeSubscription(t *testing.T) {
	// What kafka-go releases write: version 1, topics and user data, but no
	// owned partitions.
	var old []byte
	old = binary.BigEndian.AppendUint16(old, 1)
	old = binary.BigEndian.AppendUint32(old, 2)
	old = append(binary.BigEndian.AppendUint16(old, 1), 'a')
	old = append(binary.BigEndian.AppendUint16(old, 1), 'b')
	old = append(binary.BigEndian.AppendUint32(old, 2), 'u', 'd')
	s, err := decodeSubscription(old)
	if err != nil || !reflect.DeepEqual(s.Topics, []string{"a", "b"}) || string(s.UserData) != "ud" {
		t.Fatalf("old v1: %+v %v", s, err)
	}

	// A newer version (franz-go writes v3): the known fields are read.
	b, err := protocol.Marshal(3, consumer.Subscription{Version: 3, Topics: []string{"t"}, GenerationID: 4, RackID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	b[1] = 9 // pretend it is v9: read as v3
	s, err = decodeSubscription(b)
	if err != nil || !reflect.DeepEqual(s.Topics, []string{"t"}) {
		t.Fatalf("v9: %+v %v", s, err)
	}

	for _, bad := range [][]byte{nil, {0}, {0xff, 0xff}, {0, 0, 0, 0, 0, 5}} {
		if _, err := decodeSubscription(bad); err == nil {
			t.Errorf("%x accepted", bad)
		}
	}
}

// stubCoordinator answers the group requests of one member, recording them.
type stubCoordinator struct {
	mu        sync.Mutex
	requests  []protocol.Message
	joins     int
	heartbeat int16 // error code of heartbeats
	commitErr int16 // error code of committed partitions
	committed map[int32]int64
	left      chan string
	alone     bool // no second member in the group

	// joinMax is the highest JoinGroup version ApiVersions reports (9 when
	// zero); syncErr and joinErr, when set, answer SyncGroup and the
	// JoinGroups of a known member; skipAssignment is what JoinGroup says.
	joinMax        int16
	syncErr        int16
	joinErr        int16
	skipAssignment bool

	// unknownMember is a member ID the coordinator forgot: its JoinGroups
	// get UNKNOWN_MEMBER_ID; newMemberID, when set, is the ID handed to
	// members joining without one (else "m-1").
	unknownMember string
	newMemberID   string
}

func (s *stubCoordinator) RoundTrip(ctx context.Context, addr net.Addr, req Request) (Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)
	switch r := req.(type) {
	case *apiversions.Request:
		max := s.joinMax
		if max == 0 {
			max = 9
		}
		return &apiversions.Response{ApiKeys: []apiversions.ApiKeyResponse{{ApiKey: int16(protocol.JoinGroup), MaxVersion: max}}}, nil
	case *joingroup.Request:
		s.joins++
		newID := "m-1"
		if s.newMemberID != "" {
			newID = s.newMemberID
		}
		if r.MemberID == "" && r.GroupInstanceID == "" {
			return &joingroup.Response{ErrorCode: int16(MemberIDRequired), MemberID: newID}, nil
		}
		if r.MemberID != "" && r.MemberID == s.unknownMember {
			return &joingroup.Response{ErrorCode: int16(UnknownMemberId)}, nil
		}
		if r.MemberID != "" && s.joinErr != 0 {
			return &joingroup.Response{ErrorCode: s.joinErr}, nil
		}
		memberID := r.MemberID
		if memberID == "" {
			memberID = newID // a static member gets its ID at once
		}
		res := &joingroup.Response{GenerationID: int32(s.joins), ProtocolName: r.Protocols[0].Name, LeaderID: memberID, MemberID: memberID, SkipAssignment: s.skipAssignment}
		res.Members = []joingroup.ResponseMember{{MemberID: memberID, GroupInstanceID: r.GroupInstanceID, Metadata: r.Protocols[0].Metadata}}
		if !s.alone {
			// A second member running another client, subscribed to t only.
			other, _ := protocol.Marshal(0, consumer.Subscription{Topics: []string{"t"}})
			res.Members = append(res.Members, joingroup.ResponseMember{MemberID: "z-other", Metadata: other})
		}
		return res, nil
	case *metadata.Request:
		res := &metadata.Response{Brokers: []metadata.ResponseBroker{{NodeID: 1, Host: "h", Port: 9092}}}
		res.Topics = []metadata.ResponseTopic{{Name: "t"}}
		for i := int32(0); i < 4; i++ {
			res.Topics[0].Partitions = append(res.Topics[0].Partitions, metadata.ResponsePartition{PartitionIndex: i, LeaderID: 1})
		}
		return res, nil
	case *syncgroup.Request:
		if s.syncErr != 0 {
			return &syncgroup.Response{ErrorCode: s.syncErr}, nil
		}
		if s.skipAssignment {
			// The assignment the group kept: partition 3.
			b, _ := encodeAssignment(map[string][]int{"t": {3}})
			return &syncgroup.Response{Assignments: b}, nil
		}
		for _, a := range r.Assignments {
			if a.MemberID == r.MemberID {
				return &syncgroup.Response{Assignments: a.Assignment}, nil
			}
		}
		return &syncgroup.Response{}, nil
	case *offsetfetch.Request:
		return offsetFetchAnswer(r, s.committed), nil
	case *offsetcommit.Request:
		return offsetCommitAnswer(r, s.commitErr, func(p int32, off int64) { s.committed[p] = off }), nil
	case *heartbeat.Request:
		return &heartbeat.Response{ErrorCode: s.heartbeat}, nil
	case *leavegroup.Request:
		s.left <- r.MemberID
		return &leavegroup.Response{}, nil
	}
	return nil, fmt.Errorf("unexpected request %T", req)
}

// The protocol exchange of a member that leads a group of two: join twice
// (MEMBER_ID_REQUIRED), assign with range, sync, fetch offsets, commit,
// rejoin when a heartbeat reports a rebalance, leave on Close.
func TestConsumerGroupProtocolExchange(t *testing.T) {
	stub := &stubCoordinator{committed: map[int32]int64{1: 42}, left: make(chan string, 1)}
	cg, err := NewConsumerGroup(ConsumerGroupConfig{
		ID:                "g",
		Brokers:           unreachableBrokers,
		Topics:            []string{"t"},
		HeartbeatInterval: time.Millisecond,
		StartOffset:       LastOffset,
		transport:         stub,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	gen, err := cg.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Range over 4 partitions, members "m-1" and "z-other": [0 1] and [2 3].
	want := map[string][]PartitionAssignment{"t": {{ID: 0, Offset: LastOffset}, {ID: 1, Offset: 42}}}
	if gen.ID != 2 || gen.GroupID != "g" || gen.MemberID != "m-1" || !reflect.DeepEqual(gen.Assignments, want) {
		t.Fatalf("generation %+v", gen)
	}

	stub.mu.Lock()
	join := stub.requests[0].(*joingroup.Request)
	rejoin := stub.requests[1].(*joingroup.Request)
	stub.mu.Unlock()
	if join.MemberID != "" || rejoin.MemberID != "m-1" || join.ProtocolType != "consumer" || join.SessionTimeoutMS != 30000 || join.RebalanceTimeoutMS != 30000 {
		t.Fatalf("join requests %+v %+v", join, rejoin)
	}
	if len(join.Protocols) != 2 || join.Protocols[0].Name != "range" || join.Protocols[1].Name != "roundrobin" {
		t.Fatalf("protocols %+v", join.Protocols)
	}
	// kafka-go's subscription bytes: version 0, topics, empty user data,
	// nothing after (v0.4.51 leaders reject trailing bytes, librdkafka and
	// Java require owned partitions from version 1 on).
	wantSub := []byte{0, 0, 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 0}
	if !bytes.Equal(join.Protocols[0].Metadata, wantSub) {
		t.Fatalf("subscription %v, want %v", join.Protocols[0].Metadata, wantSub)
	}
	stub.mu.Lock()
	var syncReq *syncgroup.Request
	for _, req := range stub.requests {
		if r, ok := req.(*syncgroup.Request); ok {
			syncReq = r
		}
	}
	stub.mu.Unlock()
	// The leader's assignments, in the same format: version 1, partitions
	// by topic, empty user data.
	wantAssignment := map[string][]byte{
		"m-1":     {0, 1, 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0},
		"z-other": {0, 1, 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0},
	}
	if syncReq == nil || syncReq.ProtocolType != "consumer" || syncReq.ProtocolName != "range" || len(syncReq.Assignments) != 2 {
		t.Fatalf("sync request %+v", syncReq)
	}
	for _, a := range syncReq.Assignments {
		if !bytes.Equal(a.Assignment, wantAssignment[a.MemberID]) {
			t.Fatalf("assignment of %s: %v, want %v", a.MemberID, a.Assignment, wantAssignment[a.MemberID])
		}
	}

	if err := gen.CommitOffsets(map[string]map[int]int64{"t": {0: 7, 1: 43}}); err != nil {
		t.Fatal(err)
	}
	stub.mu.Lock()
	if stub.committed[0] != 7 || stub.committed[1] != 43 {
		t.Fatalf("committed %v", stub.committed)
	}
	var commit *offsetcommit.Request
	for _, req := range stub.requests {
		if c, ok := req.(*offsetcommit.Request); ok {
			commit = c
		}
	}
	if commit.GroupID != "g" || commit.GenerationID != 2 || commit.MemberID != "m-1" || commit.RetentionTimeMs != -1 {
		t.Fatalf("commit request %+v", commit)
	}
	stub.commitErr = int16(IllegalGeneration)
	stub.mu.Unlock()
	if err := gen.CommitOffsets(map[string]map[int]int64{"t": {0: 8}}); !errors.Is(err, IllegalGeneration) {
		t.Fatalf("commit error: %v", err)
	}
	if err := gen.CommitOffsets(nil); err != nil {
		t.Fatalf("empty commit: %v", err)
	}
	stub.mu.Lock()
	stub.commitErr = 0
	stub.committed[0] = 7
	stub.heartbeat = int16(RebalanceInProgress)
	stub.mu.Unlock()

	// The failed heartbeat ends the generation; the next one starts from
	// the committed offsets.
	ended := make(chan struct{})
	gen.Start(func(ctx context.Context) { <-ctx.Done(); close(ended) })
	<-ended
	stub.mu.Lock()
	stub.heartbeat = 0
	stub.mu.Unlock()
	gen2, err := cg.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want = map[string][]PartitionAssignment{"t": {{ID: 0, Offset: 7}, {ID: 1, Offset: 43}}}
	if gen2.ID != 3 || gen2.MemberID != "m-1" || !reflect.DeepEqual(gen2.Assignments, want) {
		t.Fatalf("second generation %+v", gen2)
	}

	if err := cg.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-stub.left:
		if id != "m-1" {
			t.Fatalf("left as %q", id)
		}
	default:
		t.Fatal("no LeaveGroup on Close")
	}
	if _, err := cg.Next(ctx); !errors.Is(err, ErrGroupClosed) {
		t.Fatalf("Next after Close: %v", err)
	}
}

// Member metadata and assignments come from other clients: decoding never
// panics, whatever the bytes.
func FuzzGroupMemberPayloads(f *testing.F) {
	sub, _ := protocol.Marshal(1, consumer.Subscription{Version: 1, Topics: []string{"t"}, UserData: []byte("u")})
	asg, _ := protocol.Marshal(1, consumer.Assignment{Version: 1, AssignedPartitions: []consumer.TopicPartition{{Topic: "t", Partitions: []int32{0, 1}}}})
	f.Add(sub)
	f.Add(asg)
	f.Add([]byte{0, 3, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeSubscription(b)
		cgDecodeAssignment(b)
	})
}
