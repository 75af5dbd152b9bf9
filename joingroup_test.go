package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/consumer"
	"github.com/segmentio/kafka-go/protocol/joingroup"
)

// adminBrokers returns the addresses in the environment variable env (or
// def), skipping the test when no broker answers there, unless
// KAFKA_REQUIRE_BROKERS is set.
func adminBrokers(t *testing.T, env, def string) []string {
	t.Helper()
	list := os.Getenv(env)
	if list == "" {
		list = def
	}
	addrs := strings.Split(list, ",")
	for _, addr := range addrs {
		if conn, err := net.DialTimeout("tcp", addr, 2*time.Second); err == nil {
			conn.Close()
			return addrs
		}
	}
	if os.Getenv("KAFKA_REQUIRE_BROKERS") != "" {
		t.Fatalf("no kafka broker answers at %s", list)
	}
	t.Skipf("no kafka broker answers at %s", list)
	return nil
}

// adminClientID is the client ID of adminClient's connections.
const adminClientID = "kafka-go-admin-test"

// adminClient returns a Client of the integration cluster, with its own
// transport.
func adminClient(t *testing.T) *Client {
	addrs := adminBrokers(t, "KAFKA_BROKERS", "127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094")
	tr := &Transport{ClientID: adminClientID}
	t.Cleanup(tr.CloseIdleConnections)
	return &Client{Addr: TCP(addrs...), Timeout: 20 * time.Second, Transport: tr}
}

func adminContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// adminTopicName is a topic name unique to the test and the run.
func adminTopicName(t *testing.T) string {
	return fmt.Sprintf("admin-%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano())
}

// adminTopic creates a topic with the given number of partitions on the
// integration cluster and deletes it when the test ends.
func adminTopic(t *testing.T, client *Client, partitions int) string {
	t.Helper()
	topic := adminTopicName(t)
	res, err := client.CreateTopics(adminContext(t), &CreateTopicsRequest{Topics: []TopicConfig{{
		Topic: topic, NumPartitions: partitions, ReplicationFactor: 1,
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Errors[topic]; err != nil {
		t.Fatalf("creating %s: %v", topic, err)
	}
	t.Cleanup(func() {
		client.DeleteTopics(context.Background(), &DeleteTopicsRequest{Topics: []string{topic}})
	})
	return topic
}

// adminJoin joins group, answering the MemberIDRequired of JoinGroup v4+
// with a second join under the ID the coordinator gave.
func adminJoin(ctx context.Context, client *Client, req JoinGroupRequest) (*JoinGroupResponse, error) {
	for attempt := 0; attempt < 3; attempt++ {
		res, err := client.JoinGroup(ctx, &req)
		if err != nil {
			return nil, err
		}
		if !errors.Is(res.Error, MemberIDRequired) {
			return res, nil
		}
		req.MemberID = res.MemberID
	}
	return nil, errors.New("the coordinator kept asking for a member ID")
}

func TestClientGroupLifecycle(t *testing.T) {
	client := adminClient(t)
	ctx := adminContext(t)
	topic := adminTopic(t, client, 3)
	group := fmt.Sprintf("group-%d", time.Now().UnixNano())

	sub := GroupProtocolSubscription{
		Topics:          []string{topic},
		UserData:        []byte("user data"),
		OwnedPartitions: map[string][]int{topic: {2, 0}},
	}
	join, err := adminJoin(ctx, client, JoinGroupRequest{
		GroupID:          group,
		SessionTimeout:   30 * time.Second,
		RebalanceTimeout: 10 * time.Second,
		ProtocolType:     "consumer",
		Protocols:        []GroupProtocol{{Name: "range", Metadata: sub}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if join.Error != nil {
		t.Fatalf("JoinGroup: %v", join.Error)
	}
	if join.MemberID == "" || join.LeaderID != join.MemberID || join.GenerationID < 1 || join.ProtocolName != "range" {
		t.Fatalf("JoinGroup answer %+v: want a generation led by this member with protocol range", join)
	}
	if join.ProtocolType != "consumer" {
		t.Errorf("ProtocolType %q, want consumer (JoinGroup v7+)", join.ProtocolType)
	}
	if len(join.Members) != 1 || join.Members[0].ID != join.MemberID {
		t.Fatalf("members %+v, want only this member", join.Members)
	}
	if got := join.Members[0].Metadata; !reflect.DeepEqual(got, sub) {
		t.Fatalf("subscription read back %+v, want %+v", got, sub)
	}

	assignment := GroupProtocolAssignment{AssignedPartitions: map[string][]int{topic: {0, 1, 2}}, UserData: []byte("assigned")}
	sync, err := client.SyncGroup(ctx, &SyncGroupRequest{
		GroupID:      group,
		GenerationID: join.GenerationID,
		MemberID:     join.MemberID,
		ProtocolType: "consumer",
		ProtocolName: join.ProtocolName,
		Assignments:  []SyncGroupRequestAssignment{{MemberID: join.MemberID, Assignment: assignment}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if sync.Error != nil {
		t.Fatalf("SyncGroup: %v", sync.Error)
	}
	if !reflect.DeepEqual(sync.Assignment, assignment) || sync.ProtocolName != "range" || sync.ProtocolType != "consumer" {
		t.Fatalf("SyncGroup answer %+v, want assignment %+v", sync, assignment)
	}

	hb, err := client.Heartbeat(ctx, &HeartbeatRequest{GroupID: group, GenerationID: int32(join.GenerationID), MemberID: join.MemberID})
	if err != nil || hb.Error != nil {
		t.Fatalf("Heartbeat: %+v, %v", hb, err)
	}
	hb, err = client.Heartbeat(ctx, &HeartbeatRequest{GroupID: group, GenerationID: int32(join.GenerationID) + 10, MemberID: join.MemberID})
	if err != nil || !errors.Is(hb.Error, IllegalGeneration) {
		t.Fatalf("Heartbeat of a wrong generation: %+v, %v; want IllegalGeneration", hb, err)
	}

	desc, err := client.DescribeGroups(ctx, &DescribeGroupsRequest{GroupIDs: []string{group}})
	if err != nil {
		t.Fatal(err)
	}
	if len(desc.Groups) != 1 || desc.Groups[0].Error != nil || desc.Groups[0].GroupID != group || desc.Groups[0].GroupState != "Stable" {
		t.Fatalf("DescribeGroups: %+v", desc.Groups)
	}
	members := desc.Groups[0].Members
	if len(members) != 1 || members[0].MemberID != join.MemberID || members[0].ClientID != adminClientID || members[0].ClientHost == "" {
		t.Fatalf("described members %+v", members)
	}
	wantMeta := DescribeGroupsResponseMemberMetadata{
		Version:         1,
		Topics:          []string{topic},
		UserData:        []byte("user data"),
		OwnedPartitions: []DescribeGroupsResponseMemberMetadataOwnedPartition{{Topic: topic, Partitions: []int{2, 0}}},
	}
	if !reflect.DeepEqual(members[0].MemberMetadata, wantMeta) {
		t.Errorf("described metadata %+v, want %+v", members[0].MemberMetadata, wantMeta)
	}
	wantAssign := DescribeGroupsResponseAssignments{
		Version:  1,
		Topics:   []GroupMemberTopic{{Topic: topic, Partitions: []int{0, 1, 2}}},
		UserData: []byte("assigned"),
	}
	if !reflect.DeepEqual(members[0].MemberAssignments, wantAssign) {
		t.Errorf("described assignment %+v, want %+v", members[0].MemberAssignments, wantAssign)
	}

	coord, err := client.FindCoordinator(ctx, &FindCoordinatorRequest{Key: group, KeyType: CoordinatorKeyTypeConsumer})
	if err != nil || coord.Error != nil {
		t.Fatalf("FindCoordinator: %+v, %v", coord, err)
	}
	list, err := client.ListGroups(ctx, &ListGroupsRequest{})
	if err != nil || list.Error != nil {
		t.Fatalf("ListGroups: %+v, %v", list, err)
	}
	found := 0
	for _, g := range list.Groups {
		if g.GroupID == group {
			found++
			if g.Coordinator != coord.Coordinator.NodeID || g.ProtocolType != "consumer" {
				t.Errorf("listed %+v, want coordinator %d and protocol type consumer", g, coord.Coordinator.NodeID)
			}
		}
	}
	if found != 1 {
		t.Fatalf("group %s listed %d times in %+v", group, found, list.Groups)
	}

	// Offsets committed by the member are read back, metadata included.
	commit, err := client.OffsetCommit(ctx, &OffsetCommitRequest{
		GroupID:      group,
		GenerationID: join.GenerationID,
		MemberID:     join.MemberID,
		Topics:       map[string][]OffsetCommit{topic: {{Partition: 0, Offset: 7, Metadata: "m0"}, {Partition: 2, Offset: 9}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	adminCheckCommitted(t, commit, topic, 0, 2)
	fetch, err := client.OffsetFetch(ctx, &OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: {0, 1, 2}}})
	if err != nil || fetch.Error != nil {
		t.Fatalf("OffsetFetch: %+v, %v", fetch, err)
	}
	want := []OffsetFetchPartition{
		{Partition: 0, CommittedOffset: 7, Metadata: "m0"},
		{Partition: 1, CommittedOffset: -1},
		{Partition: 2, CommittedOffset: 9},
	}
	if got := adminSortedFetch(fetch.Topics[topic]); !reflect.DeepEqual(got, want) {
		t.Fatalf("offsets read back %+v, want %+v", got, want)
	}

	// A member of a stable group cannot have its topic's offsets deleted.
	del, err := client.OffsetDelete(ctx, &OffsetDeleteRequest{GroupID: group, Topics: map[string][]int{topic: {0}}})
	if err != nil {
		t.Fatal(err)
	}
	if del.Error != nil || len(del.Topics[topic]) != 1 || !errors.Is(del.Topics[topic][0].Error, GroupSubscribedToTopic) {
		t.Fatalf("OffsetDelete while subscribed: %+v %+v, want GroupSubscribedToTopic", del, del.Topics)
	}

	leave, err := client.LeaveGroup(ctx, &LeaveGroupRequest{GroupID: group, Members: []LeaveGroupRequestMember{{ID: join.MemberID}}})
	if err != nil || leave.Error != nil {
		t.Fatalf("LeaveGroup: %+v, %v", leave, err)
	}
	if len(leave.Members) != 1 || leave.Members[0].ID != join.MemberID || leave.Members[0].Error != nil {
		t.Fatalf("LeaveGroup members %+v", leave.Members)
	}
	leave, err = client.LeaveGroup(ctx, &LeaveGroupRequest{GroupID: group, Members: []LeaveGroupRequestMember{{ID: "nobody"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(leave.Members) != 1 || !errors.Is(leave.Members[0].Error, UnknownMemberId) {
		t.Fatalf("leaving as an unknown member: %+v %+v, want UnknownMemberId", leave, leave.Members)
	}

	desc, err = client.DescribeGroups(ctx, &DescribeGroupsRequest{GroupIDs: []string{group}})
	if err != nil || len(desc.Groups) != 1 || desc.Groups[0].GroupState != "Empty" || len(desc.Groups[0].Members) != 0 {
		t.Fatalf("DescribeGroups after leaving: %+v, %v", desc, err)
	}

	// Now that nobody consumes the topic, its offsets can be deleted.
	del, err = client.OffsetDelete(ctx, &OffsetDeleteRequest{GroupID: group, Topics: map[string][]int{topic: {0}}})
	if err != nil || del.Error != nil || len(del.Topics[topic]) != 1 || del.Topics[topic][0].Partition != 0 || del.Topics[topic][0].Error != nil {
		t.Fatalf("OffsetDelete: %+v, %v", del, err)
	}
	fetch, err = client.OffsetFetch(ctx, &OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: {0, 2}}})
	if err != nil || fetch.Error != nil {
		t.Fatalf("OffsetFetch: %+v, %v", fetch, err)
	}
	want = []OffsetFetchPartition{{Partition: 0, CommittedOffset: -1}, {Partition: 2, CommittedOffset: 9}}
	if got := adminSortedFetch(fetch.Topics[topic]); !reflect.DeepEqual(got, want) {
		t.Fatalf("offsets after deleting partition 0: %+v, want %+v", got, want)
	}

	dg, err := client.DeleteGroups(ctx, &DeleteGroupsRequest{GroupIDs: []string{group}})
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := dg.Errors[group]; !ok || e != nil {
		t.Fatalf("DeleteGroups: %v (listed %v)", e, ok)
	}
	dg, err = client.DeleteGroups(ctx, &DeleteGroupsRequest{GroupIDs: []string{group}})
	if err != nil || !errors.Is(dg.Errors[group], GroupIdNotFound) {
		t.Fatalf("deleting the group again: %+v, %v; want GroupIdNotFound", dg, err)
	}
}

func adminCheckCommitted(t *testing.T, res *OffsetCommitResponse, topic string, partitions ...int) {
	t.Helper()
	got := res.Topics[topic]
	if len(got) != len(partitions) || len(res.Topics) != 1 {
		t.Fatalf("OffsetCommit answer %+v, want partitions %v of %s", res.Topics, partitions, topic)
	}
	seen := map[int]bool{}
	for _, p := range got {
		if p.Error != nil {
			t.Fatalf("committing partition %d: %v", p.Partition, p.Error)
		}
		seen[p.Partition] = true
	}
	for _, p := range partitions {
		if !seen[p] {
			t.Fatalf("OffsetCommit answer %+v lacks partition %d", got, p)
		}
	}
}

func adminSortedFetch(parts []OffsetFetchPartition) []OffsetFetchPartition {
	out := append([]OffsetFetchPartition(nil), parts...)
	sort.Slice(out, func(i, j int) bool { return out[i].Partition < out[j].Partition })
	return out
}

// Two members rebalance through the Client's group APIs alone: the leader
// assigns one partition set to each, each member reads its own assignment
// back from SyncGroup, and the generation settles with both.
func TestClientGroupTwoMembers(t *testing.T) {
	client := adminClient(t)
	ctx, cancel := context.WithTimeout(adminContext(t), 25*time.Second)
	defer cancel()
	topic := adminTopic(t, client, 4)
	group := fmt.Sprintf("group2-%d", time.Now().UnixNano())

	type state struct {
		generation int
		assigned   []int
	}
	var mu sync.Mutex
	states := map[string]state{} // by user data, identifying the member
	stable := make(chan struct{})
	var once sync.Once
	loopCtx, stop := context.WithCancel(ctx)
	defer stop()

	member := func(name string) error {
		memberID := ""
		for loopCtx.Err() == nil {
			join, err := adminJoin(loopCtx, client, JoinGroupRequest{
				GroupID: group, MemberID: memberID,
				SessionTimeout: 10 * time.Second, RebalanceTimeout: 10 * time.Second,
				ProtocolType: "consumer",
				Protocols:    []GroupProtocol{{Name: "test", Metadata: GroupProtocolSubscription{Topics: []string{topic}, UserData: []byte(name)}}},
			})
			if err != nil {
				return err
			}
			if join.Error != nil {
				if errors.Is(join.Error, RebalanceInProgress) {
					continue
				}
				return fmt.Errorf("%s: JoinGroup: %w", name, join.Error)
			}
			memberID = join.MemberID
			req := &SyncGroupRequest{GroupID: group, GenerationID: join.GenerationID, MemberID: memberID, ProtocolType: "consumer", ProtocolName: "test"}
			if join.LeaderID == memberID {
				// Deal the partitions out over the members, sorted by
				// name, so that each knows what to expect.
				ms := append([]JoinGroupResponseMember(nil), join.Members...)
				sort.Slice(ms, func(i, j int) bool { return string(ms[i].Metadata.UserData) < string(ms[j].Metadata.UserData) })
				for i, m := range ms {
					var parts []int
					for p := i; p < 4; p += len(ms) {
						parts = append(parts, p)
					}
					req.Assignments = append(req.Assignments, SyncGroupRequestAssignment{
						MemberID:   m.ID,
						Assignment: GroupProtocolAssignment{AssignedPartitions: map[string][]int{topic: parts}, UserData: m.Metadata.UserData},
					})
				}
			}
			sync, err := client.SyncGroup(loopCtx, req)
			if err != nil {
				return err
			}
			if sync.Error != nil {
				if errors.Is(sync.Error, RebalanceInProgress) {
					continue
				}
				return fmt.Errorf("%s: SyncGroup: %w", name, sync.Error)
			}
			if string(sync.Assignment.UserData) != name {
				return fmt.Errorf("%s received the assignment of %q", name, sync.Assignment.UserData)
			}
			mu.Lock()
			states[name] = state{generation: join.GenerationID, assigned: sync.Assignment.AssignedPartitions[topic]}
			a, b := states["a"], states["b"]
			if a.generation == b.generation && len(a.assigned)+len(b.assigned) == 4 {
				once.Do(func() { close(stable) })
			}
			mu.Unlock()
			for loopCtx.Err() == nil {
				hb, err := client.Heartbeat(loopCtx, &HeartbeatRequest{GroupID: group, GenerationID: int32(join.GenerationID), MemberID: memberID})
				if err != nil {
					return err
				}
				if errors.Is(hb.Error, RebalanceInProgress) {
					break // rejoin
				}
				if hb.Error != nil {
					return fmt.Errorf("%s: Heartbeat: %w", name, hb.Error)
				}
				adminSleep(loopCtx, 50*time.Millisecond)
			}
		}
		return nil
	}

	errs := make(chan error, 2)
	for _, name := range []string{"a", "b"} {
		go func() {
			err := member(name)
			if loopCtx.Err() != nil {
				err = nil // stopped by the test
			}
			errs <- err
		}()
	}
	select {
	case <-stable:
	case err := <-errs:
		t.Fatalf("member failed before the group settled: %v", err)
	case <-ctx.Done():
		t.Fatal("the group did not settle with both members")
	}
	stop()
	for i := 0; i < 2; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if a, b := states["a"].assigned, states["b"].assigned; !reflect.DeepEqual(a, []int{0, 2}) || !reflect.DeepEqual(b, []int{1, 3}) {
		t.Fatalf("assignments a=%v b=%v, want [0 2] and [1 3]", a, b)
	}
}

// What JoinGroup sends: durations in milliseconds, and each protocol's
// subscription in the consumer protocol's format (v1, owned partitions
// sorted by topic).
func TestClientJoinGroupRequest(t *testing.T) {
	sub3, err := protocol.Marshal(3, consumer.Subscription{Version: 3, Topics: []string{"t"}, OwnedPartitions: []consumer.TopicPartition{{Topic: "t", Partitions: []int32{2}}}, GenerationID: 8, RackID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	members := []joingroup.ResponseMember{{MemberID: "a", GroupInstanceID: "ia", Metadata: sub3}}
	client, rt := adminFakeClient(func(req protocol.Message) (protocol.Message, error) {
		return &joingroup.Response{
			ThrottleTimeMS: 1, GenerationID: 3, ProtocolType: "consumer", ProtocolName: "rr",
			LeaderID: "a", MemberID: "a", Members: members,
		}, nil
	})
	res, err := client.JoinGroup(context.Background(), &JoinGroupRequest{
		GroupID: "g", SessionTimeout: 6 * time.Second, RebalanceTimeout: 1500 * time.Millisecond,
		MemberID: "a", GroupInstanceID: "ia", ProtocolType: "consumer",
		Protocols: []GroupProtocol{
			{Name: "rr", Metadata: GroupProtocolSubscription{Topics: []string{"t", "u"}, UserData: []byte{1}, OwnedPartitions: map[string][]int{"u": {1}, "t": {0, 2}}}},
			{Name: "range"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	sent := rt.sent[0].(*joingroup.Request)
	if sent.GroupID != "g" || sent.SessionTimeoutMS != 6000 || sent.RebalanceTimeoutMS != 1500 || sent.MemberID != "a" ||
		sent.GroupInstanceID != "ia" || sent.ProtocolType != "consumer" || len(sent.Protocols) != 2 {
		t.Fatalf("sent %+v", sent)
	}
	wantSubs := []consumer.Subscription{
		{Version: 1, Topics: []string{"t", "u"}, UserData: []byte{1}, OwnedPartitions: []consumer.TopicPartition{{Topic: "t", Partitions: []int32{0, 2}}, {Topic: "u", Partitions: []int32{1}}}},
		{Version: 1, Topics: []string{}, OwnedPartitions: []consumer.TopicPartition{}},
	}
	for i, p := range sent.Protocols {
		var got consumer.Subscription
		if err := protocol.Unmarshal(p.Metadata, 1, &got); err != nil {
			t.Fatal(err)
		}
		if p.Name != []string{"rr", "range"}[i] || !reflect.DeepEqual(got, wantSubs[i]) {
			t.Errorf("protocol %s: %+v, want %+v", p.Name, got, wantSubs[i])
		}
	}
	want := &JoinGroupResponse{
		Throttle: time.Millisecond, GenerationID: 3, ProtocolName: "rr", ProtocolType: "consumer", LeaderID: "a", MemberID: "a",
		Members: []JoinGroupResponseMember{{ID: "a", GroupInstanceID: "ia", Metadata: GroupProtocolSubscription{
			Topics: []string{"t"}, OwnedPartitions: map[string][]int{"t": {2}},
		}}},
	}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("answer %+v, want %+v", res, want)
	}

	// A member's undecodable subscription fails the call.
	members = []joingroup.ResponseMember{{MemberID: "b", Metadata: []byte{0, 0, 0, 0, 0, 5}}}
	if _, err := client.JoinGroup(context.Background(), &JoinGroupRequest{GroupID: "g"}); err == nil {
		t.Error("an undecodable subscription was accepted")
	}
}

// adminSleep waits for d, and reports false if ctx ended first.
func adminSleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return ctx.Err() == nil
	}
}
