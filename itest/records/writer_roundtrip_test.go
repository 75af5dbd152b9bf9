package records

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"
)

// writerSamples are messages whose every field must survive the Writer's
// encoding when it accepts them: null and empty keys, values and header
// values, many headers, a large key, timestamps far apart and before the
// first one, and zero times (the current time) mixed with set ones.
func writerSamples() []kafka.Message {
	base := time.UnixMilli(1_700_000_000_000)
	var msgs []kafka.Message
	for i := 0; i < 60; i++ {
		m := kafka.Message{Value: []byte(fmt.Sprint("v", i))}
		switch i % 6 {
		case 0:
			m.Key, m.Value = nil, []byte{}
		case 1:
			m.Key, m.Value = []byte{}, nil
		case 2:
			m.Key = bytes.Repeat([]byte{byte(i)}, 70_000)
		case 3:
			m.Key = []byte(fmt.Sprint("k", i))
		}
		switch i % 5 {
		case 0:
			m.Time = base.Add(time.Duration(i) * time.Millisecond)
		case 1:
			m.Time = base.Add(-time.Duration(i) * 24 * time.Hour) // long before the first
		case 2:
			m.Time = base.Add(time.Duration(i) * 365 * 24 * time.Hour) // far after
		case 3:
			m.Time = base.Add(time.Duration(i)*time.Millisecond + 999*time.Microsecond) // sub-ms dropped
		}
		switch i % 4 {
		case 1:
			m.Headers = []kafka.Header{{Key: "nil", Value: nil}, {Key: "empty", Value: []byte{}}, {Key: "", Value: []byte("v")}}
		case 2:
			for h := 0; h < 200; h++ {
				m.Headers = append(m.Headers, kafka.Header{Key: fmt.Sprint("h", h), Value: []byte(fmt.Sprint(i, "/", h))})
			}
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// TestWriterRecordsRoundTripThroughBroker writes writerSamples with a
// Writer (every codec, one message per batch and many, idempotent or not)
// to a kfake broker, reads them back with franz-go's consumer, and checks
// every field, the order, and that each message is there exactly once. The
// program's buffers are overwritten as soon as each call returns.
func TestWriterRecordsRoundTripThroughBroker(t *testing.T) {
	codecs := []kafka.Compression{0, kafka.Gzip, kafka.Snappy, kafka.Lz4, kafka.Zstd}
	for _, codec := range codecs {
		for _, batchSize := range []int{1, 1000} {
			for _, idem := range []bool{false, true} {
				name := fmt.Sprintf("codec%d/batch%d/idempotent=%v", codec, batchSize, idem)
				t.Run(name, func(t *testing.T) { writerRoundTrip(t, codec, batchSize, idem) })
			}
		}
	}
}

func writerRoundTrip(t *testing.T, codec kafka.Compression, batchSize int, idem bool) {
	const topic = "writer-round-trip"
	ctx := testContext(t)
	c := newCluster(t, topic)
	w := &kafka.Writer{
		Addr: kafka.TCP(c.ListenAddrs()...), Topic: topic, Compression: codec,
		BatchSize: batchSize, BatchTimeout: 5 * time.Millisecond, BatchBytes: 1 << 30,
		RequiredAcks: kafka.RequireAll, Idempotent: idem, Async: true,
		MaxBufferedBatches: 2,
	}
	want := writerSamples()
	before := time.Now().Truncate(time.Millisecond)
	for i := range want {
		in := want[i]
		in.Key, in.Value = bytes.Clone(want[i].Key), bytes.Clone(want[i].Value)
		if want[i].Headers != nil {
			in.Headers = make([]kafka.Header, len(want[i].Headers))
			for j, h := range want[i].Headers {
				in.Headers[j] = kafka.Header{Key: h.Key, Value: bytes.Clone(h.Value)}
			}
		}
		if err := w.WriteMessages(ctx, in); err != nil {
			t.Fatal(err)
		}
		// The program reuses its buffers at once.
		for _, b := range [][]byte{in.Key, in.Value} {
			for j := range b {
				b[j] ^= 0xff
			}
		}
		for _, h := range in.Headers {
			for j := range h.Value {
				h.Value[j] ^= 0xff
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	after := time.Now()

	consumer := newClient(t, c, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxBytes(64<<20), kgo.FetchMaxPartitionBytes(64<<20))
	var got []*kgo.Record
	for len(got) < len(want) {
		fetches := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", len(got), len(want), err)
		}
		fetches.EachError(func(_ string, _ int32, err error) { t.Fatal(err) })
		got = append(got, fetches.Records()...)
	}
	if len(got) != len(want) {
		t.Fatalf("consumed %d records, want %d", len(got), len(want))
	}
	for i, r := range got {
		m := want[i]
		if r.Offset != int64(i) || !sameBytes(r.Key, m.Key) || !sameBytes(r.Value, m.Value) {
			t.Errorf("record %d: offset %d key %.20q (%d B) value %q, want key %.20q (%d B) value %q",
				i, r.Offset, r.Key, len(r.Key), r.Value, m.Key, len(m.Key), m.Value)
		}
		if m.Time.IsZero() {
			if r.Timestamp.Before(before) || r.Timestamp.After(after) {
				t.Errorf("record %d: time %v, want the time of writing [%v, %v]", i, r.Timestamp, before, after)
			}
		} else if r.Timestamp.UnixMilli() != m.Time.UnixMilli() {
			t.Errorf("record %d: time %v, want %v", i, r.Timestamp, m.Time)
		}
		if len(r.Headers) != len(m.Headers) {
			t.Fatalf("record %d: %d headers, want %d", i, len(r.Headers), len(m.Headers))
		}
		for j, h := range r.Headers {
			if h.Key != m.Headers[j].Key || !sameBytes(h.Value, m.Headers[j].Value) {
				t.Errorf("record %d header %d: %q=%q, want %q=%q", i, j, h.Key, h.Value, m.Headers[j].Key, m.Headers[j].Value)
			}
		}
	}
}
