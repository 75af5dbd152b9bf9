package offsetdelete_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol/offsetdelete"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestOffsetDeleteRoundTrip(t *testing.T) {
	prototest.TestRequest(t, 0, &offsetdelete.Request{GroupID: "g", Topics: []offsetdelete.RequestTopic{
		{Name: "t", Partitions: []offsetdelete.RequestPartition{{PartitionIndex: 0}, {PartitionIndex: 2}}},
	}})
	prototest.TestResponse(t, 0, &offsetdelete.Response{ErrorCode: 0, ThrottleTimeMs: 1, Topics: []offsetdelete.ResponseTopic{
		{Name: "t", Partitions: []offsetdelete.ResponsePartition{{PartitionIndex: 0}, {PartitionIndex: 2, ErrorCode: 86}}},
	}})
	if (&offsetdelete.Request{GroupID: "g"}).Group() != "g" {
		t.Error("Group() must name the group")
	}
}
