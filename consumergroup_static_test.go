package kafka

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/apiversions"
	"github.com/segmentio/kafka-go/protocol/heartbeat"
	"github.com/segmentio/kafka-go/protocol/joingroup"
	"github.com/segmentio/kafka-go/protocol/leavegroup"
	"github.com/segmentio/kafka-go/protocol/metadata"
	"github.com/segmentio/kafka-go/protocol/offsetcommit"
	"github.com/segmentio/kafka-go/protocol/syncgroup"
)

func TestGroupInstanceIDValidate(t *testing.T) {
	for _, tc := range []struct {
		id, err string
	}{
		{"host-1.pod_2", ""},
		{strings.Repeat("a", 249), ""},
		{strings.Repeat("a", 250), "GroupInstanceID is 250 characters long, more than the 249 Kafka allows"},
		{"a b", `GroupInstanceID "a b" has the character ' ': only a-z, A-Z, 0-9, '.', '_' and '-' are allowed`},
		{"é", `GroupInstanceID "é" has the character 'é': only a-z, A-Z, 0-9, '.', '_' and '-' are allowed`},
	} {
		c := ConsumerGroupConfig{ID: "g", Brokers: unreachableBrokers, Topics: []string{"t"}, GroupInstanceID: tc.id}
		err := c.Validate()
		if (err == nil) != (tc.err == "") || err != nil && err.Error() != tc.err {
			t.Errorf("%q: %v, want %q", tc.id, err, tc.err)
		}
	}
	r := ReaderConfig{Brokers: unreachableBrokers, Topic: "t", GroupInstanceID: "i"}
	if err := r.Validate(); err == nil || err.Error() != "GroupInstanceID is only available with GroupID" {
		t.Errorf("reader without group: %v", err)
	}
}

// A static member sends its GroupInstanceID in every request that has the
// field, joins without the MEMBER_ID_REQUIRED round, checks once that the
// brokers know static membership, and does not leave on Close.
func TestConsumerGroupStaticMemberRequests(t *testing.T) {
	requests := captureGroupExchange(t, func(c *ConsumerGroupConfig) { c.GroupInstanceID = "host-1" })
	if _, ok := requests[0].(*apiversions.Request); !ok {
		t.Fatalf("first request %T, want ApiVersions", requests[0])
	}
	counts := map[string]int{}
	for _, m := range requests {
		switch r := m.(type) {
		case *apiversions.Request:
			counts["ApiVersions"]++
		case *joingroup.Request:
			counts["JoinGroup"]++
			if r.GroupInstanceID != "host-1" || r.MemberID != "" {
				t.Errorf("JoinGroup %+v", r)
			}
		case *syncgroup.Request:
			counts["SyncGroup"]++
			if r.GroupInstanceID != "host-1" || r.MemberID != "m-1" {
				t.Errorf("SyncGroup %+v", r)
			}
		case *heartbeat.Request:
			counts["Heartbeat"]++
			if r.GroupInstanceID != "host-1" {
				t.Errorf("Heartbeat %+v", r)
			}
		case *offsetcommit.Request:
			counts["OffsetCommit"]++
			if r.GroupInstanceID != "host-1" {
				t.Errorf("OffsetCommit %+v", r)
			}
		case *leavegroup.Request:
			t.Errorf("a static member left the group: %+v", r)
		}
	}
	if counts["ApiVersions"] != 1 || counts["JoinGroup"] != 1 || counts["SyncGroup"] != 1 || counts["OffsetCommit"] != 1 || counts["Heartbeat"] == 0 {
		t.Errorf("requests sent: %v", counts)
	}
}

// newStubGroup starts a static member of a group whose coordinator is stub.
func newStubGroup(t *testing.T, stub *stubCoordinator, modify func(*ConsumerGroupConfig)) *ConsumerGroup {
	t.Helper()
	config := ConsumerGroupConfig{
		ID:                "g",
		Brokers:           unreachableBrokers,
		Topics:            []string{"t"},
		HeartbeatInterval: time.Millisecond,
		JoinGroupBackoff:  time.Millisecond,
		GroupInstanceID:   "host-1",
		transport:         stub,
	}
	if modify != nil {
		modify(&config)
	}
	cg, err := NewConsumerGroup(config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cg.Close() })
	return cg
}

func (s *stubCoordinator) count(match func(protocol.Message) bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.requests {
		if match(m) {
			n++
		}
	}
	return n
}

func isJoin(m protocol.Message) bool { _, ok := m.(*joingroup.Request); return ok }

// checkFenced checks that err is the error of a fenced member: it matches
// FencedInstanceID and names the GroupInstanceID.
func checkFenced(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, FencedInstanceID) || !strings.Contains(err.Error(), `GroupInstanceID "host-1"`) || !strings.Contains(err.Error(), "fenced") {
		t.Fatalf("error %v, want one that says the member was fenced", err)
	}
}

