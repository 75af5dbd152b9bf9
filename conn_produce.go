package kafka

import (
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/produce"
)

// Write writes b as the value of one message to the connection's partition
// and returns len(b). It exists so that Conn is a net.Conn; WriteMessages is
// the general form.
func (c *Conn) Write(b []byte) (int, error) {
	return c.WriteMessages(Message{Value: b})
}

// WriteMessages writes msgs to the connection's partition, all or none of
// them, and returns the number of key and value bytes written.
func (c *Conn) WriteMessages(msgs ...Message) (int, error) {
	n, _, _, _, err := c.writeCompressedMessages(nil, msgs...)
	return n, err
}

// WriteCompressedMessages is WriteMessages with the batch compressed by
// codec (nil for none).
func (c *Conn) WriteCompressedMessages(codec CompressionCodec, msgs ...Message) (nbytes int, err error) {
	nbytes, _, _, _, err = c.WriteCompressedMessagesAt(codec, msgs...)
	return
}

// WriteCompressedMessagesAt is WriteCompressedMessages that also returns the
// partition, the offset of the first message, and the time the broker
// appended them (meaningful for topics using LogAppendTime).
func (c *Conn) WriteCompressedMessagesAt(codec CompressionCodec, msgs ...Message) (nbytes int, partition int32, offset int64, appendTime time.Time, err error) {
	return c.writeCompressedMessages(codec, msgs...)
}

func (c *Conn) writeCompressedMessages(codec CompressionCodec, msgs ...Message) (nbytes int, partition int32, offset int64, appendTime time.Time, err error) {
	if len(msgs) == 0 {
		return 0, 0, 0, time.Time{}, nil
	}
	now := time.Now()
	records := make([]protocol.Record, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		// The connection decides topic and partition: a message that names
		// others is a mistake the caller must hear about.
		if m.Topic != "" && m.Topic != c.topic {
			return 0, 0, 0, time.Time{}, errInvalidWriteTopic
		}
		if m.Partition != 0 {
			return 0, 0, 0, time.Time{}, errInvalidWritePartition
		}
		t := m.Time
		if t.IsZero() {
			t = now
		}
		records[i] = protocol.Record{
			Time:    t,
			Key:     protocol.NewBytes(m.Key),
			Value:   protocol.NewBytes(m.Value),
			Headers: m.Headers,
		}
		nbytes += len(m.Key) + len(m.Value)
	}

	var attrs protocol.Attributes
	if codec != nil {
		attrs = protocol.Attributes(codec.Code()) & 7
	}
	req := &produce.Request{
		TransactionalID: c.transactionalID,
		Acks:            int16(c.requiredAcks.Load()),
		Topics: []produce.RequestTopic{{
			Topic: c.topic,
			Partitions: []produce.RequestPartition{{
				Partition: c.partition,
				RecordSet: protocol.RecordSet{
					Version:    2,
					Attributes: attrs,
					Records:    protocol.NewRecordReader(records...),
				},
			}},
		}},
	}
	version, err := c.negotiateVersion(protocol.Produce)
	if err != nil {
		return 0, 0, 0, time.Time{}, err
	}
	if version < 3 {
		req.Topics[0].Partitions[0].RecordSet.Version = 1
	}
	// The broker gives up on the request in time for its answer to arrive
	// before the write deadline.
	sent := time.Now()
	req.Timeout = milliseconds(deadlineToTimeout(adjustDeadlineForRTT(c.wdeadline.deadline(), sent, defaultRTT), sent))

	msg, err := c.roundTrip(&c.wdeadline, version, req)
	if err != nil {
		return 0, 0, 0, time.Time{}, err
	}
	res := msg.(*produce.Response)
	for _, t := range res.Topics {
		for _, p := range t.Partitions {
			if p.Partition != c.partition {
				continue
			}
			if p.ErrorCode != 0 {
				return 0, 0, 0, time.Time{}, Error(p.ErrorCode)
			}
			// LogAppendTime is -1 for topics using CreateTime; converted
			// like upstream does, without a special case.
			return nbytes, p.Partition, p.BaseOffset, time.Unix(0, p.LogAppendTime*int64(time.Millisecond)), nil
		}
	}
	return 0, 0, 0, time.Time{}, UnknownTopicOrPartition
}
