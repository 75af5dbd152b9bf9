package kafka

import (
	"time"
)

// Message is a record of a kafka topic: what Readers return and Writers
// write.
type Message struct {
	// Topic is the topic the message was read from (Reader), or the topic to
	// write it to when the Writer has no Topic of its own.
	Topic string

	// Partition is set by readers; it is ignored when writing (the Writer's
	// Balancer picks the partition), and must be left zero there.
	Partition     int
	Offset        int64
	HighWaterMark int64
	Key           []byte
	Value         []byte
	Headers       []Header

	// WriterData is opaque to the library: the Writer hands it back, with the
	// message, to its Completion callback.
	WriterData interface{}

	// Time is the message timestamp. A zero Time is sent as the time the
	// Writer's batch took its first message without one (at most
	// BatchTimeout before this one, unless the batch waited for its
	// partition). The Message itself keeps its zero Time, except that
	// Completion sees the broker's time when the topic uses LogAppendTime.
	Time time.Time
}

// The Writer budgets batches with the size a message has in the legacy
// message set format (v1) plus its headers encoded as in a v2 record: the
// fixed part is CRC (4), magic byte (1), attributes (1), timestamp (8) and
// the two int32 length prefixes of key and value. Keeping this exact formula
// keeps BatchBytes and MessageTooLargeError decisions identical to what
// programs already tuned their limits against.
const messageFixedSize = 4 + 1 + 1 + 8 + 4 + 4

// size is the message's size without its headers. Sizes are int64 all
// the way: a message may reach past 2 GiB (headers can share one large
// slice), and a wrapped int32 would slip under every limit.
func (msg *Message) size() int64 {
	return messageFixedSize + int64(len(msg.Key)) + int64(len(msg.Value))
}

// headerSize is the size of the message's headers as a varint-prefixed list
// of varint-prefixed keys and values.
func (msg *Message) headerSize() int64 {
	n := int64(zigzagVarintSize(int64(len(msg.Headers))))
	for i := range msg.Headers {
		h := &msg.Headers[i]
		n += int64(zigzagVarintSize(int64(len(h.Key)))) + int64(len(h.Key))
		n += int64(zigzagVarintSize(int64(len(h.Value)))) + int64(len(h.Value))
	}
	return n
}

// totalSize is the size the Writer accounts for the message.
func (msg *Message) totalSize() int64 {
	return msg.size() + msg.headerSize()
}

// zigzagVarintSize is the number of bytes of v as a zig-zag encoded varint.
func zigzagVarintSize(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	n := 1
	for ; u >= 0x80; u >>= 7 {
		n++
	}
	return n
}
