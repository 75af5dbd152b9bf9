package alterpartitionreassignments_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol/alterpartitionreassignments"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestAlterPartitionReassignmentsRoundTrip(t *testing.T) {
	prototest.TestRequest(t, 0, &alterpartitionreassignments.Request{TimeoutMs: 100, Topics: []alterpartitionreassignments.RequestTopic{{
		Name: "t", Partitions: []alterpartitionreassignments.RequestPartition{{PartitionIndex: 0, Replicas: []int32{1, 2}}, {PartitionIndex: 1}},
	}}})
	prototest.TestResponse(t, 0, &alterpartitionreassignments.Response{ThrottleTimeMs: 1, ErrorMessage: "m", Results: []alterpartitionreassignments.ResponseResult{{
		Name: "t", Partitions: []alterpartitionreassignments.ResponsePartition{{PartitionIndex: 0}, {PartitionIndex: 1, ErrorCode: 85, ErrorMessage: "none"}},
	}}})
}
