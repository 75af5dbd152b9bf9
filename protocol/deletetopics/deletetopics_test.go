package deletetopics_test

import (
	"reflect"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/deletetopics"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestDeleteTopicsRoundTrip(t *testing.T) {
	prototest.TestRequest(t, 0, &deletetopics.Request{TopicNames: []string{"a", "b"}, TimeoutMs: 100})
	prototest.TestRequest(t, 4, &deletetopics.Request{TopicNames: []string{"a"}, TimeoutMs: 100})
	prototest.TestRequest(t, 6, &deletetopics.Request{Topics: []deletetopics.RequestTopic{{Name: "a"}, {TopicID: [16]byte{9}}}, TimeoutMs: 100})

	prototest.TestResponse(t, 0, &deletetopics.Response{Responses: []deletetopics.ResponseTopic{{Name: "a", ErrorCode: 3}}})
	prototest.TestResponse(t, 5, &deletetopics.Response{ThrottleTimeMs: 1, Responses: []deletetopics.ResponseTopic{{Name: "a", ErrorCode: 3, ErrorMessage: "unknown"}}})
	prototest.TestResponse(t, 6, &deletetopics.Response{ThrottleTimeMs: 1, Responses: []deletetopics.ResponseTopic{{TopicID: [16]byte{9}, ErrorCode: 100}}})
}

func TestDeleteTopicsPrepare(t *testing.T) {
	r := &deletetopics.Request{TopicNames: []string{"a", "b"}}
	r.Prepare(6)
	if want := []deletetopics.RequestTopic{{Name: "a"}, {Name: "b"}}; !reflect.DeepEqual(r.Topics, want) {
		t.Errorf("v6: Topics = %+v", r.Topics)
	}
	r = &deletetopics.Request{Topics: []deletetopics.RequestTopic{{Name: "x"}}}
	r.Prepare(5)
	if !reflect.DeepEqual(r.TopicNames, []string{"x"}) {
		t.Errorf("v5: TopicNames = %v", r.TopicNames)
	}
	cluster := protocol.Cluster{Controller: 3, Brokers: map[int32]protocol.Broker{3: {ID: 3}}}
	if b, _ := r.Broker(cluster); b.ID != 3 {
		t.Errorf("broker %v; want the controller", b)
	}
}
