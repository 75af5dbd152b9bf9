package kafka

import "time"

// The messages a Completion call receives. A batch keeps its messages as
// encoded records only; the Message values are rebuilt for the call, from
// the records, the partition, the broker's answer, and the few fields a
// record does not keep as the program set them. Built only for the call,
// they cost nothing while the batch waits, is sent or retried.

// messageExtras are a message's fields that its record does not give back:
// its Time (a record keeps milliseconds, and the current time for a zero
// one), WriterData, Headers (the program's own slice), and Partition,
// Offset and HighWaterMark, which the Completion of a batch the broker did
// not answer sees as the program left them.
type messageExtras struct {
	time        time.Time
	writerData  any
	headers     []Header
	partition   int
	offset, hwm int64
}

// produceAck is what the broker said about a batch, for its Completion.
type produceAck struct {
	answered      bool
	baseOffset    int64
	logAppendTime time.Time
}

// hasExtras says whether m has a field messageExtras would keep.
func hasExtras(m *Message) bool {
	return !m.Time.IsZero() || m.WriterData != nil || m.Headers != nil ||
		m.Partition != 0 || m.Offset != 0 || m.HighWaterMark != 0
}

// add encodes m into b's records and, for a Completion (keep), keeps the
// fields the record does not give back, once a message of b has any.
func (b *writeBatch) add(m *Message, keep bool) {
	b.recs.Append(m.Time, m.Key, m.Value, m.Headers)
	if !keep || (b.extras == nil && !hasExtras(m)) {
		return
	}
	if b.extras == nil {
		b.extras = make([]messageExtras, b.recs.Len()-1, b.recs.Len())
	}
	b.extras = append(b.extras, messageExtras{
		time: m.Time, writerData: m.WriterData, headers: m.Headers,
		partition: m.Partition, offset: m.Offset, hwm: m.HighWaterMark,
	})
}

// completionMessages returns b's messages as its Completion receives them:
// keys and values point into the batch's records (nil where null); a batch
// the broker answered has its topic, partition, offsets and, for messages
// without a Time, the log append time (zero unless the topic uses it);
// otherwise the messages are as the program wrote them.
func (pw *partitionWriter) completionMessages(b *writeBatch) []Message {
	msgs := make([]Message, b.count())
	topic := pw.key.topic
	if pw.w.Topic != "" {
		topic = "" // the messages had none of their own
	}
	err := b.recs.Each(func(i int, key, value []byte) {
		m := &msgs[i]
		m.Topic, m.Key, m.Value = topic, key, value
		if b.extras != nil {
			e := &b.extras[i]
			m.Time, m.WriterData, m.Headers = e.time, e.writerData, e.headers
			m.Partition, m.Offset, m.HighWaterMark = e.partition, e.offset, e.hwm
		}
		if b.ack.answered {
			m.Topic, m.Partition = pw.key.topic, int(pw.key.partition)
			m.Offset = b.ack.baseOffset + int64(i)
			if b.ack.baseOffset < 0 {
				m.Offset = -1 // a duplicate the broker did not place
			}
			if m.Time.IsZero() {
				m.Time = b.ack.logAppendTime
			}
		}
	})
	if err != nil {
		panic("kafka: a writer batch's own records do not parse: " + err.Error())
	}
	return msgs
}
