package describeuserscramcredentials_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol/describeuserscramcredentials"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestDescribeUserScramCredentialsRoundTrip(t *testing.T) {
	prototest.TestRequest(t, 0, &describeuserscramcredentials.Request{Users: []describeuserscramcredentials.RequestUser{{Name: "alice"}, {Name: "bob"}}})
	prototest.TestRequest(t, 0, &describeuserscramcredentials.Request{})
	prototest.TestResponse(t, 0, &describeuserscramcredentials.Response{ThrottleTimeMs: 1, Results: []describeuserscramcredentials.ResponseResult{
		{User: "alice", CredentialInfos: []describeuserscramcredentials.CredentialInfo{{Mechanism: 1, Iterations: 4096}, {Mechanism: 2, Iterations: 8192}}},
		{User: "bob", ErrorCode: 91, ErrorMessage: "none"},
	}})
}
