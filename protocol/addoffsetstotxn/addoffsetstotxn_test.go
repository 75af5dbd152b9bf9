package addoffsetstotxn_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol/addoffsetstotxn"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestAddOffsetsToTxnRoundTrip(t *testing.T) {
	for _, v := range []int16{0, 3, 4} {
		prototest.TestRequest(t, v, &addoffsetstotxn.Request{TransactionalID: "txn", ProducerID: 5, ProducerEpoch: 1, GroupID: "g"})
		prototest.TestResponse(t, v, &addoffsetstotxn.Response{ThrottleTimeMs: 2, ErrorCode: 48})
	}
	if (&addoffsetstotxn.Request{TransactionalID: "txn"}).Transaction() != "txn" {
		t.Error("Transaction() must name the transactional ID")
	}
}
