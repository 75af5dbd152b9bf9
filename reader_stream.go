package kafka

import (
	"context"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/fetch"
)

// streamedFetch is a partition reader's Fetch request whose records are
// delivered as they are read off the connection (see streamedRequest), so
// that a Reader holds one record per partition at a time, as upstream's
// does, rather than a whole response (up to MaxBytes) per partition.
//
// Records are delivered before the end of their batch was read, hence
// before its CRC could be checked: a batch whose CRC turns out wrong fails
// the fetch after its records went to the program (upstream's Reader never
// checks it). Compressed batches are read whole and checked first.
type streamedFetch struct {
	*fetch.Request
	ctx     context.Context // the partition reader's: bounds the delivery
	timeout time.Duration   // how long one read may wait for the broker

	// each is called, on the sender's goroutine, with the records of every
	// partition of the response.
	each func(topic string, p *fetch.ResponsePartition, records *protocol.BatchStream) error

	// Set by each (on the same goroutine as the round trip, read after it).
	delivered bool
	next      int64
	batches   int
	err       error

	headerAt time.Time // when the response started to arrive
}

var _ streamedRequest = (*streamedFetch)(nil)

func (f *streamedFetch) wireMessage() protocol.Message { return f.Request }

func (f *streamedFetch) streamOptions() (context.Context, time.Duration) {
	return f.ctx, f.timeout
}

func (f *streamedFetch) readStream(body *responseBody, version int16) (protocol.Message, error) {
	f.headerAt = time.Now()
	res, err := fetch.ReadResponseStream(body, body.left, version, f.each)
	if err != nil && f.err == nil {
		return nil, err
	}
	// When delivery stopped (the reader's context ended, a bad batch),
	// the response is not at fault, nor the connection, unless reading
	// it failed (consume reports that).
	return res, nil
}
