package kafka

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/heartbeat"
)

func TestClientHeartbeatRequest(t *testing.T) {
	var code int16
	client, rt := adminFakeClient(func(req protocol.Message) (protocol.Message, error) {
		return &heartbeat.Response{ThrottleTimeMs: 6, ErrorCode: code}, nil
	})
	req := &HeartbeatRequest{GroupID: "g", GenerationID: 12, MemberID: "m", GroupInstanceID: "i"}
	res, err := client.Heartbeat(context.Background(), req)
	if err != nil || res.Error != nil || res.Throttle != 6*time.Millisecond {
		t.Fatalf("Heartbeat: %+v, %v", res, err)
	}
	if want := (&heartbeat.Request{GroupID: "g", GenerationID: 12, MemberID: "m", GroupInstanceID: "i"}); !reflect.DeepEqual(rt.sent[0], want) {
		t.Errorf("sent %+v, want %+v", rt.sent[0], want)
	}
	code = int16(RebalanceInProgress)
	if res, err = client.Heartbeat(context.Background(), req); err != nil || !errors.Is(res.Error, RebalanceInProgress) {
		t.Fatalf("Heartbeat during a rebalance: %+v, %v", res, err)
	}

	client, _ = adminFakeClient(func(protocol.Message) (protocol.Message, error) { return nil, context.DeadlineExceeded })
	if _, err := client.Heartbeat(context.Background(), req); !errors.Is(err, context.DeadlineExceeded) || err.Error() != "kafka.(*Client).Heartbeat: context deadline exceeded" {
		t.Fatalf("transport error: %v", err)
	}
}
