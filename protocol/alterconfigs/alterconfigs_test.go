package alterconfigs_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol/alterconfigs"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestAlterConfigsRoundTrip(t *testing.T) {
	for _, v := range []int16{0, 1, 2} {
		prototest.TestRequest(t, v, &alterconfigs.Request{ValidateOnly: true, Resources: []alterconfigs.RequestResources{{
			ResourceType: 2, ResourceName: "t",
			Configs: []alterconfigs.RequestConfig{{Name: "retention.ms", Value: "1"}, {Name: "cleanup.policy"}},
		}}})
		prototest.TestResponse(t, v, &alterconfigs.Response{ThrottleTimeMs: 1, Responses: []alterconfigs.ResponseResponses{
			{ResourceType: 2, ResourceName: "t"}, {ErrorCode: 40, ErrorMessage: "bad", ResourceType: 4, ResourceName: "1"},
		}})
	}
}
