// Package deletetopics holds the DeleteTopics messages (API key 20), which
// go to the cluster's controller.
package deletetopics

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

// Request deletes topics by name (TopicNames, up to v5) or by name or ID
// (Topics, v6+). Prepare moves names from one form to the other.
type Request struct {
	_ struct{} `kafka:"versions=v0-6,flexible=v4"`

	Topics     []RequestTopic `kafka:"v6+"`
	TopicNames []string       `kafka:"v0-5"`
	TimeoutMs  int32          `kafka:"v0+"`
}

// RequestTopic names a topic to delete (v6+): by Name, or by TopicID with
// Name empty (sent as null).
type RequestTopic struct {
	Name    string   `kafka:"v6+,nullable"`
	TopicID [16]byte `kafka:"v6+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.DeleteTopics }

// Broker returns the controller, the only broker that deletes topics.
func (r *Request) Broker(cluster protocol.Cluster) (protocol.Broker, error) {
	return cluster.Brokers[cluster.Controller], nil
}

func (r *Request) Prepare(apiVersion int16) {
	switch {
	case apiVersion >= 6 && len(r.Topics) == 0 && len(r.TopicNames) > 0:
		r.Topics = make([]RequestTopic, len(r.TopicNames))
		for i, name := range r.TopicNames {
			r.Topics[i].Name = name
		}
	case apiVersion < 6 && len(r.TopicNames) == 0 && len(r.Topics) > 0:
		r.TopicNames = make([]string, len(r.Topics))
		for i := range r.Topics {
			r.TopicNames[i] = r.Topics[i].Name
		}
	}
}

type Response struct {
	_ struct{} `kafka:"versions=v0-6,flexible=v4"`

	ThrottleTimeMs int32           `kafka:"v1+"`
	Responses      []ResponseTopic `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.DeleteTopics }

type ResponseTopic struct {
	Name         string   `kafka:"v0+,nullable=v6+"`
	TopicID      [16]byte `kafka:"v6+"`
	ErrorCode    int16    `kafka:"v0+"`
	ErrorMessage string   `kafka:"v5+,nullable"`
}

var (
	_ protocol.BrokerMessage   = (*Request)(nil)
	_ protocol.PreparedMessage = (*Request)(nil)
)
