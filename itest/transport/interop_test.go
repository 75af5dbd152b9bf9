package transport_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/itest/clustertest"
)

type rec struct {
	key, value []byte
	headers    []kafka.Header
	ts         time.Time
}

func sampleRecords(n int, tag string) []rec {
	base := time.UnixMilli(1700000000000)
	out := make([]rec, n)
	for i := range out {
		r := rec{value: []byte(fmt.Sprintf("%s-value-%d-%s", tag, i, bytes.Repeat([]byte("x"), i*37))), ts: base.Add(time.Duration(i) * time.Millisecond)}
		if i%3 != 0 {
			r.key = []byte(fmt.Sprintf("%s-key-%d", tag, i))
		}
		if i%2 == 0 {
			r.headers = []kafka.Header{{Key: "h1", Value: []byte("a")}, {Key: "h2", Value: []byte(fmt.Sprint(i))}}
		}
		out[i] = r
	}
	return out
}

func sameRecord(a, b rec) bool {
	if !bytes.Equal(a.key, b.key) || !bytes.Equal(a.value, b.value) || !a.ts.Equal(b.ts) || len(a.headers) != len(b.headers) {
		return false
	}
	for i := range a.headers {
		if a.headers[i].Key != b.headers[i].Key || !bytes.Equal(a.headers[i].Value, b.headers[i].Value) {
			return false
		}
	}
	return true
}

// TestProduceReadByFranzGo produces with kafka-go's Client, in every
// compression codec, and reads the records back with franz-go.
func TestProduceReadByFranzGo(t *testing.T) {
	addrs, _ := clustertest.Start(t, kfake.SeedTopics(5, "interop"))
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(addrs...), Transport: tr, Timeout: 10 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	codecs := []kafka.Compression{0, kafka.Gzip, kafka.Snappy, kafka.Lz4, kafka.Zstd}
	want := map[int32][]rec{}
	for p, codec := range codecs {
		recs := sampleRecords(20, fmt.Sprint(codec))
		krecs := make([]kafka.Record, len(recs))
		for i, r := range recs {
			krecs[i] = kafka.Record{Time: r.ts, Key: nilOrBytes(r.key), Value: kafka.NewBytes(r.value), Headers: r.headers}
		}
		res, err := client.Produce(ctx, &kafka.ProduceRequest{
			Topic: "interop", Partition: p, RequiredAcks: kafka.RequireAll, Compression: codec,
			Records: kafka.NewRecordReader(krecs...),
		})
		if err != nil || res.Error != nil {
			t.Fatalf("produce with %v: %+v, %v", codec, res, err)
		}
		want[int32(p)] = recs
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumeTopics("interop"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := map[int32][]rec{}
	total := 0
	for total < 100 {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read %d of 100 records: %v", total, err)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			hs := make([]kafka.Header, 0, len(r.Headers))
			for _, h := range r.Headers {
				hs = append(hs, kafka.Header{Key: h.Key, Value: h.Value})
			}
			if len(hs) == 0 {
				hs = nil
			}
			got[r.Partition] = append(got[r.Partition], rec{key: r.Key, value: r.Value, headers: hs, ts: r.Timestamp})
			total++
		})
	}
	for p, recs := range want {
		if len(got[p]) != len(recs) {
			t.Fatalf("partition %d (%v): franz-go read %d records, want %d", p, codecs[p], len(got[p]), len(recs))
		}
		for i := range recs {
			if !sameRecord(got[p][i], recs[i]) {
				t.Fatalf("partition %d (%v) record %d: franz-go read %+v, want %+v", p, codecs[p], i, got[p][i], recs[i])
			}
		}
	}
}

// TestFetchProducedByFranzGo produces with franz-go, in every compression
// codec, and fetches the records back with kafka-go's Client.
func TestFetchProducedByFranzGo(t *testing.T) {
	addrs, _ := clustertest.Start(t, kfake.SeedTopics(5, "interop"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	codecs := []kgo.CompressionCodec{kgo.NoCompression(), kgo.GzipCompression(), kgo.SnappyCompression(), kgo.Lz4Compression(), kgo.ZstdCompression()}
	want := map[int][]rec{}
	for p, codec := range codecs {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ProducerBatchCompression(codec),
			kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Fatal(err)
		}
		recs := sampleRecords(20, fmt.Sprint(p))
		for _, r := range recs {
			kr := &kgo.Record{Topic: "interop", Partition: int32(p), Key: r.key, Value: r.value, Timestamp: r.ts}
			for _, h := range r.headers {
				kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
			}
			cl.Produce(ctx, kr, nil)
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		cl.Close()
		want[p] = recs
	}

	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(addrs...), Transport: tr, Timeout: 10 * time.Second}
	for p, recs := range want {
		var got []rec
		offset := int64(0)
		for len(got) < len(recs) {
			res, err := client.Fetch(ctx, &kafka.FetchRequest{Topic: "interop", Partition: p, Offset: offset, MinBytes: 1, MaxBytes: 1 << 20, MaxWait: 100 * time.Millisecond})
			if err != nil || res.Error != nil {
				t.Fatalf("fetch partition %d: %+v, %v", p, res, err)
			}
			for {
				r, err := res.Records.ReadRecord()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("partition %d: %v", p, err)
				}
				if r.Offset < offset {
					continue
				}
				k, _ := kafka.ReadAll(r.Key)
				v, _ := kafka.ReadAll(r.Value)
				got = append(got, rec{key: k, value: v, headers: r.Headers, ts: r.Time})
				offset = r.Offset + 1
			}
			if ctx.Err() != nil {
				t.Fatalf("partition %d: fetched %d of %d records", p, len(got), len(recs))
			}
		}
		for i := range recs {
			if !sameRecord(got[i], recs[i]) {
				t.Fatalf("partition %d record %d: kafka-go fetched %+v, want %+v", p, i, got[i], recs[i])
			}
		}
	}
}

func nilOrBytes(b []byte) kafka.Bytes {
	if b == nil {
		return nil
	}
	return kafka.NewBytes(b)
}
