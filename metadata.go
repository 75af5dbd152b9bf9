package kafka

import (
	"context"
	"net"
	"time"

	metadataAPI "github.com/segmentio/kafka-go/protocol/metadata"
)

// MetadataRequest asks for the layout of a cluster.
type MetadataRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr

	// Topics are the topics to describe; nil means all of them.
	Topics []string
}

// MetadataResponse describes the brokers and topics of a cluster.
type MetadataResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// ClusterID is the ID of the cluster.
	ClusterID string

	// Controller is the broker acting as the cluster's controller.
	Controller Broker

	// Brokers are the brokers of the cluster.
	Brokers []Broker

	// Topics are the topics requested (or all of them).
	Topics []Topic
}

// Metadata returns the layout of the cluster. With the default Transport,
// the answer comes from its metadata cache.
func (c *Client) Metadata(ctx context.Context, req *MetadataRequest) (*MetadataResponse, error) {
	m, err := c.roundTrip(ctx, req.Addr, &metadataAPI.Request{TopicNames: req.Topics})
	if err != nil {
		return nil, clientError("Metadata", err)
	}
	res := m.(*metadataAPI.Response)

	ret := new(MetadataResponse)
	ret.ClusterID, ret.Throttle = res.ClusterID, makeDuration(res.ThrottleTimeMs)
	ret.Brokers = make([]Broker, len(res.Brokers))
	ret.Topics = make([]Topic, len(res.Topics))
	byID := make(map[int32]Broker, len(res.Brokers))
	for i, b := range res.Brokers {
		broker := Broker{Host: b.Host, Port: int(b.Port), ID: int(b.NodeID), Rack: b.Rack}
		ret.Brokers[i] = broker
		byID[b.NodeID] = broker
	}
	lookup := func(id int32) Broker {
		if b, ok := byID[id]; ok {
			return b
		}
		return Broker{ID: int(id)}
	}
	brokerList := func(ids []int32) []Broker {
		list := make([]Broker, len(ids))
		for i, id := range ids {
			list[i] = lookup(id)
		}
		return list
	}
	offline := func(ids []int32) []Broker {
		if len(ids) == 0 {
			return nil
		}
		return brokerList(ids)
	}
	if b, ok := byID[res.ControllerID]; ok {
		ret.Controller = b
	}
	for i, t := range res.Topics {
		topic := Topic{
			Name:       t.Name,
			Internal:   t.IsInternal,
			Partitions: make([]Partition, len(t.Partitions)),
			Error:      makeError(t.ErrorCode, ""),
		}
		for j, p := range t.Partitions {
			topic.Partitions[j] = Partition{
				Topic:           t.Name,
				ID:              int(p.PartitionIndex),
				Leader:          lookup(p.LeaderID),
				Replicas:        brokerList(p.ReplicaNodes),
				Isr:             brokerList(p.IsrNodes),
				OfflineReplicas: offline(p.OfflineReplicas),
				Error:           makeError(p.ErrorCode, ""),
			}
		}
		ret.Topics[i] = topic
	}
	return ret, nil
}
