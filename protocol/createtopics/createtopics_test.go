package createtopics_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/createtopics"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestCreateTopicsRoundTrip(t *testing.T) {
	topic := createtopics.RequestTopic{
		Name: "t", NumPartitions: -1, ReplicationFactor: -1,
		Assignments: []createtopics.RequestAssignment{{PartitionIndex: 0, BrokerIDs: []int32{1, 2}}},
		Configs:     []createtopics.RequestConfig{{Name: "retention.ms", Value: "1000"}, {Name: "cleanup.policy"}},
	}
	prototest.TestRequest(t, 0, &createtopics.Request{Topics: []createtopics.RequestTopic{topic}, TimeoutMs: 1000})
	prototest.TestRequest(t, 4, &createtopics.Request{Topics: []createtopics.RequestTopic{topic}, TimeoutMs: 1000, ValidateOnly: true})
	prototest.TestRequest(t, 7, &createtopics.Request{Topics: []createtopics.RequestTopic{topic}, TimeoutMs: 1000})

	prototest.TestResponse(t, 0, &createtopics.Response{Topics: []createtopics.ResponseTopic{{Name: "t", ErrorCode: 36}}})
	prototest.TestResponse(t, 4, &createtopics.Response{ThrottleTimeMs: 1, Topics: []createtopics.ResponseTopic{{Name: "t", ErrorCode: 36, ErrorMessage: "exists"}}})
	prototest.TestResponse(t, 7, &createtopics.Response{ThrottleTimeMs: 1, Topics: []createtopics.ResponseTopic{{
		Name: "t", TopicID: [16]byte{1, 2, 3}, TopicConfigErrorCode: 29, NumPartitions: 3, ReplicationFactor: 1,
		Configs: []createtopics.ResponseTopicConfig{{Name: "retention.ms", Value: "1000", ConfigSource: 1, IsSensitive: false}, {Name: "secret", ReadOnly: true, ConfigSource: 5, IsSensitive: true}},
	}}})
}

func TestCreateTopicsBroker(t *testing.T) {
	cluster := protocol.Cluster{Controller: 2, Brokers: map[int32]protocol.Broker{1: {ID: 1}, 2: {ID: 2}}}
	if b, err := (&createtopics.Request{}).Broker(cluster); err != nil || b.ID != 2 {
		t.Errorf("broker %v, error %v; want the controller", b, err)
	}
}
