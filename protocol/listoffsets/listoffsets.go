// Package listoffsets holds the ListOffsets messages (API key 2), which look
// up the offset of a partition at a timestamp (or its first or last offset).
//
// Version 0 is left out, as upstream does: it predates timestamps in
// responses (it returns a list of offsets instead), and supporting it would
// add slice fields that make ResponsePartition no longer comparable.
package listoffsets

import (
	"sort"

	"github.com/segmentio/kafka-go/protocol"
)

func init() {
	protocol.Register(&Request{}, &Response{})
}

// Request may name any partitions; Split turns it into one request per
// partition, each sent to that partition's leader.
type Request struct {
	_ struct{} `kafka:"versions=v1-10,flexible=v6"`

	ReplicaID      int32          `kafka:"v0+"`
	IsolationLevel int8           `kafka:"v2+"`
	Topics         []RequestTopic `kafka:"v0+"`
	TimeoutMs      int32          `kafka:"v10+"`
}

type RequestTopic struct {
	Topic      string             `kafka:"v0+"`
	Partitions []RequestPartition `kafka:"v0+"`
}

type RequestPartition struct {
	Partition          int32 `kafka:"v0+"`
	CurrentLeaderEpoch int32 `kafka:"v4+"`
	Timestamp          int64 `kafka:"v0+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.ListOffsets }

// Broker returns the leader of the first partition of the request. Split
// produces requests of exactly one partition, which is what this expects;
// a partition with no known leader yields Broker{ID: -1}.
func (r *Request) Broker(cluster protocol.Cluster) (protocol.Broker, error) {
	if len(r.Topics) == 0 || len(r.Topics[0].Partitions) == 0 {
		return protocol.Broker{ID: -1}, nil
	}
	topic := r.Topics[0].Topic
	id := r.Topics[0].Partitions[0].Partition
	if p, ok := cluster.Topics[topic].Partitions[id]; ok {
		if b, ok := cluster.Brokers[p.Leader]; ok {
			return b, nil
		}
	}
	return protocol.Broker{ID: -1}, nil
}

// defaultTimeoutMs is what Prepare sends as TimeoutMs when the caller left
// it zero (the Java client sends its request timeout, 30s by default).
const defaultTimeoutMs = 30000

// Prepare fills TimeoutMs (v10+), which bounds the broker's wait for offsets
// kept in remote (tiered) storage: zero would make such lookups time out at
// once, and callers written against upstream's API never set it.
func (r *Request) Prepare(apiVersion int16) {
	if apiVersion >= 10 && r.TimeoutMs == 0 {
		r.TimeoutMs = defaultTimeoutMs
	}
}

// Split sends one request per partition: brokers do not answer requests
// naming a partition twice, and each partition may have its own leader.
func (r *Request) Split(cluster protocol.Cluster) ([]protocol.Message, protocol.Merger, error) {
	var msgs []protocol.Message
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			msgs = append(msgs, &Request{
				ReplicaID:      r.ReplicaID,
				IsolationLevel: r.IsolationLevel,
				TimeoutMs:      r.TimeoutMs,
				Topics: []RequestTopic{{
					Topic:      t.Topic,
					Partitions: []RequestPartition{p},
				}},
			})
		}
	}
	return msgs, new(Response), nil
}

type Response struct {
	_ struct{} `kafka:"versions=v1-10,flexible=v6"`

	ThrottleTimeMs int32           `kafka:"v2+"`
	Topics         []ResponseTopic `kafka:"v0+"`
}

type ResponseTopic struct {
	Topic      string              `kafka:"v0+"`
	Partitions []ResponsePartition `kafka:"v0+"`
}

type ResponsePartition struct {
	Partition   int32 `kafka:"v0+"`
	ErrorCode   int16 `kafka:"v0+"`
	Timestamp   int64 `kafka:"v1+"`
	Offset      int64 `kafka:"v1+"`
	LeaderEpoch int32 `kafka:"v4+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.ListOffsets }

// Merge combines the responses to the requests returned by Split into r,
// topics and partitions sorted. Brokers often answer a timestamp of -1 (when
// asked for the first or last offset, say), so each partition gets back the
// timestamp it was asked for. A failed request yields its partitions with
// error code -1; Merge fails only when every request failed.
func (r *Response) Merge(requests []protocol.Message, results []interface{}) (protocol.Message, error) {
	type key struct {
		topic     string
		partition int32
	}
	byTopic := map[string][]ResponsePartition{}
	failures := 0
	var firstErr error

	for i, result := range results {
		req := requests[i].(*Request)
		asked := map[key]int64{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				asked[key{t.Topic, p.Partition}] = p.Timestamp
			}
		}

		msg, err := protocol.Result(result)
		if err != nil {
			failures++
			if firstErr == nil {
				firstErr = err
			}
			for _, t := range req.Topics {
				for _, p := range t.Partitions {
					byTopic[t.Topic] = append(byTopic[t.Topic], ResponsePartition{
						Partition:   p.Partition,
						ErrorCode:   -1,
						Timestamp:   -1,
						Offset:      -1,
						LeaderEpoch: -1,
					})
				}
			}
			continue
		}

		res := msg.(*Response)
		if res.ThrottleTimeMs > r.ThrottleTimeMs {
			r.ThrottleTimeMs = res.ThrottleTimeMs
		}
		for _, t := range res.Topics {
			for _, p := range t.Partitions {
				if ts, ok := asked[key{t.Topic, p.Partition}]; ok {
					p.Timestamp = ts
				}
				byTopic[t.Topic] = append(byTopic[t.Topic], p)
			}
		}
	}

	if len(results) > 0 && failures == len(results) {
		return nil, firstErr
	}

	r.Topics = make([]ResponseTopic, 0, len(byTopic))
	for name, parts := range byTopic {
		sort.Slice(parts, func(i, j int) bool {
			if parts[i].Partition != parts[j].Partition {
				return parts[i].Partition < parts[j].Partition
			}
			return parts[i].Offset < parts[j].Offset
		})
		r.Topics = append(r.Topics, ResponseTopic{Topic: name, Partitions: parts})
	}
	sort.Slice(r.Topics, func(i, j int) bool { return r.Topics[i].Topic < r.Topics[j].Topic })
	return r, nil
}

var (
	_ protocol.BrokerMessage   = (*Request)(nil)
	_ protocol.PreparedMessage = (*Request)(nil)
	_ protocol.Splitter        = (*Request)(nil)
	_ protocol.Merger          = (*Response)(nil)
)
