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
	// One result per (topic, partition), however many times the caller asked
	// about it: first/last offsets go to their fields, times to Offsets.
	results := make(map[string]map[int]*PartitionOffsets, len(req.Topics))
	msg := &listoffsets.Request{
		ReplicaID:      -1,
		IsolationLevel: int8(req.IsolationLevel),
		Topics:         make([]listoffsets.RequestTopic, 0, len(req.Topics)),
	}
	for name, offsets := range req.Topics {
		rt := listoffsets.RequestTopic{Topic: name}
		for _, o := range offsets {
			markAsked(resultFor(results, name, o.Partition), o.Timestamp)
			rt.Partitions = append(rt.Partitions, listoffsets.RequestPartition{
				Partition:          int32(o.Partition),
				CurrentLeaderEpoch: -1,
				Timestamp:          o.Timestamp,
			})
		}
		msg.Topics = append(msg.Topics, rt)
	}

	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, clientError("ListOffsets", err)
	}
	res := m.(*listoffsets.Response)
	for _, t := range res.Topics {
		for _, p := range t.Partitions {
			po := results[t.Topic][int(p.Partition)]
			if po == nil {
				continue // the broker answered about something we never asked
			}
			recordOffset(po, p)
		}
	}

	ret := &ListOffsetsResponse{
		Throttle: makeDuration(res.ThrottleTimeMs),
		Topics:   make(map[string][]PartitionOffsets, len(results)),
	}
	for name, byPartition := range results {
		list := make([]PartitionOffsets, 0, len(byPartition))
		for _, po := range byPartition {
			list = append(list, *po)
		}
		sort.Slice(list, func(i, j int) bool { return list[i].Partition < list[j].Partition })
		ret.Topics[name] = list
	}
	return ret, nil
}

// resultFor returns the entry of results for a partition, creating it with
// -1 meaning "not asked" for the first and last offsets.
func resultFor(results map[string]map[int]*PartitionOffsets, topic string, partition int) *PartitionOffsets {
	byPartition := results[topic]
	if byPartition == nil {
		byPartition = make(map[int]*PartitionOffsets)
		results[topic] = byPartition
	}
	po := byPartition[partition]
	if po == nil {
		po = &PartitionOffsets{Partition: partition, FirstOffset: -1, LastOffset: -1, Offsets: map[int64]time.Time{}}
		byPartition[partition] = po
	}
	return po
}

// markAsked turns a first/last offset that was asked for from "not asked"
// (-1) into zero, so that it stays distinguishable even if the broker leaves
// it out of the answer.
func markAsked(po *PartitionOffsets, ts int64) {
	if ts == firstOffsetTimestamp {
		po.FirstOffset = 0
	} else if ts == lastOffsetTimestamp {
		po.LastOffset = 0
	}
}

// recordOffset stores one partition answer of the broker in po.
func recordOffset(po *PartitionOffsets, p listoffsets.ResponsePartition) {
	if p.ErrorCode != 0 {
		po.Error = Error(p.ErrorCode)
	}
	if p.Timestamp == firstOffsetTimestamp {
		po.FirstOffset = p.Offset
		return
	}
	if p.Timestamp == lastOffsetTimestamp {
		po.LastOffset = p.Offset
		return
	}
	po.Offsets[p.Offset] = makeTime(p.Timestamp)
}
