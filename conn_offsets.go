package kafka

import (
	"time"

	"github.com/segmentio/kafka-go/protocol/listoffsets"
)

// ReadOffset looks messages up by time: it returns the offset of the
// earliest message stamped t or later, or -1 if no message is that recent.
func (c *Conn) ReadOffset(t time.Time) (int64, error) {
	return c.readOffset(timestamp(t))
}

// ReadFirstOffset returns the oldest offset the partition still holds.
func (c *Conn) ReadFirstOffset() (int64, error) {
	return c.readOffset(connFirstOffset)
}

// ReadLastOffset returns the offset the next message written to the
// partition will get.
func (c *Conn) ReadLastOffset() (int64, error) {
	return c.readOffset(connLastOffset)
}

// ReadOffsets returns both ends of the partition, as ReadFirstOffset and
// ReadLastOffset give them.
func (c *Conn) ReadOffsets() (first, last int64, err error) {
	// Brokers refuse a request that asks for two offsets of the same
	// partition, hence two requests.
	if first, err = c.ReadFirstOffset(); err != nil {
		return 0, 0, err
	}
	if last, err = c.ReadLastOffset(); err != nil {
		return 0, 0, err
	}
	return first, last, nil
}

// readOffset asks the partition leader for the offset matching ts, a
// timestamp in milliseconds or one of the special values -1 and -2.
func (c *Conn) readOffset(ts int64) (int64, error) {
	req := &listoffsets.Request{
		ReplicaID: -1,
		Topics: []listoffsets.RequestTopic{{
			Topic: c.topic,
			Partitions: []listoffsets.RequestPartition{{
				Partition:          c.partition,
				CurrentLeaderEpoch: -1,
				Timestamp:          ts,
			}},
		}},
	}
	if d := c.rdeadline.deadline(); !d.IsZero() {
		now := time.Now()
		req.TimeoutMs = milliseconds(deadlineToTimeout(adjustDeadlineForRTT(d, now, defaultRTT), now))
	} else {
		req.TimeoutMs = milliseconds(defaultListOffsetsTimeout)
	}
	msg, err := c.request(req)
	if err != nil {
		return -1, err
	}
	res := msg.(*listoffsets.Response)
	for _, t := range res.Topics {
		if t.Topic != c.topic {
			continue
		}
		for _, p := range t.Partitions {
			if p.Partition != c.partition {
				continue
			}
			if p.ErrorCode != 0 {
				return -1, Error(p.ErrorCode)
			}
			return p.Offset, nil
		}
	}
	return -1, UnknownTopicOrPartition
}

// defaultListOffsetsTimeout bounds the broker's search for an offset (in
// tiered storage) when the connection has no read deadline.
const defaultListOffsetsTimeout = 30 * time.Second
