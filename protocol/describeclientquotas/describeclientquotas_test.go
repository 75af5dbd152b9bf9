package describeclientquotas_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol/describeclientquotas"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestDescribeClientQuotasRoundTrip(t *testing.T) {
	for _, v := range []int16{0, 1} {
		prototest.TestRequest(t, v, &describeclientquotas.Request{Strict: true, Components: []describeclientquotas.Component{
			{EntityType: "user", MatchType: 0, Match: "alice"}, {EntityType: "client-id", MatchType: 2},
		}})
		prototest.TestResponse(t, v, &describeclientquotas.Response{ThrottleTimeMs: 1, Entries: []describeclientquotas.ResponseQuotas{{
			Entities: []describeclientquotas.Entity{{EntityType: "user", EntityName: "alice"}, {EntityType: "client-id"}},
			Values:   []describeclientquotas.Value{{Key: "producer_byte_rate", Value: 1e6}},
		}}})
		prototest.TestResponse(t, v, &describeclientquotas.Response{ErrorCode: 29, ErrorMessage: "denied"})
	}
}
