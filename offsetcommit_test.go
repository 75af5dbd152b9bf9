package kafka

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/offsetcommit"
	"github.com/segmentio/kafka-go/protocol/txnoffsetcommit"
)

// The fields only some versions carry are filled so that whichever
// version the broker speaks gets sensible values: a one-day retention
// (v2-v4), the commit time (v1), and an unknown leader epoch (v6+).
func TestClientOffsetCommitRequest(t *testing.T) {
	client, rt := adminFakeClient(func(req protocol.Message) (protocol.Message, error) {
		return &offsetcommit.Response{ThrottleTimeMs: 1, Topics: []offsetcommit.ResponseTopic{{Name: "t", Partitions: []offsetcommit.ResponsePartition{
			{PartitionIndex: 0}, {PartitionIndex: 3, ErrorCode: int16(OffsetMetadataTooLarge)},
		}}}}, nil
	})
	before := time.Now().UnixMilli()
	res, err := client.OffsetCommit(context.Background(), &OffsetCommitRequest{
		GroupID: "g", GenerationID: 4, MemberID: "m", InstanceID: "i",
		Topics: map[string][]OffsetCommit{"t": {{Partition: 0, Offset: 12, Metadata: "x"}, {Partition: 3, Offset: 1}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now().UnixMilli()
	sent := rt.sent[0].(*offsetcommit.Request)
	if sent.GroupID != "g" || sent.GenerationID != 4 || sent.MemberID != "m" || sent.GroupInstanceID != "i" || sent.RetentionTimeMs != 86400000 || len(sent.Topics) != 1 {
		t.Fatalf("sent %+v", sent)
	}
	parts := sent.Topics[0].Partitions
	if sent.Topics[0].Name != "t" || len(parts) != 2 {
		t.Fatalf("sent topics %+v", sent.Topics)
	}
	for i, want := range []offsetcommit.RequestPartition{
		{PartitionIndex: 0, CommittedOffset: 12, CommittedLeaderEpoch: -1, CommittedMetadata: "x"},
		{PartitionIndex: 3, CommittedOffset: 1, CommittedLeaderEpoch: -1},
	} {
		got := parts[i]
		if got.CommitTimestamp < before || got.CommitTimestamp > after {
			t.Errorf("partition %d: commit time %d, not the time of the call", got.PartitionIndex, got.CommitTimestamp)
		}
		got.CommitTimestamp = 0
		if got != want {
			t.Errorf("sent partition %+v, want %+v", got, want)
		}
	}
	if res.Throttle != time.Millisecond || len(res.Topics["t"]) != 2 || res.Topics["t"][0].Error != nil || !errors.Is(res.Topics["t"][1].Error, OffsetMetadataTooLarge) {
		t.Errorf("answer %+v", res)
	}
}

func TestClientTxnOffsetCommitRequest(t *testing.T) {
	client, rt := adminFakeClient(func(req protocol.Message) (protocol.Message, error) {
		return &txnoffsetcommit.Response{ThrottleTimeMs: 2, Topics: []txnoffsetcommit.ResponseTopic{{Name: "t", Partitions: []txnoffsetcommit.ResponsePartition{
			{Partition: 1, ErrorCode: int16(FencedInstanceID)},
		}}}}, nil
	})
	res, err := client.TxnOffsetCommit(context.Background(), &TxnOffsetCommitRequest{
		TransactionalID: "tx", GroupID: "g", ProducerID: 99, ProducerEpoch: 3,
		GenerationID: 5, MemberID: "m", GroupInstanceID: "i",
		Topics: map[string][]TxnOffsetCommit{"t": {{Partition: 1, Offset: 40, Metadata: "md"}}, "u": {{Partition: 0, Offset: 2}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	sent := rt.sent[0].(*txnoffsetcommit.Request)
	sort.Slice(sent.Topics, func(i, j int) bool { return sent.Topics[i].Name < sent.Topics[j].Name })
	want := &txnoffsetcommit.Request{
		TransactionalID: "tx", GroupID: "g", ProducerID: 99, ProducerEpoch: 3,
		GenerationID: 5, MemberID: "m", GroupInstanceID: "i",
		Topics: []txnoffsetcommit.RequestTopic{
			{Name: "t", Partitions: []txnoffsetcommit.RequestPartition{{Partition: 1, CommittedOffset: 40, CommittedLeaderEpoch: -1, CommittedMetadata: "md"}}},
			{Name: "u", Partitions: []txnoffsetcommit.RequestPartition{{Partition: 0, CommittedOffset: 2, CommittedLeaderEpoch: -1}}},
		},
	}
	if !reflect.DeepEqual(sent, want) {
		t.Errorf("sent %+v, want %+v", sent, want)
	}
	if res.Throttle != 2*time.Millisecond || len(res.Topics) != 1 || len(res.Topics["t"]) != 1 || res.Topics["t"][0].Partition != 1 || !errors.Is(res.Topics["t"][0].Error, FencedInstanceID) {
		t.Errorf("answer %+v", res)
	}
}
