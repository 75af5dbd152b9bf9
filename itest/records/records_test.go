// Package records cross-checks kafka-go's record batch codec
// (protocol.RecordSet) against franz-go, an independent implementation:
// batches that franz-go's producer writes are decoded by ours, and batches
// that ours writes are produced to a kfake broker (which checks their CRC
// and layout) and consumed with franz-go's consumer.
package records

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/compress"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type codecCase struct {
	ours  protocol.Attributes
	franz kgo.CompressionCodec
}

var codecs = []codecCase{
	{0, kgo.NoCompression()},
	{protocol.Gzip, kgo.GzipCompression()},
	{protocol.Snappy, kgo.SnappyCompression()},
	{protocol.Lz4, kgo.Lz4Compression()},
	{protocol.Zstd, kgo.ZstdCompression()},
}

// sample is a record as both sides see it; nil key or value is null.
type sample struct {
	key, value []byte
	headers    [][2]string
	ts         time.Time
}

func samples(n int) []sample {
	base := time.UnixMilli(1700000000000)
	out := make([]sample, n)
	for i := range out {
		s := sample{ts: base.Add(time.Duration(i) * time.Millisecond)}
		if i%3 != 0 {
			s.key = []byte(fmt.Sprint("key-", i))
		}
		if i%5 != 4 {
			s.value = bytes.Repeat([]byte(fmt.Sprint("value-", i, ";")), i%7+1)
		}
		for h := 0; h < i%3; h++ {
			s.headers = append(s.headers, [2]string{fmt.Sprint("h", h), fmt.Sprint("hv", i, "-", h)})
		}
		out[i] = s
	}
	return out
}

func newCluster(t *testing.T, topic string) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func newClient(t *testing.T, c *kfake.Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// topicID asks the cluster for the ID of topic (Fetch and Produce address
// topics by ID in their latest versions).
func topicID(t *testing.T, ctx context.Context, cl *kgo.Client, topic string) [16]byte {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("metadata of %s: %+v", topic, resp.Topics)
	}
	return resp.Topics[0].TopicID
}

// fetchRaw returns the raw record batches of partition 0 of topic from
// offset 0, as the broker sends them.
func fetchRaw(t *testing.T, ctx context.Context, cl *kgo.Client, topic string) []byte {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis = 100
	req.MaxBytes = 10 << 20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rt.TopicID = topicID(t, ctx, cl, topic)
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = 10 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch response %+v", resp)
	}
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		t.Fatalf("fetch error code %d", p.ErrorCode)
	}
	return p.RecordBatches
}

func TestDecodeFranzGoBatches(t *testing.T) {
	for _, cc := range codecs {
		t.Run(cc.ours.String(), func(t *testing.T) {
			const topic = "franz-written"
			ctx := testContext(t)
			c := newCluster(t, topic)
			cl := newClient(t, c, kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(cc.franz),
				kgo.ProducerLinger(50*time.Millisecond), kgo.RecordPartitioner(kgo.ManualPartitioner()))

			want := samples(200)
			for _, s := range want {
				r := &kgo.Record{Key: s.key, Value: s.value, Timestamp: s.ts}
				for _, h := range s.headers {
					r.Headers = append(r.Headers, kgo.RecordHeader{Key: h[0], Value: []byte(h[1])})
				}
				cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
					if err != nil {
						t.Error(err)
					}
				})
			}
			if err := cl.Flush(ctx); err != nil {
				t.Fatal(err)
			}

			raw := fetchRaw(t, ctx, cl, topic)
			var rs protocol.RecordSet
			if _, err := rs.ReadFrom(bytes.NewReader(raw)); err != nil {
				t.Fatal(err)
			}
			if rs.Version != 2 || rs.Attributes.Compression() != compress.Compression(cc.ours) {
				t.Errorf("version %d attributes %v", rs.Version, rs.Attributes)
			}
			for i, batch := range rs.Records.(*protocol.RecordStream).Records {
				if _, ok := batch.(*protocol.RecordBatch); !ok {
					t.Fatalf("batch %d is %T", i, batch)
				}
			}
			for i, s := range want {
				rec, err := rs.Records.ReadRecord()
				if err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
				if rec.Offset != int64(i) {
					t.Errorf("record %d has offset %d", i, rec.Offset)
				}
				checkRecord(t, i, rec, s)
			}
			if _, err := rs.Records.ReadRecord(); !errors.Is(err, io.EOF) {
				t.Fatalf("after the last record: %v", err)
			}
		})
	}
}

