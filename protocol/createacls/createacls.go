// Package createacls holds the CreateAcls messages (API key 30).
package createacls

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0-3,flexible=v2"`

	Creations []RequestACLs `kafka:"v0+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.CreateAcls }

// Broker returns the controller, as upstream does.
func (r *Request) Broker(cluster protocol.Cluster) (protocol.Broker, error) {
	return cluster.Brokers[cluster.Controller], nil
}

// RequestACLs is one ACL to create.
type RequestACLs struct {
	ResourceType        int8   `kafka:"v0+"`
	ResourceName        string `kafka:"v0+"`
	ResourcePatternType int8   `kafka:"v1+"`
	Principal           string `kafka:"v0+"`
	Host                string `kafka:"v0+"`
	Operation           int8   `kafka:"v0+"`
	PermissionType      int8   `kafka:"v0+"`
}

type Response struct {
	_ struct{} `kafka:"versions=v0-3,flexible=v2"`

	ThrottleTimeMs int32          `kafka:"v0+"`
	Results        []ResponseACLs `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.CreateAcls }

type ResponseACLs struct {
	ErrorCode    int16  `kafka:"v0+"`
	ErrorMessage string `kafka:"v0+,nullable"`
}

var _ protocol.BrokerMessage = (*Request)(nil)
