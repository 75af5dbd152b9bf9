package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol/offsetcommit"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
)

// brokersFromEnv returns the addresses in the environment variable name (or
// the default), skipping the test when none answers, unless
// KAFKA_REQUIRE_BROKERS is set.
func brokersFromEnv(t *testing.T, name, def string) []string {
	t.Helper()
	list := os.Getenv(name)
	if list == "" {
		list = def
	}
	addrs := strings.Split(list, ",")
	for _, a := range addrs {
		c, err := net.DialTimeout("tcp", a, 2*time.Second)
		if err == nil {
			c.Close()
			return addrs
		}
	}
	if os.Getenv("KAFKA_REQUIRE_BROKERS") != "" {
		t.Fatalf("no kafka broker reachable at %s", list)
	}
	t.Skipf("no kafka broker reachable at %s", list)
	return nil
}

func integrationClient(t *testing.T) (*Client, *Transport) {
	addrs := brokersFromEnv(t, "KAFKA_BROKERS", "127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094")
	tr := &Transport{ClientID: "kafka-go-transport-test"}
	t.Cleanup(tr.CloseIdleConnections)
	return &Client{Addr: TCP(addrs...), Timeout: 20 * time.Second, Transport: tr}, tr
}

func testTopicName(t *testing.T) string {
	return fmt.Sprintf("kafka-go-%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano())
}

type tpRecordSpec struct {
	key, value string
	headers    []Header
}

func TestIntegrationClientProduceFetch(t *testing.T) {
	client, tr := integrationClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topic := testTopicName(t)

	created, err := client.CreateTopics(ctx, &CreateTopicsRequest{Topics: []TopicConfig{{
		Topic: topic, NumPartitions: 6, ReplicationFactor: 1,
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := created.Errors[topic]; err != nil {
		t.Fatalf("creating %s: %v", topic, err)
	}
	t.Cleanup(func() {
		client.DeleteTopics(context.Background(), &DeleteTopicsRequest{Topics: []string{topic}})
	})

	meta, err := client.Metadata(ctx, &MetadataRequest{Topics: []string{topic}})
	if err != nil {
		t.Fatal(err)
	}
	if len(meta.Topics) != 1 || meta.Topics[0].Error != nil || len(meta.Topics[0].Partitions) != 6 {
		t.Fatalf("metadata of the new topic: %+v", meta.Topics)
	}
	if len(meta.Brokers) == 0 {
		t.Fatal("metadata lists no broker")
	}

	base := time.Now().Truncate(time.Millisecond)
	want := make(map[int][]tpRecordSpec)
	for p := 0; p < 6; p++ {
		var specs []tpRecordSpec
		for i := 0; i < 5+p; i++ {
			s := tpRecordSpec{key: fmt.Sprintf("k-%d-%d", p, i), value: strings.Repeat(fmt.Sprintf("v%d.%d;", p, i), i+1)}
			if i%2 == 0 {
				s.headers = []Header{{Key: "h", Value: []byte(fmt.Sprint(i))}}
			}
			specs = append(specs, s)
		}
		want[p] = specs
		records := make([]Record, len(specs))
		for i, s := range specs {
			records[i] = Record{Time: base, Key: NewBytes([]byte(s.key)), Value: NewBytes([]byte(s.value)), Headers: s.headers}
		}
		res, err := client.Produce(ctx, &ProduceRequest{
			Topic: topic, Partition: p, RequiredAcks: RequireAll, Records: NewRecordReader(records...),
		})
		if err != nil {
			t.Fatalf("produce to partition %d: %v", p, err)
		}
		if res.Error != nil {
			t.Fatalf("produce to partition %d: broker error %v", p, res.Error)
		}
		if res.BaseOffset != 0 {
			t.Fatalf("partition %d: base offset %d, want 0", p, res.BaseOffset)
		}
	}

	for p := 0; p < 6; p++ {
		res, err := client.Fetch(ctx, &FetchRequest{Topic: topic, Partition: p, Offset: 0, MinBytes: 1, MaxBytes: 1 << 20, MaxWait: 100 * time.Millisecond})
		if err != nil {
			t.Fatalf("fetch partition %d: %v", p, err)
		}
		if res.Error != nil {
			t.Fatalf("fetch partition %d: broker error %v", p, res.Error)
		}
		if res.HighWatermark != int64(len(want[p])) {
			t.Fatalf("partition %d: high watermark %d, want %d", p, res.HighWatermark, len(want[p]))
		}
		var got []tpRecordSpec
		for i := 0; ; i++ {
			r, err := res.Records.ReadRecord()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("partition %d record %d: %v", p, i, err)
			}
			if r.Offset != int64(i) {
				t.Fatalf("partition %d: record %d has offset %d", p, i, r.Offset)
			}
			if !r.Time.Equal(base) {
				t.Fatalf("partition %d: record %d has time %v, want %v", p, i, r.Time, base)
			}
			k, _ := ReadAll(r.Key)
			v, _ := ReadAll(r.Value)
			got = append(got, tpRecordSpec{key: string(k), value: string(v), headers: r.Headers})
		}
		if len(got) != len(want[p]) {
			t.Fatalf("partition %d: fetched %d records, want %d", p, len(got), len(want[p]))
		}
		for i := range got {
			g, w := got[i], want[p][i]
			if g.key != w.key || g.value != w.value || len(g.headers) != len(w.headers) {
				t.Fatalf("partition %d record %d: got %+v, want %+v", p, i, g, w)
			}
			for j := range g.headers {
				if g.headers[j].Key != w.headers[j].Key || !bytes.Equal(g.headers[j].Value, w.headers[j].Value) {
					t.Fatalf("partition %d record %d header %d: got %+v, want %+v", p, i, j, g.headers[j], w.headers[j])
				}
			}
		}
	}

	offsets := make([]OffsetRequest, 0, 12)
	for p := 0; p < 6; p++ {
		offsets = append(offsets, FirstOffsetOf(p), LastOffsetOf(p))
	}
	lo, err := client.ListOffsets(ctx, &ListOffsetsRequest{Topics: map[string][]OffsetRequest{topic: offsets}})
	if err != nil {
		t.Fatal(err)
	}
	if len(lo.Topics[topic]) != 6 {
		t.Fatalf("ListOffsets returned %d partitions, want 6", len(lo.Topics[topic]))
	}
	for _, po := range lo.Topics[topic] {
		if po.Error != nil {
			t.Fatalf("partition %d: %v", po.Partition, po.Error)
		}
		if po.FirstOffset != 0 || po.LastOffset != int64(len(want[po.Partition])) {
			t.Fatalf("partition %d: offsets %d-%d, want 0-%d", po.Partition, po.FirstOffset, po.LastOffset, len(want[po.Partition]))
		}
	}

	// Fetching from LastOffset looks the offset up first and returns nothing.
	last, err := client.Fetch(ctx, &FetchRequest{Topic: topic, Partition: 2, Offset: lastOffsetTimestamp, MaxBytes: 1 << 20, MaxWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := last.Records.ReadRecord(); !errors.Is(err, io.EOF) {
		t.Fatalf("fetch at the last offset returned a record %+v (err %v)", r, err)
	}

	deleted, err := client.DeleteTopics(ctx, &DeleteTopicsRequest{Topics: []string{topic}})
	if err != nil {
		t.Fatal(err)
	}
	if err, ok := deleted.Errors[topic]; !ok || err != nil {
		t.Fatalf("deleting %s: %v (reported: %v)", topic, err, ok)
	}
	// The transport dropped its cached layout: the topic is gone.
	meta, err = client.Metadata(ctx, &MetadataRequest{Topics: []string{topic}})
	if err != nil {
		t.Fatal(err)
	}
	if len(meta.Topics) != 1 || !errors.Is(meta.Topics[0].Error, UnknownTopicOrPartition) {
		t.Fatalf("metadata after deletion: %+v", meta.Topics)
	}
	_ = tr
}

func TestIntegrationApiVersions(t *testing.T) {
	client, _ := integrationClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := client.ApiVersions(ctx, &ApiVersionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Error != nil {
		t.Fatal(res.Error)
	}
	found := false
	for _, k := range res.ApiKeys {
		if k.ApiKey == 0 && k.ApiName == "Produce" && k.MaxVersion >= 3 {
			found = true
		}
	}
	if !found {
		t.Fatalf("ApiVersions does not list Produce v3+: %+v", res.ApiKeys)
	}
}

func TestIntegrationSASL(t *testing.T) {
	addrs := brokersFromEnv(t, "KAFKA_SASL_BROKERS", "127.0.0.1:9096")
	mustScram := func(algo scram.Algorithm, user, pass string) sasl.Mechanism {
		m, err := scram.Mechanism(algo, user, pass)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	cases := []struct {
		name string
		mech sasl.Mechanism
		ok   bool
	}{
		{"plain", plain.Mechanism{Username: "plain-user", Password: "plain-secret"}, true},
		{"scram-sha-256", mustScram(scram.SHA256, "scram256-user", "scram256-secret"), true},
		{"scram-sha-512", mustScram(scram.SHA512, "scram512-user", "scram512-secret"), true},
		{"plain-wrong-password", plain.Mechanism{Username: "plain-user", Password: "nope"}, false},
		{"scram-sha-256-wrong-password", mustScram(scram.SHA256, "scram256-user", "nope"), false},
		{"scram-sha-512-wrong-password", mustScram(scram.SHA512, "scram512-user", "nope"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := &Transport{SASL: tc.mech}
			defer tr.CloseIdleConnections()
			client := &Client{Addr: TCP(addrs...), Transport: tr}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := client.Metadata(ctx, &MetadataRequest{})
			if tc.ok {
				if err != nil {
					t.Fatalf("authenticated request failed: %v", err)
				}
				res, err := client.ApiVersions(ctx, &ApiVersionsRequest{})
				if err != nil || res.Error != nil || len(res.ApiKeys) == 0 {
					t.Fatalf("ApiVersions after login: %+v, %v", res, err)
				}
				return
			}
			if err == nil {
				t.Fatal("a wrong password was accepted")
			}
			if !errors.Is(err, SASLAuthenticationFailed) {
				t.Fatalf("wrong password: error %v does not match SASLAuthenticationFailed", err)
			}
			if !strings.Contains(err.Error(), "authentication") {
				t.Fatalf("error does not say that authentication failed: %v", err)
			}
			if ctx.Err() != nil {
				t.Fatalf("the failure took the whole timeout: %v", err)
			}
			t.Logf("wrong password: %v", err)
			// A second attempt fails the same way rather than hanging.
			if _, err := client.Metadata(ctx, &MetadataRequest{}); !errors.Is(err, SASLAuthenticationFailed) {
				t.Fatalf("second attempt: %v", err)
			}
		})
	}
}

func TestIntegrationConsumerOffsets(t *testing.T) {
	client, tr := integrationClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topic := testTopicName(t)
	group := topic + "-group"
	res, err := client.CreateTopics(ctx, &CreateTopicsRequest{Topics: []TopicConfig{{Topic: topic, NumPartitions: 3, ReplicationFactor: 1}}})
	if err != nil || res.Errors[topic] != nil {
		t.Fatalf("creating %s: %v %v", topic, err, res)
	}
	defer client.DeleteTopics(context.Background(), &DeleteTopicsRequest{Topics: []string{topic}})

	// Commits as a standalone consumer go to the group coordinator, which
	// the transport finds.
	m, err := tr.RoundTrip(ctx, client.Addr, &offsetcommit.Request{
		GroupID: group, GenerationID: -1,
		Topics: []offsetcommit.RequestTopic{{Name: topic, Partitions: []offsetcommit.RequestPartition{
			{PartitionIndex: 0, CommittedOffset: 5, CommittedLeaderEpoch: -1},
			{PartitionIndex: 2, CommittedOffset: 9, CommittedLeaderEpoch: -1},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.(*offsetcommit.Response).Topics[0].Partitions {
		if p.ErrorCode != 0 {
			t.Fatalf("committing partition %d: %v", p.PartitionIndex, Error(p.ErrorCode))
		}
	}
	offsets, err := client.ConsumerOffsets(ctx, TopicAndGroup{Topic: topic, GroupId: group})
	if err != nil {
		t.Fatal(err)
	}
	if len(offsets) != 3 || offsets[0] != 5 || offsets[1] != -1 || offsets[2] != 9 {
		t.Fatalf("committed offsets %v, want map[0:5 1:-1 2:9]", offsets)
	}
}

func TestIntegrationInitProducerID(t *testing.T) {
	client, _ := integrationClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Idempotent producer: no transactional ID, any broker answers.
	res, err := client.InitProducerID(ctx, &InitProducerIDRequest{TransactionTimeoutMs: 10000, ProducerID: -1, ProducerEpoch: -1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Error != nil || res.Producer.ProducerID < 0 {
		t.Fatalf("idempotent producer: %+v %+v", res, res.Producer)
	}
	// Transactional producer: the request goes to the transaction
	// coordinator, found by the transport.
	txn := testTopicName(t) + "-txn"
	res, err = client.InitProducerID(ctx, &InitProducerIDRequest{TransactionalID: txn, TransactionTimeoutMs: 10000, ProducerID: -1, ProducerEpoch: -1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Error != nil || res.Producer.ProducerID < 0 {
		t.Fatalf("transactional producer: %+v %+v", res, res.Producer)
	}
}

func TestIntegrationConcurrentProduce(t *testing.T) {
	client, _ := integrationClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topic := testTopicName(t)
	res, err := client.CreateTopics(ctx, &CreateTopicsRequest{Topics: []TopicConfig{{Topic: topic, NumPartitions: 6, ReplicationFactor: 1}}})
	if err != nil || res.Errors[topic] != nil {
		t.Fatalf("creating %s: %v %v", topic, err, res)
	}
	defer client.DeleteTopics(context.Background(), &DeleteTopicsRequest{Topics: []string{topic}})

	const workers, each = 12, 20
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				r, err := client.Produce(ctx, &ProduceRequest{
					Topic: topic, Partition: (w + i) % 6, RequiredAcks: RequireAll,
					Records: NewRecordReader(Record{Value: NewBytes([]byte(fmt.Sprintf("%d-%d", w, i)))}),
				})
				if err == nil && r.Error != nil {
					err = r.Error
				}
				if err != nil {
					t.Errorf("worker %d record %d: %v", w, i, err)
					return
				}
			}
		}(w)
	}
	wg.Wait()

	var offsets []OffsetRequest
	for p := 0; p < 6; p++ {
		offsets = append(offsets, LastOffsetOf(p))
	}
	lo, err := client.ListOffsets(ctx, &ListOffsetsRequest{Topics: map[string][]OffsetRequest{topic: offsets}})
	if err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	for _, po := range lo.Topics[topic] {
		if po.Error != nil {
			t.Fatal(po.Error)
		}
		total += po.LastOffset
	}
	if total != workers*each {
		t.Fatalf("%d records stored, want %d", total, workers*each)
	}
}
