// Package createtopics holds the CreateTopics messages (API key 19), which
// go to the cluster's controller.
package createtopics

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0-7,flexible=v5"`

	Topics       []RequestTopic `kafka:"v0+"`
	TimeoutMs    int32          `kafka:"v0+"`
	ValidateOnly bool           `kafka:"v1+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.CreateTopics }

// Broker returns the controller, the only broker that creates topics.
func (r *Request) Broker(cluster protocol.Cluster) (protocol.Broker, error) {
	return cluster.Brokers[cluster.Controller], nil
}

type RequestTopic struct {
	Name              string              `kafka:"v0+"`
	NumPartitions     int32               `kafka:"v0+"`
	ReplicationFactor int16               `kafka:"v0+"`
	Assignments       []RequestAssignment `kafka:"v0+"`
	Configs           []RequestConfig     `kafka:"v0+"`
}

type RequestAssignment struct {
	PartitionIndex int32   `kafka:"v0+"`
	BrokerIDs      []int32 `kafka:"v0+"`
}

type RequestConfig struct {
	Name  string `kafka:"v0+"`
	Value string `kafka:"v0+,nullable"`
}

type Response struct {
	_ struct{} `kafka:"versions=v0-7,flexible=v5"`

	ThrottleTimeMs int32           `kafka:"v2+"`
	Topics         []ResponseTopic `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.CreateTopics }

type ResponseTopic struct {
	Name         string   `kafka:"v0+"`
	TopicID      [16]byte `kafka:"v7+"`
	ErrorCode    int16    `kafka:"v0+"`
	ErrorMessage string   `kafka:"v1+,nullable"`
	// TopicConfigErrorCode tells why Configs is missing, when it is.
	TopicConfigErrorCode int16                 `kafka:"v5+,tag=0"`
	NumPartitions        int32                 `kafka:"v5+"`
	ReplicationFactor    int16                 `kafka:"v5+"`
	Configs              []ResponseTopicConfig `kafka:"v5+,nullable"`
}

type ResponseTopicConfig struct {
	Name         string `kafka:"v5+"`
	Value        string `kafka:"v5+,nullable"`
	ReadOnly     bool   `kafka:"v5+"`
	ConfigSource int8   `kafka:"v5+"`
	IsSensitive  bool   `kafka:"v5+"`
}

var _ protocol.BrokerMessage = (*Request)(nil)
