package listpartitionreassignments_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol/listpartitionreassignments"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestListPartitionReassignmentsRoundTrip(t *testing.T) {
	prototest.TestRequest(t, 0, &listpartitionreassignments.Request{TimeoutMs: 100, Topics: []listpartitionreassignments.RequestTopic{{Name: "t", PartitionIndexes: []int32{0, 3}}}})
	prototest.TestRequest(t, 0, &listpartitionreassignments.Request{TimeoutMs: 100})
	prototest.TestResponse(t, 0, &listpartitionreassignments.Response{ThrottleTimeMs: 1, Topics: []listpartitionreassignments.ResponseTopic{{
		Name: "t", Partitions: []listpartitionreassignments.ResponsePartition{{PartitionIndex: 0, Replicas: []int32{1, 2, 3}, AddingReplicas: []int32{3}, RemovingReplicas: []int32{1}}},
	}}})
}
