package consumergroupheartbeat_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func FuzzConsumerGroupHeartbeatResponse(f *testing.F) {
	// Bodies with an assignment present (1) and absent (-1).
	f.Add(uint8(1), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0x13, 0x88, 1, 2})
	f.Add(uint8(0), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0x13, 0x88, 0xff, 0})
	prototest.FuzzResponse(f, prototest.ResponseFuzz{
		Key:              protocol.ConsumerGroupHeartbeat,
		MinVersion:       0,
		MaxVersion:       1,
		TaggedHeaderFrom: 0,
	})
}
