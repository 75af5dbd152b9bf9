package joingroup_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	_ "github.com/segmentio/kafka-go/protocol/joingroup"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func FuzzJoinGroupResponse(f *testing.F) {
	prototest.FuzzResponse(f, prototest.ResponseFuzz{
		Key:              protocol.JoinGroup,
		MinVersion:       0,
		MaxVersion:       9,
		TaggedHeaderFrom: 6,
	})
}
