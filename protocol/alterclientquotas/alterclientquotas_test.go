package alterclientquotas_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol/alterclientquotas"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestAlterClientQuotasRoundTrip(t *testing.T) {
	entities := []alterclientquotas.Entity{{EntityType: "user", EntityName: "alice"}, {EntityType: "client-id"}}
	for _, v := range []int16{0, 1} {
		prototest.TestRequest(t, v, &alterclientquotas.Request{ValidateOnly: true, Entries: []alterclientquotas.Entry{{
			Entities: entities,
			Ops:      []alterclientquotas.Ops{{Key: "producer_byte_rate", Value: 1024.5}, {Key: "consumer_byte_rate", Remove: true}},
		}}})
		prototest.TestResponse(t, v, &alterclientquotas.Response{ThrottleTimeMs: 1, Results: []alterclientquotas.ResponseQuotas{
			{ErrorCode: 42, ErrorMessage: "bad", Entities: entities},
		}})
	}
}
