// Package createpartitions holds the CreatePartitions messages (API key 37),
// which add partitions to existing topics on the controller.
package createpartitions

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0-3,flexible=v2"`

	Topics       []RequestTopic `kafka:"v0+"`
	TimeoutMs    int32          `kafka:"v0+"`
	ValidateOnly bool           `kafka:"v0+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.CreatePartitions }

// Broker returns the controller, the only broker that adds partitions.
func (r *Request) Broker(cluster protocol.Cluster) (protocol.Broker, error) {
	return cluster.Brokers[cluster.Controller], nil
}

type RequestTopic struct {
	Name string `kafka:"v0+"`
	// Count is the new total number of partitions of the topic.
	Count int32 `kafka:"v0+"`
	// Assignments lists the replicas of each new partition; nil lets the
	// controller choose.
	Assignments []RequestAssignment `kafka:"v0+,nullable"`
}

type RequestAssignment struct {
	BrokerIDs []int32 `kafka:"v0+"`
}

type Response struct {
	_ struct{} `kafka:"versions=v0-3,flexible=v2"`

	ThrottleTimeMs int32            `kafka:"v0+"`
	Results        []ResponseResult `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.CreatePartitions }

type ResponseResult struct {
	Name         string `kafka:"v0+"`
	ErrorCode    int16  `kafka:"v0+"`
	ErrorMessage string `kafka:"v0+,nullable"`
}

var _ protocol.BrokerMessage = (*Request)(nil)
