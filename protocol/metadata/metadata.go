// Package metadata holds the Metadata messages (API key 3): the brokers of a
// cluster, its controller, and the leader and replicas of each partition.
package metadata

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

// Request asks for the layout of some topics (TopicNames) or of all of them
// (TopicNames nil).
//
// Up to v8 the topic list is an array of strings, which TopicNames carries.
// From v9 each entry is a struct (with a tagged-field section, and from v10 a
// topic ID), carried by Topics. Prepare copies one form into the other for
// the version in use, so callers may fill either.
type Request struct {
	_ struct{} `kafka:"versions=v0-12,flexible=v9"`

	TopicNames                         []string       `kafka:"v0-8,nullable=v1+"`
	Topics                             []RequestTopic `kafka:"v9+,nullable"`
	AllowAutoTopicCreation             bool           `kafka:"v4+"`
	IncludeClusterAuthorizedOperations bool           `kafka:"v8-10"`
	IncludeTopicAuthorizedOperations   bool           `kafka:"v8+"`
}

// RequestTopic names a topic in v9+ requests; from v10 a topic may be named
// by its ID instead (Name then empty, sent as null).
type RequestTopic struct {
	TopicID [16]byte `kafka:"v10+"`
	Name    string   `kafka:"v0+,nullable=v10+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.Metadata }

// Prepare moves the topic list into the field that version apiVersion puts on
// the wire, keeping nil (all topics) distinct from empty (no topics).
func (r *Request) Prepare(apiVersion int16) {
	if apiVersion >= 9 {
		if r.Topics == nil && r.TopicNames != nil {
			r.Topics = make([]RequestTopic, len(r.TopicNames))
			for i, name := range r.TopicNames {
				r.Topics[i].Name = name
			}
		}
		return
	}
	if r.TopicNames == nil && r.Topics != nil {
		r.TopicNames = make([]string, len(r.Topics))
		for i := range r.Topics {
			r.TopicNames[i] = r.Topics[i].Name
		}
	}
}

type Response struct {
	_ struct{} `kafka:"versions=v0-12,flexible=v9"`

	ThrottleTimeMs              int32            `kafka:"v3+"`
	Brokers                     []ResponseBroker `kafka:"v0+"`
	ClusterID                   string           `kafka:"v2+,nullable"`
	ControllerID                int32            `kafka:"v1+"`
	Topics                      []ResponseTopic  `kafka:"v0+"`
	ClusterAuthorizedOperations int32            `kafka:"v8-10"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.Metadata }

type ResponseBroker struct {
	NodeID int32  `kafka:"v0+"`
	Host   string `kafka:"v0+"`
	Port   int32  `kafka:"v0+"`
	Rack   string `kafka:"v1+,nullable"`
}

type ResponseTopic struct {
	ErrorCode                 int16               `kafka:"v0+"`
	Name                      string              `kafka:"v0+,nullable=v12+"`
	TopicID                   [16]byte            `kafka:"v10+"`
	IsInternal                bool                `kafka:"v1+"`
	Partitions                []ResponsePartition `kafka:"v0+"`
	TopicAuthorizedOperations int32               `kafka:"v8+"`
}

type ResponsePartition struct {
	ErrorCode       int16   `kafka:"v0+"`
	PartitionIndex  int32   `kafka:"v0+"`
	LeaderID        int32   `kafka:"v0+"`
	LeaderEpoch     int32   `kafka:"v7+"`
	ReplicaNodes    []int32 `kafka:"v0+"`
	IsrNodes        []int32 `kafka:"v0+"`
	OfflineReplicas []int32 `kafka:"v5+"`
}

// Metadata requests deliberately do not implement protocol.BrokerMessage:
// any broker can answer them, so the transport sends them on its shared
// connection to the cluster.
var _ protocol.PreparedMessage = (*Request)(nil)
