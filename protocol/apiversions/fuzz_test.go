package apiversions_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	_ "github.com/segmentio/kafka-go/protocol/apiversions"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func FuzzApiVersionsResponse(f *testing.F) {
	prototest.FuzzResponse(f, prototest.ResponseFuzz{
		Key:        protocol.ApiVersions,
		MinVersion: 0,
		MaxVersion: 4,
		// Header v0 at every version.
		TaggedHeaderFrom: -1,
	})
}
