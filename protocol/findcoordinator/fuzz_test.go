package findcoordinator_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	_ "github.com/segmentio/kafka-go/protocol/findcoordinator"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func FuzzFindCoordinatorResponse(f *testing.F) {
	prototest.FuzzResponse(f, prototest.ResponseFuzz{
		Key:              protocol.FindCoordinator,
		MinVersion:       0,
		MaxVersion:       3,
		TaggedHeaderFrom: 3,
	})
}
