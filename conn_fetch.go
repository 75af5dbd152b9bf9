package kafka

import (
	"fmt"
	"time"

	"github.com/segmentio/kafka-go/internal/eof"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/fetch"
)

// Read copies the value of the message at the connection's offset into b
// and moves the offset past that message. It fails with io.ErrShortBuffer when the value
// does not fit in b. It exists so that Conn is a net.Conn; ReadBatch reads
// many messages per request.
func (c *Conn) Read(b []byte) (n int, err error) {
	err = c.readOne(len(b), func(batch *Batch) (err error) {
		n, err = batch.Read(b)
		return err
	})
	return n, err
}

// ReadMessage returns the message at the connection's offset, moving the
// offset past it; the fetch it makes asks for no more than maxBytes.
func (c *Conn) ReadMessage(maxBytes int) (msg Message, err error) {
	err = c.readOne(maxBytes, func(batch *Batch) (err error) {
		msg, err = batch.ReadMessage()
		return err
	})
	return msg, err
}

// readOne fetches up to maxBytes and lets read take the first message of
// the batch. The batch is closed either way, which advances the offset; an
// io.EOF from read (the fetch returned nothing) is not reported, so that
// callers see the Close error or nil.
func (c *Conn) readOne(maxBytes int, read func(*Batch) error) error {
	batch := c.ReadBatch(1, maxBytes)
	readErr := silentEOF(read(batch))
	return coalesceErrors(readErr, batch.Close())
}

// ReadBatch fetches messages from the current offset, asking the broker to
// wait for minBytes and to return at most about maxBytes (at least one whole
// record batch, whatever its size). The result is never nil: an error is
// reported by the batch (Err, reads, Close).
//
// Closing the batch moves the connection's offset past the messages read,
// and past the whole of every record batch read to its end: its
// transaction markers, aborted records (with ReadCommitted) and the
// records compaction removed from it, as Kafka's consumer moves.
func (c *Conn) ReadBatch(minBytes, maxBytes int) *Batch {
	return c.ReadBatchWith(ReadBatchConfig{MinBytes: minBytes, MaxBytes: maxBytes})
}

// ReadBatchWith is ReadBatch with every fetch setting of cfg.
func (c *Conn) ReadBatchWith(cfg ReadBatchConfig) *Batch {
	limit := int(c.fetchMaxBytes)
	switch {
	case cfg.MinBytes < 0 || cfg.MinBytes > limit:
		return &Batch{err: fmt.Errorf("kafka.(*Conn).ReadBatch: minBytes of %d out of [1,%d] bounds", cfg.MinBytes, limit)}
	case cfg.MaxBytes < 0 || cfg.MaxBytes > limit:
		return &Batch{err: fmt.Errorf("kafka.(*Conn).ReadBatch: maxBytes of %d out of [1,%d] bounds", cfg.MaxBytes, limit)}
	case cfg.MinBytes > cfg.MaxBytes:
		return &Batch{err: fmt.Errorf("kafka.(*Conn).ReadBatch: minBytes (%d) > maxBytes (%d)", cfg.MinBytes, cfg.MaxBytes)}
	}

	// Resolve the first or last offset of the partition if the
	// connection still points at one of them.
	offset, whence := c.Offset()
	offset, err := c.Seek(offset, whence|SeekDontCheck)
	if err != nil {
		return &Batch{err: eof.Unexpected(err)}
	}
	res, deadline, err := c.fetch(offset, cfg)
	if err != nil {
		return &Batch{err: eof.Unexpected(err)}
	}
	return newBatch(c, offset, deadline, res)
}

// fetchResult is the part of a fetch response that concerns the
// connection's partition.
type fetchResult struct {
	throttle      time.Duration
	highWaterMark int64
	records       protocol.RecordReader
	aborted       []fetch.ResponseTransaction
	isolation     IsolationLevel
	err           error // an error code of the response
}

// fetch sends one Fetch request for the connection's partition, starting at
// offset, and returns what the response says about the partition, with the
// deadline the request was given (used to tell a truncated response that
// ran into the deadline from a complete one).
func (c *Conn) fetch(offset int64, cfg ReadBatchConfig) (fetchResult, time.Time, error) {
	version, err := c.negotiateVersion(protocol.Fetch)
	if err != nil {
		return fetchResult{}, time.Time{}, err
	}

	now := time.Now()
	deadline := c.rdeadline.deadline()
	maxWait := cfg.MaxWait
	if maxWait <= 0 {
		// Let the broker answer a round trip before the read deadline, so
		// that an empty fetch comes back instead of timing out the socket.
		deadline = adjustDeadlineForRTT(deadline, now, defaultRTT)
		maxWait = deadlineToTimeout(deadline, now)
	}
	maxBytes := int32(cfg.MaxBytes) + c.fetchMinSize
	req := &fetch.Request{
		ReplicaID:      -1,
		MaxWaitTime:    milliseconds(maxWait),
		MinBytes:       int32(cfg.MinBytes),
		MaxBytes:       maxBytes,
		IsolationLevel: int8(cfg.IsolationLevel),
		SessionEpoch:   -1, // no fetch session
		Topics: []fetch.RequestTopic{{
			Topic: c.topic,
			Partitions: []fetch.RequestPartition{{
				Partition:          c.partition,
				CurrentLeaderEpoch: -1,
				FetchOffset:        offset,
				LastFetchedEpoch:   -1,
				LogStartOffset:     -1,
				PartitionMaxBytes:  maxBytes,
			}},
		}},
		ForgottenTopics: []fetch.RequestForgottenTopic{},
	}
	msg, err := c.roundTrip(&c.rdeadline, version, req)
	if err != nil {
		return fetchResult{}, deadline, err
	}
	res := msg.(*fetch.Response)
	out := fetchResult{
		throttle:      makeDuration(res.ThrottleTimeMs),
		highWaterMark: -1,
		isolation:     cfg.IsolationLevel,
	}
	if res.ErrorCode != 0 {
		out.err = Error(res.ErrorCode)
	}
	for i := range res.Topics {
		t := &res.Topics[i]
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if t.Topic != c.topic || p.Partition != c.partition {
				continue
			}
			out.highWaterMark = p.HighWatermark
			if p.ErrorCode != 0 && out.err == nil {
				out.err = Error(p.ErrorCode)
			}
			out.records = p.RecordSet.Records
			if cfg.IsolationLevel == ReadCommitted {
				out.aborted = p.AbortedTransactions
			}
			return out, deadline, nil
		}
	}
	if out.err == nil {
		out.err = UnknownTopicOrPartition
	}
	return out, deadline, nil
}
