// Package electleaders holds the ElectLeaders messages (API key 43), which
// ask the controller to elect the preferred (or any unclean) leader of
// partitions.
package electleaders

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0-2,flexible=v2"`

	// ElectionType is 0 for the preferred leader, 1 for an unclean election
	// (v1+; v0 always elects the preferred leader).
	ElectionType int8 `kafka:"v1+"`
	// TopicPartitions nil (sent as null) means every partition.
	TopicPartitions []RequestTopicPartitions `kafka:"v0+,nullable"`
	TimeoutMs       int32                    `kafka:"v0+"`
}

type RequestTopicPartitions struct {
	Topic        string  `kafka:"v0+"`
	PartitionIDs []int32 `kafka:"v0+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.ElectLeaders }

// Broker returns the controller, which runs elections.
func (r *Request) Broker(cluster protocol.Cluster) (protocol.Broker, error) {
	return cluster.Brokers[cluster.Controller], nil
}

type Response struct {
	_ struct{} `kafka:"versions=v0-2,flexible=v2"`

	ThrottleTime           int32                           `kafka:"v0+"`
	ErrorCode              int16                           `kafka:"v1+"`
	ReplicaElectionResults []ResponseReplicaElectionResult `kafka:"v0+"`
}

type ResponseReplicaElectionResult struct {
	Topic            string                    `kafka:"v0+"`
	PartitionResults []ResponsePartitionResult `kafka:"v0+"`
}

type ResponsePartitionResult struct {
	PartitionID  int32  `kafka:"v0+"`
	ErrorCode    int16  `kafka:"v0+"`
	ErrorMessage string `kafka:"v0+,nullable"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.ElectLeaders }

var _ protocol.BrokerMessage = (*Request)(nil)
