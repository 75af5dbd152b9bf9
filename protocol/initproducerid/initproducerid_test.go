package initproducerid_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol/initproducerid"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestInitProducerIDRoundTrip(t *testing.T) {
	prototest.TestRequest(t, 0, &initproducerid.Request{TransactionTimeoutMs: 1000})
	prototest.TestRequest(t, 2, &initproducerid.Request{TransactionalID: "txn", TransactionTimeoutMs: 1000})
	prototest.TestRequest(t, 5, &initproducerid.Request{TransactionalID: "txn", TransactionTimeoutMs: 1000, ProducerID: 7, ProducerEpoch: 2})

	prototest.TestResponse(t, 0, &initproducerid.Response{ThrottleTimeMs: 1, ProducerID: 7, ProducerEpoch: 0})
	prototest.TestResponse(t, 3, &initproducerid.Response{ErrorCode: 47, ProducerID: -1, ProducerEpoch: -1})
	prototest.TestResponse(t, 5, &initproducerid.Response{ProducerID: 8, ProducerEpoch: 3})

	if got := (&initproducerid.Request{TransactionalID: "txn"}).Transaction(); got != "txn" {
		t.Errorf("Transaction() = %q", got)
	}
}
