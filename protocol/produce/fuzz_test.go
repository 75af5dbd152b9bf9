package produce_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	_ "github.com/segmentio/kafka-go/protocol/produce"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func FuzzProduceResponse(f *testing.F) {
	prototest.FuzzResponse(f, prototest.ResponseFuzz{
		Key:              protocol.Produce,
		MinVersion:       0,
		MaxVersion:       11,
		TaggedHeaderFrom: 9,
	})
}
