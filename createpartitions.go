package kafka

import (
	"context"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol/createpartitions"
)

// CreatePartitionsRequest asks the cluster to add partitions to topics.
type CreatePartitionsRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr

	// Topics are the topics to grow.
	Topics []TopicPartitionsConfig

	// ValidateOnly checks the request without changing anything.
	ValidateOnly bool
}

// CreatePartitionsResponse is the answer to a CreatePartitionsRequest.
type CreatePartitionsResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Errors maps every topic of the request to its error, nil on success.
	Errors map[string]error
}

// CreatePartitions adds partitions to topics.
func (c *Client) CreatePartitions(ctx context.Context, req *CreatePartitionsRequest) (*CreatePartitionsResponse, error) {
	msg := &createpartitions.Request{
		TimeoutMs:    c.timeoutMs(ctx, defaultTopicAdminTimeout),
		ValidateOnly: req.ValidateOnly,
	}
	for i := range req.Topics {
		t := &req.Topics[i]
		msg.Topics = append(msg.Topics, createpartitions.RequestTopic{Name: t.Name, Count: t.Count, Assignments: t.assignments()})
	}
	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, clientError("CreatePartitions", err)
	}
	res := m.(*createpartitions.Response)
	errs := make(map[string]error, len(res.Results))
	for _, r := range res.Results {
		errs[r.Name] = makeError(r.ErrorCode, r.ErrorMessage)
	}
	return &CreatePartitionsResponse{Throttle: makeDuration(res.ThrottleTimeMs), Errors: errs}, nil
}

// TopicPartitionsConfig describes the partitions a topic should have.
type TopicPartitionsConfig struct {
	// Name is the topic's name.
	Name string

	// Count is the total number of partitions the topic should have.
	Count int32

	// TopicPartitionAssignments places the new partitions' replicas.
	TopicPartitionAssignments []TopicPartitionAssignment
}

func (t *TopicPartitionsConfig) assignments() []createpartitions.RequestAssignment {
	var out []createpartitions.RequestAssignment
	for _, a := range t.TopicPartitionAssignments {
		out = append(out, createpartitions.RequestAssignment{BrokerIDs: a.BrokerIDs})
	}
	return out // nil when there are none: the broker places the partitions
}

// TopicPartitionAssignment lists the brokers of one new partition.
type TopicPartitionAssignment struct {
	// BrokerIDs are the IDs of the brokers holding its replicas.
	BrokerIDs []int32
}
