package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/offsetfetch"
)

// A Client calls the Kafka APIs (admin, group, produce, fetch) of a cluster
// one request at a time, each method taking a context that cancels it.
//
// A Client is safe for concurrent use as long as its fields are not changed
// after first use.
type Client struct {
	// Addr is the address of the cluster (or of one broker). A request's own
	// address, when set, takes precedence.
	Addr net.Addr

	// Timeout bounds every request of the client; zero means none.
	Timeout time.Duration

	// Transport sends the requests; nil means DefaultTransport.
	Transport RoundTripper
}

// TopicAndGroup names a consumer group and one of its topics.
//
// Deprecated: experimental, to be removed in 1.0; use Client.OffsetFetch.
type TopicAndGroup struct {
	Topic   string
	GroupId string
}

// ConsumerOffsets returns the offsets a consumer group committed for the
// partitions of a topic, by partition.
//
// Deprecated: to be removed in 1.0; use Client.OffsetFetch.
func (c *Client) ConsumerOffsets(ctx context.Context, tg TopicAndGroup) (map[int]int64, error) {
	meta, err := c.Metadata(ctx, &MetadataRequest{Topics: []string{tg.Topic}})
	if err != nil {
		return nil, fmt.Errorf("failed to get topic metadata :%w", err)
	}
	if len(meta.Topics) == 0 {
		return nil, fmt.Errorf("failed to get topic metadata :%w", UnknownTopicOrPartition)
	}
	topic := meta.Topics[0]
	ids := make([]int32, len(topic.Partitions))
	for i, p := range topic.Partitions {
		ids[i] = int32(p.ID)
	}
	m, err := c.roundTrip(ctx, nil, &offsetfetch.Request{
		GroupID: tg.GroupId,
		Topics:  []offsetfetch.RequestTopic{{Name: topic.Name, PartitionIndexes: ids}},
	})
	if err != nil {
		return nil, fmt.Errorf("failed to get offsets: %w", err)
	}
	topics, code, _ := m.(*offsetfetch.Response).Group(tg.GroupId)
	if code != 0 {
		return nil, fmt.Errorf("failed to get offsets: %w", Error(code))
	}
	offsets := make(map[int]int64, len(ids))
	for _, t := range topics {
		if t.Name != topic.Name {
			continue
		}
		for _, p := range t.Partitions {
			offsets[int(p.PartitionIndex)] = p.CommittedOffset
		}
	}
	return offsets, nil
}

func (c *Client) roundTrip(ctx context.Context, addr net.Addr, msg protocol.Message) (protocol.Message, error) {
	if addr == nil {
		addr = c.Addr
	}
	if addr == nil {
		return nil, errors.New("no address was given for the kafka cluster in the request or on the client")
	}
	if c.Timeout <= 0 {
		return c.transport().RoundTrip(ctx, addr, msg)
	}
	limited, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	return c.transport().RoundTrip(limited, addr, msg)
}

// clientError tells which Client method a failure comes from.
func clientError(method string, err error) error {
	return fmt.Errorf("kafka.(*Client).%s: %w", method, err)
}

func (c *Client) transport() RoundTripper {
	if c.Transport == nil {
		return DefaultTransport
	}
	return c.Transport
}

// timeout is the time budget passed to brokers in requests that carry one.
// Half of what remains is used so that the answer still has time to travel
// back before the caller gives up.
func (c *Client) timeout(ctx context.Context, fallback time.Duration) time.Duration {
	budget := c.Timeout
	if deadline, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(deadline))
	}
	if budget > 0 {
		// The broker gets half; the other half is left for the trip
		// there and back.
		return budget / 2
	}
	return fallback
}

func (c *Client) timeoutMs(ctx context.Context, fallback time.Duration) int32 {
	return int32(c.timeout(ctx, fallback).Milliseconds())
}

// Broker-side time limits that timeout falls back to when the Client has
// no Timeout (or ctx is already past its deadline).
const (
	// CreateTopics, DeleteTopics and CreatePartitions.
	defaultTopicAdminTimeout = 2 * time.Second
	// Produce with acks=all, and a fetch's MaxWait when the request has
	// none.
	defaultProduceTimeout = time.Second / 2
	defaultMaxWait        = time.Second / 2
)
