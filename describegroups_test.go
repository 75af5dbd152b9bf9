package kafka

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/consumer"
	"github.com/segmentio/kafka-go/protocol/describegroups"
)

// Members' metadata is decoded whatever version of the consumer protocol
// their client wrote (other clients than this one write v0 or v3), and
// undecodable metadata makes the group an error without members.
func TestClientDescribeGroupsDecoding(t *testing.T) {
	marshal := func(v int16, value interface{}) []byte {
		b, err := protocol.Marshal(v, value)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	owned := []consumer.TopicPartition{{Topic: "a", Partitions: []int32{1}}}
	v0 := marshal(0, consumer.Subscription{Version: 0, Topics: []string{"a"}})
	v3 := marshal(3, consumer.Subscription{Version: 3, Topics: []string{"a", "b"}, UserData: []byte("u"), OwnedPartitions: owned, GenerationID: 5, RackID: "r1"})
	// Version 1 headers without the owned partitions, as old kafka-go
	// releases wrote them.
	v1short := marshal(0, consumer.Subscription{Version: 1, Topics: []string{"c"}})
	assign := marshal(1, consumer.Assignment{Version: 1, AssignedPartitions: []consumer.TopicPartition{{Topic: "a", Partitions: []int32{0, 1}}}})

	client, rt := adminFakeClient(func(req protocol.Message) (protocol.Message, error) {
		return &describegroups.Response{Groups: []describegroups.ResponseGroup{
			{GroupID: "ok", GroupState: "Stable", ProtocolType: "consumer", Members: []describegroups.ResponseGroupMember{
				{MemberID: "m0", ClientID: "c0", ClientHost: "/10.0.0.1", MemberMetadata: v0, MemberAssignment: assign},
				{MemberID: "m3", ClientID: "c3", ClientHost: "/10.0.0.3", MemberMetadata: v3},
				{MemberID: "m1", MemberMetadata: v1short},
				{MemberID: "empty"},
			}},
			{GroupID: "bad", GroupState: "Stable", Members: []describegroups.ResponseGroupMember{
				{MemberID: "fine", MemberMetadata: v0},
				{MemberID: "garbage", MemberMetadata: []byte{0, 0, 0, 0, 0, 9, 'x'}},
			}},
			{GroupID: "gone", ErrorCode: int16(GroupIdNotFound)},
		}}, nil
	})
	res, err := client.DescribeGroups(context.Background(), &DescribeGroupsRequest{GroupIDs: []string{"ok", "bad", "gone"}})
	if err != nil {
		t.Fatal(err)
	}
	if sent := rt.sent[0].(*describegroups.Request); !reflect.DeepEqual(sent.Groups, []string{"ok", "bad", "gone"}) {
		t.Errorf("sent groups %v", sent.Groups)
	}
	if len(res.Groups) != 3 {
		t.Fatalf("groups %+v", res.Groups)
	}
	ok := res.Groups[0]
	wantOK := DescribeGroupsResponseGroup{GroupID: "ok", GroupState: "Stable", Members: []DescribeGroupsResponseMember{
		{
			MemberID: "m0", ClientID: "c0", ClientHost: "/10.0.0.1",
			MemberMetadata:    DescribeGroupsResponseMemberMetadata{Version: 0, Topics: []string{"a"}},
			MemberAssignments: DescribeGroupsResponseAssignments{Version: 1, Topics: []GroupMemberTopic{{Topic: "a", Partitions: []int{0, 1}}}},
		},
		{
			MemberID: "m3", ClientID: "c3", ClientHost: "/10.0.0.3",
			MemberMetadata: DescribeGroupsResponseMemberMetadata{
				Version: 3, Topics: []string{"a", "b"}, UserData: []byte("u"),
				OwnedPartitions: []DescribeGroupsResponseMemberMetadataOwnedPartition{{Topic: "a", Partitions: []int{1}}},
			},
		},
		{MemberID: "m1", MemberMetadata: DescribeGroupsResponseMemberMetadata{Version: 1, Topics: []string{"c"}}},
		{MemberID: "empty"},
	}}
	if !reflect.DeepEqual(ok, wantOK) {
		t.Errorf("group ok:\n got %+v\nwant %+v", ok, wantOK)
	}
	bad := res.Groups[1]
	if bad.GroupID != "bad" || bad.Members != nil || bad.Error == nil || !strings.Contains(bad.Error.Error(), "garbage") {
		t.Errorf("group with undecodable metadata: %+v", bad)
	}
	if gone := res.Groups[2]; gone.GroupID != "gone" || !errors.Is(gone.Error, GroupIdNotFound) {
		t.Errorf("missing group: %+v", gone)
	}
}

// Groups coordinated by different brokers are described in one call (the
// transport asks each group's coordinator).
func TestClientDescribeGroupsSeveral(t *testing.T) {
	client := adminClient(t)
	ctx := adminContext(t)
	topic := adminTopic(t, client, 1)

	// Committing offsets creates (empty) groups; with enough of them, more
	// than one broker coordinates some.
	var groups []string
	coordinators := map[int]bool{}
	for i := 0; i < 12 && (len(groups) < 3 || len(coordinators) < 2); i++ {
		g := fmt.Sprintf("describe-%d-%d", time.Now().UnixNano(), i)
		res, err := client.OffsetCommit(ctx, &OffsetCommitRequest{GroupID: g, GenerationID: -1, Topics: map[string][]OffsetCommit{topic: {{Partition: 0, Offset: int64(i)}}}})
		if err != nil || res.Topics[topic][0].Error != nil {
			t.Fatalf("OffsetCommit: %+v, %v", res, err)
		}
		coord, err := client.FindCoordinator(ctx, &FindCoordinatorRequest{Key: g})
		if err != nil || coord.Error != nil {
			t.Fatalf("FindCoordinator: %+v, %v", coord, err)
		}
		coordinators[coord.Coordinator.NodeID] = true
		groups = append(groups, g)
	}
	res, err := client.DescribeGroups(ctx, &DescribeGroupsRequest{GroupIDs: groups})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Groups) != len(groups) {
		t.Fatalf("described %d groups, want %d: %+v", len(res.Groups), len(groups), res.Groups)
	}
	seen := map[string]bool{}
	for _, g := range res.Groups {
		if g.Error != nil || g.GroupState != "Empty" || len(g.Members) != 0 {
			t.Errorf("group %+v, want an empty group", g)
		}
		seen[g.GroupID] = true
	}
	for _, g := range groups {
		if !seen[g] {
			t.Errorf("group %s was not described", g)
		}
	}
	t.Logf("%d groups on %d coordinators", len(groups), len(coordinators))
}
