package kafka

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// adminOffset reads back the committed offset of one partition.
func adminOffset(ctx context.Context, t *testing.T, client *Client, group, topic string, partition int) OffsetFetchPartition {
	t.Helper()
	res, err := client.OffsetFetch(ctx, &OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: {partition}}})
	if err != nil || res.Error != nil {
		t.Fatalf("OffsetFetch: %+v, %v", res, err)
	}
	parts := res.Topics[topic]
	if len(parts) != 1 || parts[0].Partition != partition || parts[0].Error != nil {
		t.Fatalf("OffsetFetch answer %+v", res.Topics)
	}
	return parts[0]
}

// Consumer offsets committed in a transaction become visible when it
// commits, and are dropped when it aborts.
func TestClientTransactionalOffsets(t *testing.T) {
	client := adminClient(t)
	ctx := adminContext(t)
	topic := adminTopic(t, client, 3)
	group := fmt.Sprintf("txn-group-%d", time.Now().UnixNano())
	txnID := fmt.Sprintf("txn-%d", time.Now().UnixNano())

	init, err := client.InitProducerID(ctx, &InitProducerIDRequest{TransactionalID: txnID, TransactionTimeoutMs: 30000, ProducerID: -1, ProducerEpoch: -1})
	if err != nil || init.Error != nil {
		t.Fatalf("InitProducerID: %+v, %v", init, err)
	}
	pid, epoch := init.Producer.ProducerID, init.Producer.ProducerEpoch

	runTxn := func(offset int64, commit bool) {
		t.Helper()
		// Brokers finish the previous transaction in the background
		// (ConcurrentTransactions until then), as clients retry.
		var apt *AddPartitionsToTxnResponse
		var err error
		for {
			apt, err = client.AddPartitionsToTxn(ctx, &AddPartitionsToTxnRequest{
				TransactionalID: txnID, ProducerID: pid, ProducerEpoch: epoch,
				Topics: map[string][]AddPartitionToTxn{topic: {{Partition: 0}, {Partition: 2}}},
			})
			if err != nil {
				t.Fatal(err)
			}
			if p := apt.Topics[topic]; len(p) == 0 || !errors.Is(p[0].Error, ConcurrentTransactions) || !adminSleep(ctx, 20*time.Millisecond) {
				break
			}
		}
		got := apt.Topics[topic]
		if len(apt.Topics) != 1 || len(got) != 2 || got[0].Error != nil || got[1].Error != nil || got[0].Partition+got[1].Partition != 2 {
			t.Fatalf("AddPartitionsToTxn answer %+v", apt.Topics)
		}

		aot, err := client.AddOffsetsToTxn(ctx, &AddOffsetsToTxnRequest{TransactionalID: txnID, ProducerID: pid, ProducerEpoch: epoch, GroupID: group})
		if err != nil || aot.Error != nil {
			t.Fatalf("AddOffsetsToTxn: %+v, %v", aot, err)
		}

		toc, err := client.TxnOffsetCommit(ctx, &TxnOffsetCommitRequest{
			TransactionalID: txnID, GroupID: group, ProducerID: pid, ProducerEpoch: epoch,
			GenerationID: -1,
			Topics:       map[string][]TxnOffsetCommit{topic: {{Partition: 1, Offset: offset, Metadata: fmt.Sprint("txn ", offset)}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string][]TxnOffsetCommitPartition{topic: {{Partition: 1}}}
		if !reflect.DeepEqual(toc.Topics, want) {
			t.Fatalf("TxnOffsetCommit answer %+v, want %+v", toc.Topics, want)
		}

		end, err := client.EndTxn(ctx, &EndTxnRequest{TransactionalID: txnID, ProducerID: pid, ProducerEpoch: epoch, Committed: commit})
		if err != nil || end.Error != nil {
			t.Fatalf("EndTxn(commit=%v): %+v, %v", commit, end, err)
		}
	}

	runTxn(5, true)
	// The commit may take effect after EndTxn returns (brokers write the
	// transaction markers in the background).
	got := adminOffset(ctx, t, client, group, topic, 1)
	for got.CommittedOffset == -1 && adminSleep(ctx, 20*time.Millisecond) {
		got = adminOffset(ctx, t, client, group, topic, 1)
	}
	if got.CommittedOffset != 5 || got.Metadata != "txn 5" {
		t.Fatalf("offset after the committed transaction: %+v, want 5 with metadata %q", got, "txn 5")
	}
	runTxn(9, false)
	if got := adminOffset(ctx, t, client, group, topic, 1); got.CommittedOffset != 5 {
		t.Fatalf("offset after the aborted transaction: %+v, want still 5", got)
	}

	// The last transaction aborted: committing it now is refused (a commit
	// after a commit would be a harmless retry).
	var end *EndTxnResponse
	for {
		end, err = client.EndTxn(ctx, &EndTxnRequest{TransactionalID: txnID, ProducerID: pid, ProducerEpoch: epoch, Committed: true})
		if err != nil || !errors.Is(end.Error, ConcurrentTransactions) || !adminSleep(ctx, 20*time.Millisecond) {
			break
		}
	}
	if err != nil || !errors.Is(end.Error, InvalidTransactionState) {
		t.Fatalf("EndTxn commit after an abort: %+v, %v; want InvalidTransactionState", end, err)
	}

	// A new session (ProducerID and ProducerEpoch -1, as a new producer
	// sends) fences the previous one.
	again, err := client.InitProducerID(ctx, &InitProducerIDRequest{TransactionalID: txnID, TransactionTimeoutMs: 30000, ProducerID: -1, ProducerEpoch: -1})
	if err != nil || again.Error != nil || again.Producer.ProducerEpoch <= epoch && again.Producer.ProducerID == pid {
		t.Fatalf("re-InitProducerID: %+v %+v, %v; want a newer epoch", again, again.Producer, err)
	}
	apt, err := client.AddPartitionsToTxn(ctx, &AddPartitionsToTxnRequest{
		TransactionalID: txnID, ProducerID: pid, ProducerEpoch: epoch,
		Topics: map[string][]AddPartitionToTxn{topic: {{Partition: 0}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := apt.Topics[topic]; len(got) != 1 || !errors.Is(got[0].Error, ProducerFenced) && !errors.Is(got[0].Error, InvalidProducerEpoch) {
		t.Fatalf("AddPartitionsToTxn with a fenced epoch: %+v, want ProducerFenced or InvalidProducerEpoch", apt.Topics)
	}
	aot, err := client.AddOffsetsToTxn(ctx, &AddOffsetsToTxnRequest{TransactionalID: txnID, ProducerID: pid, ProducerEpoch: epoch, GroupID: group})
	if err != nil || !errors.Is(aot.Error, ProducerFenced) && !errors.Is(aot.Error, InvalidProducerEpoch) {
		t.Fatalf("AddOffsetsToTxn with a fenced epoch: %+v, %v", aot, err)
	}
}
