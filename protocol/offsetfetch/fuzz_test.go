package offsetfetch_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	_ "github.com/segmentio/kafka-go/protocol/offsetfetch"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func FuzzOffsetFetchResponse(f *testing.F) {
	prototest.FuzzResponse(f, prototest.ResponseFuzz{
		Key:              protocol.OffsetFetch,
		MinVersion:       0,
		MaxVersion:       9,
		TaggedHeaderFrom: 6,
	})
}
