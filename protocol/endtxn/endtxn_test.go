package endtxn_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol/endtxn"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestEndTxnRoundTrip(t *testing.T) {
	for _, v := range []int16{0, 2, 3, 4} {
		prototest.TestRequest(t, v, &endtxn.Request{TransactionalID: "txn", ProducerID: 5, ProducerEpoch: 1, Committed: true})
		prototest.TestResponse(t, v, &endtxn.Response{ThrottleTimeMs: 2, ErrorCode: 48})
	}
}
