package kafka

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/offsetfetch"
)

// Offsets committed by a tool (no member, generation -1) are read back,
// and OffsetFetch without topics returns all of the group's offsets.
func TestClientOffsetFetchAllTopics(t *testing.T) {
	client := adminClient(t)
	ctx := adminContext(t)
	topic1 := adminTopic(t, client, 2)
	topic2 := adminTopic(t, client, 1)
	group := fmt.Sprintf("offsets-%d", time.Now().UnixNano())

	commit, err := client.OffsetCommit(ctx, &OffsetCommitRequest{
		GroupID:      group,
		GenerationID: -1,
		Topics: map[string][]OffsetCommit{
			topic1: {{Partition: 0, Offset: 10}, {Partition: 1, Offset: 11, Metadata: "one"}},
			topic2: {{Partition: 0, Offset: 20, Metadata: "two"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	adminCheckCommitted(t, &OffsetCommitResponse{Topics: map[string][]OffsetCommitPartition{topic1: commit.Topics[topic1]}}, topic1, 0, 1)
	adminCheckCommitted(t, &OffsetCommitResponse{Topics: map[string][]OffsetCommitPartition{topic2: commit.Topics[topic2]}}, topic2, 0)

	fetch, err := client.OffsetFetch(ctx, &OffsetFetchRequest{GroupID: group})
	if err != nil || fetch.Error != nil {
		t.Fatalf("OffsetFetch: %+v, %v", fetch, err)
	}
	want := map[string][]OffsetFetchPartition{
		topic1: {{Partition: 0, CommittedOffset: 10}, {Partition: 1, CommittedOffset: 11, Metadata: "one"}},
		topic2: {{Partition: 0, CommittedOffset: 20, Metadata: "two"}},
	}
	got := map[string][]OffsetFetchPartition{}
	for name, parts := range fetch.Topics {
		got[name] = adminSortedFetch(parts)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("all offsets of the group:\n got %+v\nwant %+v", got, want)
	}

	// A group that never committed has no offsets: Kafka answers -1,
	// kfake GroupIdNotFound.
	fetch, err = client.OffsetFetch(ctx, &OffsetFetchRequest{GroupID: group + "-none", Topics: map[string][]int{topic2: {0}}})
	if err != nil {
		t.Fatal(err)
	}
	if fetch.Error != nil {
		if !errors.Is(fetch.Error, GroupIdNotFound) {
			t.Fatalf("offsets of a group without commits: %v", fetch.Error)
		}
	} else if parts := fetch.Topics[topic2]; len(parts) != 1 || parts[0].CommittedOffset != -1 {
		t.Fatalf("offsets of a group without commits: %+v", fetch.Topics)
	}
}

// OffsetFetch v8+ answers carry the offsets in a per-group list; older
// ones at the top level. Both map the same way (checked with a fake
// RoundTripper, since the version in use depends on the broker).
func TestClientOffsetFetchAnswerForms(t *testing.T) {
	topics := []offsetfetch.ResponseTopic{{Name: "t", Partitions: []offsetfetch.ResponsePartition{
		{PartitionIndex: 0, CommittedOffset: 5, Metadata: "md"},
		{PartitionIndex: 1, CommittedOffset: -1, ErrorCode: int16(UnstableOffsetCommit)},
	}}}
	answers := map[string]*offsetfetch.Response{
		"v7": {ThrottleTimeMs: 4, Topics: topics, ErrorCode: int16(NotCoordinatorForGroup)},
		"v8": {ThrottleTimeMs: 4, Groups: []offsetfetch.ResponseGroup{
			{GroupID: "other", ErrorCode: int16(GroupAuthorizationFailed)},
			{GroupID: "g", Topics: topics, ErrorCode: int16(NotCoordinatorForGroup)},
		}},
	}
	for name, answer := range answers {
		t.Run(name, func(t *testing.T) {
			client, rt := adminFakeClient(func(protocol.Message) (protocol.Message, error) { return answer, nil })
			res, err := client.OffsetFetch(context.Background(), &OffsetFetchRequest{GroupID: "g", Topics: map[string][]int{"t": {0, 1}}})
			if err != nil {
				t.Fatal(err)
			}
			sent := rt.sent[0].(*offsetfetch.Request)
			if want := (&offsetfetch.Request{GroupID: "g", Topics: []offsetfetch.RequestTopic{{Name: "t", PartitionIndexes: []int32{0, 1}}}}); !reflect.DeepEqual(sent, want) {
				t.Errorf("sent %+v, want %+v", sent, want)
			}
			if !errors.Is(res.Error, NotCoordinatorForGroup) || res.Throttle != 4*time.Millisecond {
				t.Errorf("answer %+v", res)
			}
			parts := res.Topics["t"]
			if len(res.Topics) != 1 || len(parts) != 2 {
				t.Fatalf("topics %+v", res.Topics)
			}
			if p := parts[0]; p.Partition != 0 || p.CommittedOffset != 5 || p.Metadata != "md" || p.Error != nil {
				t.Errorf("partition 0: %+v", p)
			}
			if p := parts[1]; p.Partition != 1 || p.CommittedOffset != -1 || !errors.Is(p.Error, UnstableOffsetCommit) {
				t.Errorf("partition 1: %+v", p)
			}
		})
	}

	// Without topics, none are sent: null asks for all of them.
	client, rt := adminFakeClient(func(protocol.Message) (protocol.Message, error) { return &offsetfetch.Response{}, nil })
	res, err := client.OffsetFetch(context.Background(), &OffsetFetchRequest{GroupID: "g", Topics: map[string][]int{}})
	if err != nil || res.Error != nil || res.Topics == nil {
		t.Fatalf("OffsetFetch: %+v, %v", res, err)
	}
	if sent := rt.sent[0].(*offsetfetch.Request); sent.Topics != nil {
		t.Errorf("topics sent as %#v, want nil", sent.Topics)
	}
}
