package kafka

import (
	"context"
	"math"
	"net"
	"time"

	"github.com/segmentio/kafka-go/internal/fetchcursor"
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
	//
	// With ReadCommitted, records of aborted transactions are left out, as
	// Kafka's consumer leaves them out. Transaction markers are never
	// returned. A v2 batch covers offsets up to its header's last offset
	// even when compaction removed its last records, or all of them: the
	// batches, aborted ones and markers included, are the elements of
	// Records.(*protocol.RecordStream).Records, whose LastOffset + 1 is
	// where to fetch next after a batch.
	Records RecordReader
}

// Fetch reads records of a partition.
func (c *Client) Fetch(ctx context.Context, req *FetchRequest) (*FetchResponse, error) {
	offset, err := c.resolveFetchOffset(ctx, req)
	if err != nil {
		return nil, clientError("Fetch", err)
	}
	// The broker may hold the request for MaxWait, but no longer than the
	// client's own time budget allows.
	wait := min(orDefault(req.MaxWait, defaultMaxWait), c.timeout(ctx, math.MaxInt64))

	part := fetchAPI.RequestPartition{
		Partition:          int32(req.Partition),
		FetchOffset:        offset,
		PartitionMaxBytes:  int32(req.MaxBytes),
		CurrentLeaderEpoch: -1, // unknown
		LogStartOffset:     -1, // only followers send it
	}
	msg := &fetchAPI.Request{ReplicaID: -1, SessionID: -1, SessionEpoch: -1}
	msg.MaxWaitTime = milliseconds(wait)
	msg.MinBytes, msg.MaxBytes = int32(req.MinBytes), int32(req.MaxBytes)
	msg.IsolationLevel = int8(req.IsolationLevel)
	msg.Topics = []fetchAPI.RequestTopic{{Topic: req.Topic, Partitions: []fetchAPI.RequestPartition{part}}}

	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, clientError("Fetch", err)
	}
	res := m.(*fetchAPI.Response)
	switch {
	case len(res.Topics) == 0:
		return nil, clientError("Fetch", protocol.ErrNoTopic)
	case len(res.Topics[0].Partitions) == 0:
		return nil, clientError("Fetch", protocol.ErrNoPartition)
	}
	topic := &res.Topics[0]
	p := &topic.Partitions[0]
	code := p.ErrorCode
	if code == 0 {
		code = res.ErrorCode // a fetch session error, say
	}
	out := &FetchResponse{
		Topic:     topic.Topic,
		Partition: int(p.Partition),
		Throttle:  makeDuration(res.ThrottleTimeMs),
		Error:     makeError(code, ""),
		Records:   p.RecordSet.Records,
	}
	out.HighWatermark, out.LastStableOffset, out.LogStartOffset = p.HighWatermark, p.LastStableOffset, p.LogStartOffset
	if req.IsolationLevel == ReadCommitted {
		leaveOutAborted(out.Records, offset, p.AbortedTransactions)
	}
	if out.Records == nil {
		out.Records = NewRecordReader()
	}
	return out, nil
}

// resolveFetchOffset turns the FirstOffset and LastOffset placeholders into
// actual offsets of the partition.
func (c *Client) resolveFetchOffset(ctx context.Context, req *FetchRequest) (int64, error) {
	if req.Offset != firstOffsetTimestamp && req.Offset != lastOffsetTimestamp {
		return req.Offset, nil
	}
	r, err := c.ListOffsets(ctx, &ListOffsetsRequest{
		Addr:   req.Addr,
		Topics: map[string][]OffsetRequest{req.Topic: {{Partition: req.Partition, Timestamp: req.Offset}}},
	})
	if err != nil {
		return 0, err
	}
	for _, po := range r.Topics[req.Topic] {
		if po.Partition != req.Partition {
			continue
		}
		if po.Error != nil {
			return 0, po.Error
		}
		if req.Offset == firstOffsetTimestamp {
			return po.FirstOffset, nil
		}
		return po.LastOffset, nil
	}
	// Not in the answer: fetch at the placeholder and let the broker say.
	return req.Offset, nil
}

// leaveOutAborted empties the batches of aborted transactions in the
// records of a read-committed fetch from offset, by the rules every reader
// of batches follows (internal/fetchcursor). Each batch keeps its place and
// header, so that a caller stepping from batch to batch still can; the
// markers keep their records.
func leaveOutAborted(records RecordReader, offset int64, aborted []fetchAPI.ResponseTransaction) {
	stream, ok := records.(*protocol.RecordStream)
	if !ok || len(aborted) == 0 {
		return // nothing can be aborted
	}
	cur := fetchcursor.New(offset, true, aborted)
	for i, b := range stream.Records {
		switch b := b.(type) {
		case *protocol.ControlBatch:
			// The cursor reads the markers: it gets a batch of its own.
			markers := readControlRecords(b)
			probe, keep := *b, *b
			probe.Records = protocol.NewControlBatch(markers...).Records
			keep.Records = protocol.NewControlBatch(markers...).Records
			cur.Begin(&probe)
			stream.Records[i] = &keep
		case *protocol.RecordBatch:
			if !cur.Begin(b) {
				_ = skipRecords(b) // its records are not returned anyway
				empty := *b
				empty.Records = protocol.NewRecordReader()
				stream.Records[i] = &empty
			}
		}
	}
}

// readControlRecords reads the records of a control batch, releasing their
// buffers; a record that is not a valid control record is left out.
func readControlRecords(b *protocol.ControlBatch) []protocol.ControlRecord {
	var out []protocol.ControlRecord
	for {
		rec, err := b.ReadRecord()
		if err != nil {
			return out
		}
		if cr, err := protocol.ReadControlRecord(rec); err == nil {
			out = append(out, *cr)
		}
	}
}
