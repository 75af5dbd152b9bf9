// Package alteruserscramcredentials holds the AlterUserScramCredentials
// messages (API key 51), which create, replace or delete SCRAM credentials.
package alteruserscramcredentials

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0,flexible=v0"`

	Deletions  []RequestUserScramCredentialsDeletion  `kafka:"v0+"`
	Upsertions []RequestUserScramCredentialsUpsertion `kafka:"v0+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.AlterUserScramCredentials }

// Broker returns the controller, which stores the credentials.
func (r *Request) Broker(cluster protocol.Cluster) (protocol.Broker, error) {
	return cluster.Brokers[cluster.Controller], nil
}

type RequestUserScramCredentialsDeletion struct {
	Name      string `kafka:"v0+"`
	Mechanism int8   `kafka:"v0+"`
}

// RequestUserScramCredentialsUpsertion carries the salted password, never
// the password itself.
type RequestUserScramCredentialsUpsertion struct {
	Name           string `kafka:"v0+"`
	Mechanism      int8   `kafka:"v0+"`
	Iterations     int32  `kafka:"v0+"`
	Salt           []byte `kafka:"v0+"`
	SaltedPassword []byte `kafka:"v0+"`
}

type Response struct {
	_ struct{} `kafka:"versions=v0,flexible=v0"`

	ThrottleTimeMs int32                          `kafka:"v0+"`
	Results        []ResponseUserScramCredentials `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.AlterUserScramCredentials }

type ResponseUserScramCredentials struct {
	User         string `kafka:"v0+"`
	ErrorCode    int16  `kafka:"v0+"`
	ErrorMessage string `kafka:"v0+,nullable"`
}

var _ protocol.BrokerMessage = (*Request)(nil)
