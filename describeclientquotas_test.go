package kafka

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/describeclientquotas"
)

// The broker's error and throttle time are reported (the throttle in
// milliseconds, as for every other API).
func TestClientDescribeClientQuotasMapping(t *testing.T) {
	client, rt := adminFakeClient(func(req protocol.Message) (protocol.Message, error) {
		return &describeclientquotas.Response{ThrottleTimeMs: 25, ErrorCode: int16(InvalidRequest), ErrorMessage: "bad filter"}, nil
	})
	res, err := client.DescribeClientQuotas(context.Background(), &DescribeClientQuotasRequest{
		Components: []DescribeClientQuotasRequestComponent{{EntityType: "user", MatchType: 2}, {EntityType: "client-id", Match: "app"}},
		Strict:     true,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := &describeclientquotas.Request{Strict: true, Components: []describeclientquotas.Component{
		{EntityType: "user", MatchType: 2},
		{EntityType: "client-id", Match: "app"},
	}}
	if !reflect.DeepEqual(rt.sent[0], want) {
		t.Errorf("sent %+v, want %+v", rt.sent[0], want)
	}
	if res.Throttle != 25*time.Millisecond || !errors.Is(res.Error, InvalidRequest) || !strings.Contains(res.Error.Error(), "bad filter") || len(res.Entries) != 0 {
		t.Errorf("answer %+v", res)
	}
}
