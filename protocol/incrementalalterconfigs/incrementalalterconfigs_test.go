package incrementalalterconfigs_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/incrementalalterconfigs"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestIncrementalAlterConfigsRoundTrip(t *testing.T) {
	for _, v := range []int16{0, 1} {
		prototest.TestRequest(t, v, &incrementalalterconfigs.Request{ValidateOnly: true, Resources: []incrementalalterconfigs.RequestResource{{
			ResourceType: 2, ResourceName: "t",
			Configs: []incrementalalterconfigs.RequestConfig{{Name: "retention.ms", ConfigOperation: 0, Value: "1"}, {Name: "x", ConfigOperation: 1}},
		}}})
		prototest.TestResponse(t, v, &incrementalalterconfigs.Response{ThrottleTimeMs: 1, Responses: []incrementalalterconfigs.ResponseAlterResponse{
			{ResourceType: 2, ResourceName: "t"}, {ErrorCode: 40, ErrorMessage: "bad", ResourceType: 4, ResourceName: "1"},
		}})
	}
}

func TestIncrementalAlterConfigsBroker(t *testing.T) {
	cluster := protocol.Cluster{Controller: 1, Brokers: map[int32]protocol.Broker{1: {ID: 1}, 2: {ID: 2}}}
	topics := &incrementalalterconfigs.Request{Resources: []incrementalalterconfigs.RequestResource{{ResourceType: 2, ResourceName: "t"}}}
	if b, err := topics.Broker(cluster); err != nil || b.ID != 1 {
		t.Errorf("topic configs go to %v (error %v), want the controller", b, err)
	}
	one := &incrementalalterconfigs.Request{Resources: []incrementalalterconfigs.RequestResource{{ResourceType: 2, ResourceName: "t"}, {ResourceType: 4, ResourceName: "2"}, {ResourceType: 4, ResourceName: "2"}}}
	if b, err := one.Broker(cluster); err != nil || b.ID != 2 {
		t.Errorf("broker 2 configs go to %v (error %v)", b, err)
	}
	two := &incrementalalterconfigs.Request{Resources: []incrementalalterconfigs.RequestResource{{ResourceType: 4, ResourceName: "1"}, {ResourceType: 4, ResourceName: "2"}}}
	if _, err := two.Broker(cluster); err == nil {
		t.Error("configs of two brokers in one request must be refused")
	}
}
