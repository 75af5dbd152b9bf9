package rdmock_test

import (
	"errors"
	"io"
	"sort"
	"strconv"
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/itest/rdmock"
)

// readRecords drains a RecordReader into messages of partition p.
func readRecords(t *testing.T, rr kafka.RecordReader, p int) []kafka.Message {
	t.Helper()
	var msgs []kafka.Message
	for {
		r, err := rr.ReadRecord()
		if errors.Is(err, io.EOF) {
			return msgs
		}
		if err != nil {
			t.Fatalf("ReadRecord: %v", err)
		}
		m := kafka.Message{Partition: p, Offset: r.Offset}
		if r.Key != nil {
			m.Key, _ = io.ReadAll(r.Key)
		}
		if r.Value != nil {
			m.Value, _ = io.ReadAll(r.Value)
		}
		for _, h := range r.Headers {
			m.Headers = append(m.Headers, kafka.Header{Key: h.Key, Value: append([]byte(nil), h.Value...)})
		}
		msgs = append(msgs, m)
	}
}

// Client against the mock, each answer checked against an independent
// client or the mock's own setup: Metadata, ListOffsets, Produce (read back
// by kcat), Fetch (of kafka-python's records), OffsetCommit/OffsetFetch
// (read by kafka-python), InitProducerID.
func TestClient(t *testing.T) {
	const partitions, n = 2, 25
	c := rdmock.Start(t, 3)
	topic := topicName(t)
	c.CreateTopic(topic, partitions)
	c.SetLeader(topic, 0, 2)
	c.SetLeader(topic, 1, 3)
	ctx := ctxFor(t, 60*time.Second)
	client := &kafka.Client{Addr: kafka.TCP(c.Addrs[0]), Timeout: 30 * time.Second, Transport: newTransport(t)}

	// Metadata.
	meta, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for _, b := range meta.Brokers {
		addrs = append(addrs, kafkaAddr(b))
	}
	sort.Strings(addrs)
	wantAddrs := append([]string{}, c.Addrs...)
	sort.Strings(wantAddrs)
	if len(addrs) != 3 || addrs[0] != wantAddrs[0] || addrs[1] != wantAddrs[1] || addrs[2] != wantAddrs[2] {
		t.Errorf("Metadata brokers %v, want %v", addrs, wantAddrs)
	}
	if len(meta.Topics) != 1 || meta.Topics[0].Name != topic || len(meta.Topics[0].Partitions) != partitions {
		t.Fatalf("Metadata topics: %+v", meta.Topics)
	}
	for _, p := range meta.Topics[0].Partitions {
		if want := p.ID + 2; p.Leader.ID != want {
			t.Errorf("partition %d: leader %d, want %d", p.ID, p.Leader.ID, want)
		}
	}

	// Produce to partition 0, in gzip; kcat reads it back.
	msgs := messages("client", n, 1)
	records := make([]kafka.Record, n)
	for i, m := range msgs {
		var hs []kafka.Header
		for _, h := range m.Headers {
			hs = append(hs, kafka.Header{Key: h.Key, Value: h.Value})
		}
		records[i] = kafka.Record{Key: kafka.NewBytes(m.Key), Value: kafka.NewBytes(m.Value), Headers: hs}
	}
	prod, err := client.Produce(ctx, &kafka.ProduceRequest{
		Topic: topic, Partition: 0, RequiredAcks: kafka.RequireAll,
		Compression: kafka.Gzip, Records: kafka.NewRecordReader(records...),
	})
	if err != nil || prod.Error != nil || prod.BaseOffset != 0 {
		t.Fatalf("Produce: %+v, %v", prod, err)
	}
	want0 := expected(msgs)
	for i := range want0 {
		want0[i].Offset = int64(i)
	}

	// kafka-python writes to partition 1.
	var pyRecs []rdmock.Record
	for i := 0; i < n; i++ {
		pyRecs = append(pyRecs, rdmock.Record{
			Partition: 1, Key: []byte("py-" + strconv.Itoa(i)), Value: []byte{byte(i), 1, 2, 3},
			Headers: []rdmock.Header{{Key: "n", Value: []byte(strconv.Itoa(i))}},
		})
	}
	want1 := rdmock.PythonProduce(t, c.Bootstrap(), topic, pyRecs)
	got := rdmock.KcatConsume(t, c.Bootstrap(), topic, 2*n)
	var got0 []rdmock.Record
	for _, r := range got {
		if r.Partition == 0 {
			got0 = append(got0, r)
		}
	}
	rdmock.SameRecords(t, "kcat, Client.Produce's records", got0, want0, true)

	// ListOffsets: first and last of both partitions.
	lo, err := client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{
		topic: {kafka.FirstOffsetOf(0), kafka.LastOffsetOf(0), kafka.FirstOffsetOf(1), kafka.LastOffsetOf(1)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	offs := lo.Topics[topic]
	sort.Slice(offs, func(i, j int) bool { return offs[i].Partition < offs[j].Partition })
	if len(offs) != 2 {
		t.Fatalf("ListOffsets: %+v", lo.Topics)
	}
	for _, o := range offs {
		if o.Error != nil || o.FirstOffset != 0 || o.LastOffset != n {
			t.Errorf("ListOffsets partition %d: %+v, want 0..%d", o.Partition, o, n)
		}
	}

	// Fetch kafka-python's records from the middle of partition 1.
	fetch, err := client.Fetch(ctx, &kafka.FetchRequest{
		Topic: topic, Partition: 1, Offset: 10, MinBytes: 1, MaxBytes: 1 << 20, MaxWait: time.Second,
	})
	if err != nil || fetch.Error != nil {
		t.Fatalf("Fetch: %+v, %v", fetch, err)
	}
	if fetch.HighWatermark != n {
		t.Errorf("Fetch high watermark %d, want %d", fetch.HighWatermark, n)
	}
	fetched := readRecords(t, fetch.Records, 1)
	// Records before the offset asked may come with their batch.
	for len(fetched) > 0 && fetched[0].Offset < 10 {
		fetched = fetched[1:]
	}
	rdmock.SameRecords(t, "Client.Fetch", fromReader(fetched), want1[10:], true)

	// OffsetCommit outside any generation, as a tool would; OffsetFetch
	// and kafka-python read it back.
	group := topic + "-offsets"
	commit, err := client.OffsetCommit(ctx, &kafka.OffsetCommitRequest{
		GroupID: group, GenerationID: -1,
		Topics: map[string][]kafka.OffsetCommit{topic: {{Partition: 0, Offset: 7, Metadata: "m0"}, {Partition: 1, Offset: 19, Metadata: "m1"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range commit.Topics[topic] {
		if p.Error != nil {
			t.Errorf("OffsetCommit partition %d: %v", p.Partition, p.Error)
		}
	}
	of, err := client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: {0, 1}}})
	if err != nil || of.Error != nil {
		t.Fatalf("OffsetFetch: %+v, %v", of, err)
	}
	fetchedOffsets := map[int]kafka.OffsetFetchPartition{}
	for _, p := range of.Topics[topic] {
		fetchedOffsets[p.Partition] = p
	}
	if p := fetchedOffsets[0]; p.CommittedOffset != 7 || p.Metadata != "m0" || p.Error != nil {
		t.Errorf("OffsetFetch partition 0: %+v", p)
	}
	if p := fetchedOffsets[1]; p.CommittedOffset != 19 || p.Metadata != "m1" || p.Error != nil {
		t.Errorf("OffsetFetch partition 1: %+v", p)
	}
	if py := rdmock.PythonCommitted(t, c.Bootstrap(), group, topic, partitions); py[0] != 7 || py[1] != 19 {
		t.Errorf("kafka-python reads committed offsets %v, want 0:7 1:19", py)
	}

	// InitProducerID, without a transactional ID: a producer session.
	// ProducerID/ProducerEpoch -1 say "no current session" (v3+); the
	// zero values, which upstream sends too, are accepted by Kafka for a
	// non-transactional request but refused by the mock with
	// UNKNOWN_PRODUCER_ID.
	newSession := &kafka.InitProducerIDRequest{TransactionTimeoutMs: 60000, ProducerID: -1, ProducerEpoch: -1}
	ip, err := client.InitProducerID(ctx, newSession)
	if err != nil || ip.Error != nil || ip.Producer == nil {
		t.Fatalf("InitProducerID: %+v, %v", ip, err)
	}
	if ip.Producer.ProducerID < 0 || ip.Producer.ProducerEpoch < 0 {
		t.Errorf("InitProducerID: producer %+v", *ip.Producer)
	}
	ip2, err := client.InitProducerID(ctx, newSession)
	if err != nil || ip2.Error != nil || ip2.Producer == nil {
		t.Fatalf("second InitProducerID: %+v, %v", ip2, err)
	}
	if ip2.Producer.ProducerID == ip.Producer.ProducerID && ip2.Producer.ProducerEpoch == ip.Producer.ProducerEpoch {
		t.Errorf("two InitProducerID calls gave the same session %+v", *ip.Producer)
	}
}
