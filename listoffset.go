package kafka

import (
	"context"
	"net"
	"sort"
	"time"

	"github.com/segmentio/kafka-go/protocol/listoffsets"
)

// The timestamps that ask ListOffsets for the first and the last offset of
// a partition (the values of FirstOffset and LastOffset).
const (
	firstOffsetTimestamp = -2
	lastOffsetTimestamp  = -1
)

// OffsetRequest asks for one offset of a partition: the first, the last, or
// the one at a time (Timestamp in milliseconds).
type OffsetRequest struct {
	Partition int
	Timestamp int64
}

// FirstOffsetOf asks for the first offset of a partition.
func FirstOffsetOf(partition int) OffsetRequest {
	return OffsetRequest{Partition: partition, Timestamp: firstOffsetTimestamp}
}

// LastOffsetOf asks for the last offset of a partition (the offset the next
// record will get).
func LastOffsetOf(partition int) OffsetRequest {
	return OffsetRequest{Partition: partition, Timestamp: lastOffsetTimestamp}
}

// TimeOffsetOf asks for the first offset of a partition at or after a time.
func TimeOffsetOf(partition int, at time.Time) OffsetRequest {
	return OffsetRequest{Partition: partition, Timestamp: timestamp(at)}
}

// PartitionOffsets are the offsets found for one partition. FirstOffset and
// LastOffset are -1 when they were not asked for; Offsets maps the offsets
// found by time to the time asked.
type PartitionOffsets struct {
	Partition   int
	FirstOffset int64
	LastOffset  int64
	Offsets     map[int64]time.Time
	Error       error
}

// ListOffsetsRequest asks for offsets of partitions.
type ListOffsetsRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr

	// Topics maps topic names to the offsets asked for.
	Topics map[string][]OffsetRequest

	// IsolationLevel tells whether the last offset counts records of
	// transactions not yet committed. Defaults to ReadUncommitted.
	IsolationLevel IsolationLevel
}

// ListOffsetsResponse is the answer to a ListOffsetsRequest.
type ListOffsetsResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Topics maps every topic of the request to its partitions' offsets.
	Topics map[string][]PartitionOffsets
}

// ListOffsets looks up offsets of partitions, each at its leader.
func (c *Client) ListOffsets(ctx context.Context, req *ListOffsetsRequest) (*ListOffsetsResponse, error) {
	type key struct {
		topic     string
		partition int
	}
	found := make(map[key]PartitionOffsets)
	topics := make([]listoffsets.RequestTopic, 0, len(req.Topics))

	for name, offsets := range req.Topics {
		parts := make([]listoffsets.RequestPartition, 0, len(offsets))
		for _, o := range offsets {
			k := key{name, o.Partition}
			po, ok := found[k]
			if !ok {
				po = PartitionOffsets{
					Partition:   o.Partition,
					FirstOffset: -1,
					LastOffset:  -1,
					Offsets:     make(map[int64]time.Time),
				}
			}
			switch o.Timestamp {
			case firstOffsetTimestamp:
				po.FirstOffset = 0
			case lastOffsetTimestamp:
				po.LastOffset = 0
			}
			found[k] = po
			parts = append(parts, listoffsets.RequestPartition{
				Partition:          int32(o.Partition),
				CurrentLeaderEpoch: -1,
				Timestamp:          o.Timestamp,
			})
		}
		topics = append(topics, listoffsets.RequestTopic{Topic: name, Partitions: parts})
	}

	msg := &listoffsets.Request{ReplicaID: -1, Topics: topics}
	msg.IsolationLevel = int8(req.IsolationLevel)
	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, clientError("ListOffsets", err)
	}
	res := m.(*listoffsets.Response)

	for _, t := range res.Topics {
		for _, p := range t.Partitions {
			k := key{t.Topic, int(p.Partition)}
			po, ok := found[k]
			if !ok {
				continue
			}
			switch p.Timestamp {
			case firstOffsetTimestamp:
				po.FirstOffset = p.Offset
			case lastOffsetTimestamp:
				po.LastOffset = p.Offset
			default:
				po.Offsets[p.Offset] = makeTime(p.Timestamp)
			}
			if p.ErrorCode != 0 {
				po.Error = Error(p.ErrorCode)
			}
			found[k] = po
		}
	}

	ret := &ListOffsetsResponse{
		Throttle: makeDuration(res.ThrottleTimeMs),
		Topics:   make(map[string][]PartitionOffsets, len(res.Topics)),
	}
	for k, po := range found {
		ret.Topics[k.topic] = append(ret.Topics[k.topic], po)
	}
	for _, parts := range ret.Topics {
		sort.Slice(parts, func(i, j int) bool { return parts[i].Partition < parts[j].Partition })
	}
	return ret, nil
}
