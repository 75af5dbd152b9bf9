// Package describeuserscramcredentials holds the DescribeUserScramCredentials
// messages (API key 50).
package describeuserscramcredentials

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0,flexible=v0"`

	// Users nil (sent as null) describes every user.
	Users []RequestUser `kafka:"v0+,nullable"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.DescribeUserScramCredentials }

// Broker returns the controller, as upstream does.
func (r *Request) Broker(cluster protocol.Cluster) (protocol.Broker, error) {
	return cluster.Brokers[cluster.Controller], nil
}

type RequestUser struct {
	Name string `kafka:"v0+"`
}

type Response struct {
	_ struct{} `kafka:"versions=v0,flexible=v0"`

	ThrottleTimeMs int32            `kafka:"v0+"`
	ErrorCode      int16            `kafka:"v0+"`
	ErrorMessage   string           `kafka:"v0+,nullable"`
	Results        []ResponseResult `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.DescribeUserScramCredentials }

type ResponseResult struct {
	User            string           `kafka:"v0+"`
	ErrorCode       int16            `kafka:"v0+"`
	ErrorMessage    string           `kafka:"v0+,nullable"`
	CredentialInfos []CredentialInfo `kafka:"v0+"`
}

type CredentialInfo struct {
	Mechanism  int8  `kafka:"v0+"`
	Iterations int32 `kafka:"v0+"`
}

var _ protocol.BrokerMessage = (*Request)(nil)
