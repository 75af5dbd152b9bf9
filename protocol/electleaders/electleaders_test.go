package electleaders_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol/electleaders"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestElectLeadersRoundTrip(t *testing.T) {
	parts := []electleaders.RequestTopicPartitions{{Topic: "t", PartitionIDs: []int32{0, 1}}}
	prototest.TestRequest(t, 0, &electleaders.Request{TopicPartitions: parts, TimeoutMs: 100})
	prototest.TestRequest(t, 1, &electleaders.Request{ElectionType: 1, TopicPartitions: parts, TimeoutMs: 100})
	prototest.TestRequest(t, 2, &electleaders.Request{ElectionType: 0, TimeoutMs: 100}) // null: every partition

	results := []electleaders.ResponseReplicaElectionResult{{Topic: "t", PartitionResults: []electleaders.ResponsePartitionResult{
		{PartitionID: 0}, {PartitionID: 1, ErrorCode: 84, ErrorMessage: "not needed"},
	}}}
	prototest.TestResponse(t, 0, &electleaders.Response{ThrottleTime: 1, ReplicaElectionResults: results})
	prototest.TestResponse(t, 1, &electleaders.Response{ThrottleTime: 1, ErrorCode: 0, ReplicaElectionResults: results})
	prototest.TestResponse(t, 2, &electleaders.Response{ErrorCode: 41, ReplicaElectionResults: results})
}
