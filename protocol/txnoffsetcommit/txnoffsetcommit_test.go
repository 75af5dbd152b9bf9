package txnoffsetcommit_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol/prototest"
	"github.com/segmentio/kafka-go/protocol/txnoffsetcommit"
)

func TestTxnOffsetCommitRoundTrip(t *testing.T) {
	parts := []txnoffsetcommit.RequestPartition{{Partition: 0, CommittedOffset: 10, CommittedMetadata: "m"}, {Partition: 1, CommittedOffset: 11}}
	prototest.TestRequest(t, 0, &txnoffsetcommit.Request{TransactionalID: "txn", GroupID: "g", ProducerID: 5, ProducerEpoch: 1,
		Topics: []txnoffsetcommit.RequestTopic{{Name: "t", Partitions: parts}}})
	parts[0].CommittedLeaderEpoch = 3
	prototest.TestRequest(t, 2, &txnoffsetcommit.Request{TransactionalID: "txn", GroupID: "g", ProducerID: 5, ProducerEpoch: 1,
		Topics: []txnoffsetcommit.RequestTopic{{Name: "t", Partitions: parts}}})
	prototest.TestRequest(t, 4, &txnoffsetcommit.Request{TransactionalID: "txn", GroupID: "g", ProducerID: 5, ProducerEpoch: 1,
		GenerationID: 2, MemberID: "m", GroupInstanceID: "i", Topics: []txnoffsetcommit.RequestTopic{{Name: "t", Partitions: parts}}})

	res := &txnoffsetcommit.Response{ThrottleTimeMs: 1, Topics: []txnoffsetcommit.ResponseTopic{
		{Name: "t", Partitions: []txnoffsetcommit.ResponsePartition{{Partition: 0}, {Partition: 1, ErrorCode: 47}}},
	}}
	for _, v := range []int16{0, 2, 4} {
		prototest.TestResponse(t, v, res)
	}
	if (&txnoffsetcommit.Request{GroupID: "g"}).Group() != "g" {
		t.Error("Group() must name the group")
	}
}