// When another process takes the member's GroupInstanceID, whatever
// request tells, the group stops for good: Next returns the error every
// time, and no JoinGroup is sent again (it would fence the other process
// in turn, and so on forever).
func TestConsumerGroupFencedStaticMember(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fence func(*stubCoordinator, *Generation) error
	}{
		{"heartbeat", func(s *stubCoordinator, _ *Generation) error { s.heartbeat = int16(FencedInstanceID); return nil }},
		{"commit", func(s *stubCoordinator, gen *Generation) error {
			s.commitErr = int16(FencedInstanceID)
			s.mu.Unlock()
			defer s.mu.Lock()
			return gen.CommitOffsets(map[string]map[int]int64{"t": {0: 1}})
		}},
		{"join", func(s *stubCoordinator, _ *Generation) error {
			s.joinErr = int16(FencedInstanceID)
			s.heartbeat = int16(RebalanceInProgress)
			return nil
		}},
		{"sync", func(s *stubCoordinator, _ *Generation) error {
			s.syncErr = int16(FencedInstanceID)
			s.heartbeat = int16(RebalanceInProgress)
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stub := &stubCoordinator{committed: map[int32]int64{}, left: make(chan string, 1)}
			cg := newStubGroup(t, stub, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			gen, err := cg.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			stub.mu.Lock()
			err = tc.fence(stub, gen)
			stub.mu.Unlock()
			if tc.name == "commit" {
				checkFenced(t, err)
			}
			_, err = cg.Next(ctx)
			checkFenced(t, err)
			joins := stub.count(isJoin)
			_, again := cg.Next(ctx)
			if again != err {
				t.Fatalf("second Next: %v", again)
			}
			cg.Close()
			if n := stub.count(isJoin); n != joins {
				t.Fatalf("%d JoinGroups after the member was fenced", n-joins)
			}
			select {
			case id := <-stub.left:
				t.Fatalf("fenced member left as %s", id)
			default:
			}
		})
	}
}

// A static leader that comes back finds the group as it left it (KIP-814's
// SkipAssignment): it does not run the balancer, and gets the partitions it
// had.
func TestConsumerGroupStaticLeaderSkipsAssignment(t *testing.T) {
	stub := &stubCoordinator{committed: map[int32]int64{}, left: make(chan string, 1), skipAssignment: true}
	cg := newStubGroup(t, stub, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	gen, err := cg.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]PartitionAssignment{"t": {{ID: 3, Offset: FirstOffset}}}
	if !reflect.DeepEqual(gen.Assignments, want) {
		t.Fatalf("assignments %+v", gen.Assignments)
	}
	stub.mu.Lock()
	defer stub.mu.Unlock()
	for _, m := range stub.requests {
		switch r := m.(type) {
		case *syncgroup.Request:
			if len(r.Assignments) != 0 {
				t.Fatalf("leader sent a plan: %+v", r.Assignments)
			}
		case *metadata.Request:
			t.Fatal("leader looked up partitions to assign them")
		}
	}
}

// On a broker without static membership the member does not silently
// become a dynamic one: the group stops with an error that names the
// option.
func TestConsumerGroupStaticMemberOldBroker(t *testing.T) {
	stub := &stubCoordinator{committed: map[int32]int64{}, left: make(chan string, 1), joinMax: 4}
	cg := newStubGroup(t, stub, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := cg.Next(ctx)
	if !errors.Is(err, UnsupportedVersion) || !strings.Contains(err.Error(), "GroupInstanceID") || !strings.Contains(err.Error(), "Kafka 2.3") {
		t.Fatalf("error %v", err)
	}
	if _, again := cg.Next(ctx); again != err {
		t.Fatalf("second Next: %v", again)
	}
	if n := stub.count(isJoin); n != 0 {
		t.Fatalf("%d JoinGroups sent", n)
	}
}

// A fenced Reader says so, from FetchMessage and CommitMessages, every
// time, and its Close does not leave the group.
func TestReaderFencedStaticMember(t *testing.T) {
	stub := &stubCoordinator{committed: map[int32]int64{}, left: make(chan string, 1), heartbeat: int16(FencedInstanceID)}
	r := NewReader(ReaderConfig{
		Brokers:           unreachableBrokers,
		GroupID:           "g",
		Topic:             "t",
		GroupInstanceID:   "host-1",
		HeartbeatInterval: time.Millisecond,
		MaxWait:           10 * time.Millisecond,
		transport:         stub,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := r.FetchMessage(ctx)
	checkFenced(t, err)
	_, err = r.ReadMessage(ctx)
	checkFenced(t, err)
	checkFenced(t, r.CommitMessages(ctx, Message{Topic: "t", Partition: 0, Offset: 1}))
	r.Close()
	select {
	case id := <-stub.left:
		t.Fatalf("fenced reader left as %s", id)
	default:
	}
}
