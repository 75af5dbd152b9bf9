package createpartitions_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol/createpartitions"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestCreatePartitionsRoundTrip(t *testing.T) {
	topics := []createpartitions.RequestTopic{
		{Name: "a", Count: 6, Assignments: []createpartitions.RequestAssignment{{BrokerIDs: []int32{1}}, {BrokerIDs: []int32{2, 3}}}},
		{Name: "b", Count: 2}, // null assignments
	}
	prototest.TestRequest(t, 0, &createpartitions.Request{Topics: topics, TimeoutMs: 100})
	prototest.TestRequest(t, 2, &createpartitions.Request{Topics: topics, TimeoutMs: 100, ValidateOnly: true})
	prototest.TestRequest(t, 3, &createpartitions.Request{Topics: topics, TimeoutMs: 100})

	results := []createpartitions.ResponseResult{{Name: "a"}, {Name: "b", ErrorCode: 37, ErrorMessage: "invalid"}}
	prototest.TestResponse(t, 0, &createpartitions.Response{ThrottleTimeMs: 1, Results: results})
	prototest.TestResponse(t, 2, &createpartitions.Response{ThrottleTimeMs: 1, Results: results})
	prototest.TestResponse(t, 3, &createpartitions.Response{Results: results})
}
