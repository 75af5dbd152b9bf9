package listoffsets_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	_ "github.com/segmentio/kafka-go/protocol/listoffsets"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func FuzzListOffsetsResponse(f *testing.F) {
	prototest.FuzzResponse(f, prototest.ResponseFuzz{
		Key:              protocol.ListOffsets,
		MinVersion:       1,
		MaxVersion:       10,
		TaggedHeaderFrom: 6,
	})
}
