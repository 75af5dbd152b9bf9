package alteruserscramcredentials_test

import (
	"testing"

	"github.com/segmentio/kafka-go/protocol/alteruserscramcredentials"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestAlterUserScramCredentialsRoundTrip(t *testing.T) {
	prototest.TestRequest(t, 0, &alteruserscramcredentials.Request{
		Deletions: []alteruserscramcredentials.RequestUserScramCredentialsDeletion{{Name: "bob", Mechanism: 1}},
		Upsertions: []alteruserscramcredentials.RequestUserScramCredentialsUpsertion{
			{Name: "alice", Mechanism: 2, Iterations: 8192, Salt: []byte("salt"), SaltedPassword: []byte("salted")},
		},
	})
	prototest.TestResponse(t, 0, &alteruserscramcredentials.Response{ThrottleTimeMs: 1, Results: []alteruserscramcredentials.ResponseUserScramCredentials{
		{User: "alice"}, {User: "bob", ErrorCode: 91, ErrorMessage: "no such"},
	}})
}
