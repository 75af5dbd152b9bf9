package addpartitionstotxn_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol/addpartitionstotxn"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestAddPartitionsToTxnRoundTrip(t *testing.T) {
	for _, v := range []int16{0, 2, 3} {
		prototest.TestRequest(t, v, &addpartitionstotxn.Request{TransactionalID: "txn", ProducerID: 5, ProducerEpoch: 1, Topics: []addpartitionstotxn.RequestTopic{
			{Name: "a", Partitions: []int32{0, 1}}, {Name: "b", Partitions: []int32{2}},
		}})
		prototest.TestResponse(t, v, &addpartitionstotxn.Response{ThrottleTimeMs: 2, Results: []addpartitionstotxn.ResponseResult{
			{Name: "a", Results: []addpartitionstotxn.ResponsePartition{{PartitionIndex: 0}, {PartitionIndex: 1, ErrorCode: 49}}},
		}})
	}
}
