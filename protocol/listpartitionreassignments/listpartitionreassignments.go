// Package listpartitionreassignments holds the ListPartitionReassignments
// messages (API key 46).
package listpartitionreassignments

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0,flexible=v0"`

	TimeoutMs int32 `kafka:"v0+"`
	// Topics nil (sent as null) lists every ongoing reassignment.
	Topics []RequestTopic `kafka:"v0+,nullable"`
}

type RequestTopic struct {
	Name             string  `kafka:"v0+"`
	PartitionIndexes []int32 `kafka:"v0+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.ListPartitionReassignments }

// Broker returns the controller, which tracks reassignments.
func (r *Request) Broker(cluster protocol.Cluster) (protocol.Broker, error) {
	return cluster.Brokers[cluster.Controller], nil
}

type Response struct {
	_ struct{} `kafka:"versions=v0,flexible=v0"`

	ThrottleTimeMs int32           `kafka:"v0+"`
	ErrorCode      int16           `kafka:"v0+"`
	ErrorMessage   string          `kafka:"v0+,nullable"`
	Topics         []ResponseTopic `kafka:"v0+"`
}

type ResponseTopic struct {
	Name       string              `kafka:"v0+"`
	Partitions []ResponsePartition `kafka:"v0+"`
}

type ResponsePartition struct {
	PartitionIndex   int32   `kafka:"v0+"`
	Replicas         []int32 `kafka:"v0+"`
	AddingReplicas   []int32 `kafka:"v0+"`
	RemovingReplicas []int32 `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.ListPartitionReassignments }

var _ protocol.BrokerMessage = (*Request)(nil)
