package kafka

import (
	"context"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol/createtopics"
)

// CreateTopicsRequest asks the cluster to create topics.
type CreateTopicsRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr

	// Topics are the topics to create.
	Topics []TopicConfig

	// ValidateOnly checks the request without creating anything
	// (CreateTopics v1+).
	ValidateOnly bool
}

// CreateTopicsResponse is the answer to a CreateTopicsRequest.
type CreateTopicsResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Errors maps every topic of the request to the error creating it, nil
	// on success; errors.Is matches them against the Error codes.
	Errors map[string]error
}

// CreateTopics creates topics. When it returns, the topics created are
// known to the transport's metadata (or the context ended first).
func (c *Client) CreateTopics(ctx context.Context, req *CreateTopicsRequest) (*CreateTopicsResponse, error) {
	msg := &createtopics.Request{
		TimeoutMs:    c.timeoutMs(ctx, defaultTopicAdminTimeout),
		ValidateOnly: req.ValidateOnly,
		Topics:       make([]createtopics.RequestTopic, 0, len(req.Topics)),
	}
	for i := range req.Topics {
		msg.Topics = append(msg.Topics, req.Topics[i].requestTopic())
	}
	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, clientError("CreateTopics", err)
	}
	res := m.(*createtopics.Response)
	errs := make(map[string]error, len(res.Topics))
	for _, topic := range res.Topics {
		errs[topic.Name] = makeError(topic.ErrorCode, topic.ErrorMessage)
	}
	return &CreateTopicsResponse{Throttle: makeDuration(res.ThrottleTimeMs), Errors: errs}, nil
}

// ConfigEntry is one configuration setting of a topic.
type ConfigEntry struct {
	ConfigName  string
	ConfigValue string
}

// ReplicaAssignment places the replicas of one partition.
type ReplicaAssignment struct {
	Partition int

	// Replicas are the IDs of the brokers holding the partition's replicas,
	// the preferred leader first.
	Replicas []int
}

func (a *ReplicaAssignment) brokerIDs() []int32 {
	if len(a.Replicas) == 0 {
		return nil
	}
	ids := make([]int32, len(a.Replicas))
	for i, r := range a.Replicas {
		ids[i] = int32(r)
	}
	return ids
}

// TopicConfig describes a topic to create.
type TopicConfig struct {
	// Topic is the name of the topic.
	Topic string

	// NumPartitions is the number of partitions; -1 leaves it to the broker.
	NumPartitions int

	// ReplicationFactor is the number of replicas of each partition; -1
	// leaves it to the broker.
	ReplicationFactor int

	// ReplicaAssignments places the partitions explicitly; NumPartitions
	// and ReplicationFactor must then be -1.
	ReplicaAssignments []ReplicaAssignment

	// ConfigEntries are the topic's configuration settings.
	ConfigEntries []ConfigEntry
}

func (t *TopicConfig) requestTopic() createtopics.RequestTopic {
	rt := createtopics.RequestTopic{Name: t.Topic, Assignments: t.assignments(), Configs: t.configs()}
	rt.NumPartitions, rt.ReplicationFactor = int32(t.NumPartitions), int16(t.ReplicationFactor)
	return rt
}

func (t *TopicConfig) assignments() []createtopics.RequestAssignment {
	if len(t.ReplicaAssignments) == 0 {
		return nil
	}
	out := make([]createtopics.RequestAssignment, len(t.ReplicaAssignments))
	for i := range t.ReplicaAssignments {
		a := &t.ReplicaAssignments[i]
		out[i] = createtopics.RequestAssignment{PartitionIndex: int32(a.Partition), BrokerIDs: a.brokerIDs()}
	}
	return out
}

func (t *TopicConfig) configs() []createtopics.RequestConfig {
	if len(t.ConfigEntries) == 0 {
		return nil
	}
	out := make([]createtopics.RequestConfig, len(t.ConfigEntries))
	for i, e := range t.ConfigEntries {
		out[i] = createtopics.RequestConfig{Name: e.ConfigName, Value: e.ConfigValue}
	}
	return out
}