func checkRecord(t *testing.T, i int, rec *protocol.Record, s sample) {
	t.Helper()
	key, _ := protocol.ReadAll(rec.Key)
	value, _ := protocol.ReadAll(rec.Value)
	if rec.Key != nil {
		rec.Key.Close()
	}
	if rec.Value != nil {
		rec.Value.Close()
	}
	if !sameBytes(key, s.key) || !sameBytes(value, s.value) {
		t.Errorf("record %d: key %q value %q, want %q %q", i, key, value, s.key, s.value)
	}
	if !rec.Time.Equal(s.ts) {
		t.Errorf("record %d: time %v, want %v", i, rec.Time, s.ts)
	}
	if len(rec.Headers) != len(s.headers) {
		t.Fatalf("record %d: headers %+v, want %v", i, rec.Headers, s.headers)
	}
	for j, h := range rec.Headers {
		if h.Key != s.headers[j][0] || string(h.Value) != s.headers[j][1] {
			t.Errorf("record %d header %d: %q=%q, want %q", i, j, h.Key, h.Value, s.headers[j])
		}
	}
}

// sameBytes compares two nullable byte strings: null and empty differ.
func sameBytes(a, b []byte) bool {
	return (a == nil) == (b == nil) && bytes.Equal(a, b)
}

func TestFranzGoConsumesOurBatches(t *testing.T) {
	for _, cc := range codecs {
		t.Run(cc.ours.String(), func(t *testing.T) {
			const topic = "kafka-go-written"
			ctx := testContext(t)
			c := newCluster(t, topic)
			admin := newClient(t, c)

			// Two produce requests (Kafka takes one v2 batch per partition
			// and request), so that the second batch gets base offset 100.
			want := samples(150)
			id := topicID(t, ctx, admin, topic)
			for _, part := range [][]sample{want[:100], want[100:]} {
				recs := make([]protocol.Record, len(part))
				for i, s := range part {
					recs[i] = protocol.Record{Time: s.ts, Key: protocol.NewBytes(s.key), Value: protocol.NewBytes(s.value)}
					for _, h := range s.headers {
						recs[i].Headers = append(recs[i].Headers, protocol.Header{Key: h[0], Value: []byte(h[1])})
					}
				}
				var raw bytes.Buffer
				rs := protocol.RecordSet{Version: 2, Attributes: cc.ours, Records: protocol.NewRecordReader(recs...)}
				if _, err := rs.WriteTo(&raw); err != nil {
					t.Fatal(err)
				}
				produceRaw(t, ctx, admin, topic, id, raw.Bytes())
			}

			consumer := newClient(t, c, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
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
				s := want[i]
				if r.Offset != int64(i) || !sameBytes(r.Key, s.key) || !sameBytes(r.Value, s.value) || !r.Timestamp.Equal(s.ts) {
					t.Errorf("record %d: offset %d key %q value %q time %v, want %q %q %v",
						i, r.Offset, r.Key, r.Value, r.Timestamp, s.key, s.value, s.ts)
				}
				if len(r.Headers) != len(s.headers) {
					t.Fatalf("record %d: headers %+v, want %v", i, r.Headers, s.headers)
				}
				for j, h := range r.Headers {
					if h.Key != s.headers[j][0] || string(h.Value) != s.headers[j][1] {
						t.Errorf("record %d header %d: %q=%q", i, j, h.Key, h.Value)
					}
				}
			}
		})
	}
}

func produceRaw(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, id [16]byte, batch []byte) {
	t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.Acks = -1
	req.TimeoutMillis = 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rt.TopicID = id
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 {
		msg := ""
		if p.ErrorMessage != nil {
			msg = *p.ErrorMessage
		}
		t.Fatalf("produce error code %d: %s", p.ErrorCode, msg)
	}
}

