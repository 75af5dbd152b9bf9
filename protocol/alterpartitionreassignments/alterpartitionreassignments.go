// Package alterpartitionreassignments holds the AlterPartitionReassignments
// messages (API key 45), which move partition replicas between brokers.
package alterpartitionreassignments

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0,flexible=v0"`

	TimeoutMs int32          `kafka:"v0+"`
	Topics    []RequestTopic `kafka:"v0+"`
}

type RequestTopic struct {
	Name       string             `kafka:"v0+"`
	Partitions []RequestPartition `kafka:"v0+"`
}

// RequestPartition gives the new replicas of a partition; nil Replicas (sent
// as null) cancels an ongoing reassignment.
type RequestPartition struct {
	PartitionIndex int32   `kafka:"v0+"`
	Replicas       []int32 `kafka:"v0+,nullable"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.AlterPartitionReassignments }

// Broker returns the controller, which runs reassignments.
func (r *Request) Broker(cluster protocol.Cluster) (protocol.Broker, error) {
	return cluster.Brokers[cluster.Controller], nil
}

type Response struct {
	_ struct{} `kafka:"versions=v0,flexible=v0"`

	ThrottleTimeMs int32            `kafka:"v0+"`
	ErrorCode      int16            `kafka:"v0+"`
	ErrorMessage   string           `kafka:"v0+,nullable"`
	Results        []ResponseResult `kafka:"v0+"`
}

type ResponseResult struct {
	Name       string              `kafka:"v0+"`
	Partitions []ResponsePartition `kafka:"v0+"`
}

type ResponsePartition struct {
	PartitionIndex int32  `kafka:"v0+"`
	ErrorCode      int16  `kafka:"v0+"`
	ErrorMessage   string `kafka:"v0+,nullable"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.AlterPartitionReassignments }

var _ protocol.BrokerMessage = (*Request)(nil)
