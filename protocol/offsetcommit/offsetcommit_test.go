package offsetcommit_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol/offsetcommit"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestOffsetCommitRoundTrip(t *testing.T) {
	prototest.TestRequest(t, 0, &offsetcommit.Request{GroupID: "g", Topics: []offsetcommit.RequestTopic{
		{Name: "t", Partitions: []offsetcommit.RequestPartition{{PartitionIndex: 0, CommittedOffset: 10, CommittedMetadata: "m"}, {PartitionIndex: 1, CommittedOffset: 11}}},
	}})
	prototest.TestRequest(t, 1, &offsetcommit.Request{GroupID: "g", GenerationID: 2, MemberID: "m", Topics: []offsetcommit.RequestTopic{
		{Name: "t", Partitions: []offsetcommit.RequestPartition{{PartitionIndex: 0, CommittedOffset: 10, CommitTimestamp: -1}}},
	}})
	prototest.TestRequest(t, 4, &offsetcommit.Request{GroupID: "g", GenerationID: 2, MemberID: "m", RetentionTimeMs: -1, Topics: []offsetcommit.RequestTopic{
		{Name: "t", Partitions: []offsetcommit.RequestPartition{{PartitionIndex: 0, CommittedOffset: 10}}},
	}})
	prototest.TestRequest(t, 7, &offsetcommit.Request{GroupID: "g", GenerationID: 2, MemberID: "m", GroupInstanceID: "i", Topics: []offsetcommit.RequestTopic{
		{Name: "t", Partitions: []offsetcommit.RequestPartition{{PartitionIndex: 0, CommittedOffset: 10, CommittedLeaderEpoch: 3}}},
	}})
	prototest.TestRequest(t, 9, &offsetcommit.Request{GroupID: "g", GenerationID: 2, MemberID: "m", Topics: []offsetcommit.RequestTopic{
		{Name: "t", Partitions: []offsetcommit.RequestPartition{{PartitionIndex: 0, CommittedOffset: 10, CommittedLeaderEpoch: -1, CommittedMetadata: "x"}}},
	}})

	topics := []offsetcommit.ResponseTopic{{Name: "t", Partitions: []offsetcommit.ResponsePartition{{PartitionIndex: 0}, {PartitionIndex: 1, ErrorCode: 22}}}}
	prototest.TestResponse(t, 0, &offsetcommit.Response{Topics: topics})
	prototest.TestResponse(t, 4, &offsetcommit.Response{ThrottleTimeMs: 1, Topics: topics})
	prototest.TestResponse(t, 9, &offsetcommit.Response{ThrottleTimeMs: 1, Topics: topics})
}
