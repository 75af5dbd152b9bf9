package saslhandshake_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol/prototest"
	"github.com/segmentio/kafka-go/protocol/saslhandshake"
)

func TestSaslHandshakeRoundTrip(t *testing.T) {
	prototest.TestRequest(t, 0, &saslhandshake.Request{Mechanism: "PLAIN"})
	prototest.TestRequest(t, 1, &saslhandshake.Request{Mechanism: "SCRAM-SHA-512"})
	prototest.TestResponse(t, 0, &saslhandshake.Response{ErrorCode: 33, Mechanisms: []string{"PLAIN", "SCRAM-SHA-256"}})
	prototest.TestResponse(t, 1, &saslhandshake.Response{Mechanisms: []string{"PLAIN"}})
}
