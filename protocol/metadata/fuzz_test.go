package metadata_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	_ "github.com/segmentio/kafka-go/protocol/metadata"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func FuzzMetadataResponse(f *testing.F) {
	prototest.FuzzResponse(f, prototest.ResponseFuzz{
		Key:              protocol.Metadata,
		MinVersion:       0,
		MaxVersion:       12,
		TaggedHeaderFrom: 9,
	})
}