// TestKmsgParsesOurBatch checks the header fields of a batch we write with
// kmsg's parser, without a broker.
func TestKmsgParsesOurBatch(t *testing.T) {
	want := samples(10)
	recs := make([]protocol.Record, len(want))
	for i, s := range want {
		recs[i] = protocol.Record{Time: s.ts, Key: protocol.NewBytes(s.key), Value: protocol.NewBytes(s.value)}
		for _, h := range s.headers {
			recs[i].Headers = append(recs[i].Headers, protocol.Header{Key: h[0], Value: []byte(h[1])})
		}
	}
	var raw bytes.Buffer
	rs := protocol.RecordSet{Version: 2, Records: protocol.NewRecordReader(recs...)}
	if _, err := rs.WriteTo(&raw); err != nil {
		t.Fatal(err)
	}
	var batch kmsg.RecordBatch
	if err := batch.ReadFrom(raw.Bytes()); err != nil {
		t.Fatal(err)
	}
	if batch.Magic != 2 || int(batch.Length) != raw.Len()-12 || batch.NumRecords != 10 || batch.LastOffsetDelta != 9 ||
		batch.FirstTimestamp != want[0].ts.UnixMilli() || batch.MaxTimestamp != want[9].ts.UnixMilli() ||
		batch.ProducerID != -1 || batch.ProducerEpoch != -1 || batch.FirstSequence != -1 || batch.PartitionLeaderEpoch != -1 {
		t.Fatalf("batch header %+v", batch)
	}
	b := batch.Records
	for i, s := range want {
		var length int
		for k := 0; ; k++ { // the record length varint, to find where the next record starts
			if b[k]&0x80 == 0 {
				length = k + 1
				break
			}
		}
		var r kmsg.Record
		if err := r.ReadFrom(b); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if int(r.OffsetDelta) != i || r.TimestampDelta64 != int64(i) || !sameBytes(r.Key, s.key) || !sameBytes(r.Value, s.value) ||
			len(r.Headers) != len(s.headers) {
			t.Errorf("record %d: %+v", i, r)
		}
		b = b[length+int(r.Length):]
	}
	if len(b) != 0 {
		t.Errorf("%d bytes after the last record", len(b))
	}
}

// TestDecodeFranzGoTransaction decodes a committed transaction: a
// transactional data batch followed by the commit marker that the broker
// writes as a control batch.
func TestDecodeFranzGoTransaction(t *testing.T) {
	const topic = "transactional"
	ctx := testContext(t)
	c := newCluster(t, topic)
	cl := newClient(t, c, kgo.DefaultProduceTopic(topic), kgo.TransactionalID("kafka-go-records"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	want := samples(5)
	for i, s := range want {
		want[i].headers = nil
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: s.key, Value: s.value, Timestamp: s.ts}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}

	raw := fetchRaw(t, ctx, cl, topic)
	var rs protocol.RecordSet
	if _, err := rs.ReadFrom(bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	if !rs.Attributes.Transactional() || !rs.Attributes.Control() {
		t.Errorf("attributes %v", rs.Attributes)
	}
	var producerID int64 = -1
	var markers []*protocol.ControlRecord
	for _, batch := range rs.Records.(*protocol.RecordStream).Records {
		switch b := batch.(type) {
		case *protocol.RecordBatch:
			if !b.Attributes.Transactional() || b.ProducerID < 0 {
				t.Errorf("data batch %+v", b)
			}
			producerID = b.ProducerID
		case *protocol.ControlBatch:
			if b.ProducerID != producerID || !b.Attributes.Transactional() {
				t.Errorf("control batch %+v after producer %d", b, producerID)
			}
			for {
				cr, err := b.ReadControlRecord()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				markers = append(markers, cr)
			}
		default:
			t.Fatalf("batch of type %T", batch)
		}
	}
	if len(markers) != 1 || markers[0].Type != 1 || markers[0].Offset != int64(len(want)) {
		t.Fatalf("markers %+v, want one commit (type 1) at offset %d", markers, len(want))
	}
	// The stream hides the marker.
	for i, s := range want {
		rec, err := rs.Records.ReadRecord()
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		checkRecord(t, i, rec, s)
	}
	if _, err := rs.Records.ReadRecord(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last record: %v", err)
	}
}
