package kafka

import (
	"context"
	"fmt"
	"math"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	fetchAPI "github.com/segmentio/kafka-go/protocol/fetch"
)

// FetchRequest asks for the records of one partition from an offset.
type FetchRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr

	// Topic, Partition and Offset say where to read. Offset may be
	// FirstOffset or LastOffset, which are looked up first.
	Topic     string
	Partition int
	Offset    int64

	// MinBytes, MaxBytes and MaxWait bound the size of the response and how
	// long the broker may wait for MinBytes to be available.
	MinBytes int64
	MaxBytes int64
	MaxWait  time.Duration

	// IsolationLevel tells whether records of transactions not yet committed
	// are returned. Defaults to ReadUncommitted.
	IsolationLevel IsolationLevel
}

// FetchResponse is the answer to a FetchRequest.
type FetchResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Topic and Partition are those of the request.
	Topic     string
	Partition int

	// HighWatermark, LastStableOffset and LogStartOffset describe the
	// partition's offsets.
	HighWatermark    int64
	LastStableOffset int64
	LogStartOffset   int64

	// Error is the error the broker reported, if any.
	Error error

	// Records are the records returned. Batches may start before the
	// requested offset: skipping those records is up to the caller.
	Records RecordReader
}

// Fetch reads records of a partition.
func (c *Client) Fetch(ctx context.Context, req *FetchRequest) (*FetchResponse, error) {
	wait := req.maxWait()
	if limit := c.timeout(ctx, math.MaxInt64); limit < wait {
		wait = limit
	}

	offset := req.Offset
	if offset == firstOffsetTimestamp || offset == lastOffsetTimestamp {
		r, err := c.ListOffsets(ctx, &ListOffsetsRequest{
			Addr: req.Addr,
			Topics: map[string][]OffsetRequest{
				req.Topic: {{Partition: req.Partition, Timestamp: offset}},
			},
		})
		if err != nil {
			return nil, fmt.Errorf("kafka.(*Client).Fetch: %w", err)
		}
		for _, p := range r.Topics[req.Topic] {
			if p.Partition != req.Partition {
				continue
			}
			if p.Error != nil {
				return nil, fmt.Errorf("kafka.(*Client).Fetch: %w", p.Error)
			}
			if offset == firstOffsetTimestamp {
				offset = p.FirstOffset
			} else {
				offset = p.LastOffset
			}
			break
		}
	}

	m, err := c.roundTrip(ctx, req.Addr, &fetchAPI.Request{
		ReplicaID:      -1,
		MaxWaitTime:    milliseconds(wait),
		MinBytes:       int32(req.MinBytes),
		MaxBytes:       int32(req.MaxBytes),
		IsolationLevel: int8(req.IsolationLevel),
		SessionID:      -1,
		SessionEpoch:   -1,
		Topics: []fetchAPI.RequestTopic{{
			Topic: req.Topic,
			Partitions: []fetchAPI.RequestPartition{{
				Partition:          int32(req.Partition),
				CurrentLeaderEpoch: -1,
				FetchOffset:        offset,
				LogStartOffset:     -1,
				PartitionMaxBytes:  int32(req.MaxBytes),
			}},
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).Fetch: %w", err)
	}

	res := m.(*fetchAPI.Response)
	if len(res.Topics) == 0 {
		return nil, fmt.Errorf("kafka.(*Client).Fetch: %w", protocol.ErrNoTopic)
	}
	t := &res.Topics[0]
	if len(t.Partitions) == 0 {
		return nil, fmt.Errorf("kafka.(*Client).Fetch: %w", protocol.ErrNoPartition)
	}
	p := &t.Partitions[0]
	ret := &FetchResponse{
		Throttle:         makeDuration(res.ThrottleTimeMs),
		Topic:            t.Topic,
		Partition:        int(p.Partition),
		Error:            makeError(res.ErrorCode, ""),
		HighWatermark:    p.HighWatermark,
		LastStableOffset: p.LastStableOffset,
		LogStartOffset:   p.LogStartOffset,
		Records:          p.RecordSet.Records,
	}
	if p.ErrorCode != 0 {
		ret.Error = makeError(p.ErrorCode, "")
	}
	if ret.Records == nil {
		ret.Records = NewRecordReader()
	}
	return ret, nil
}

func (req *FetchRequest) maxWait() time.Duration {
	if req.MaxWait > 0 {
		return req.MaxWait
	}
	return defaultMaxWait
}
