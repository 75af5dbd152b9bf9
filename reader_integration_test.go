package kafka

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// readerTestBrokers returns the brokers of KAFKA_BROKERS (or the embedded
// cluster's default ports). The test is skipped when none is reachable,
// unless KAFKA_REQUIRE_BROKERS is set.
func readerTestBrokers(t *testing.T) []string {
	t.Helper()
	list := os.Getenv("KAFKA_BROKERS")
	if list == "" {
		list = "127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094"
	}
	addrs := strings.Split(list, ",")
	for _, a := range addrs {
		if c, err := net.DialTimeout("tcp", a, 2*time.Second); err == nil {
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

// Records produced (one codec per partition) through Client are read back
// by a group reader once each and in order; after Close, a reader of the
// same group finds nothing left, and a partition reader sees the same
// records with Lag reaching zero.
func TestReaderIntegrationGroupRoundTrip(t *testing.T) {
	brokers := readerTestBrokers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := &Client{Addr: TCP(brokers...), Timeout: 10 * time.Second}
	topic := fmt.Sprintf("reader-integration-%d", time.Now().UnixNano())
	res, err := client.CreateTopics(ctx, &CreateTopicsRequest{Topics: []TopicConfig{{Topic: topic, NumPartitions: 3, ReplicationFactor: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Errors[topic]; err != nil {
		t.Fatal(err)
	}

	const n = 20
	codecs := []Compression{Gzip, Snappy, 0}
	for p, codec := range codecs {
		var recs []Record
		for i := 0; i < n; i++ {
			recs = append(recs, Record{
				Key:   NewBytes([]byte(fmt.Sprintf("p%d-%d", p, i))),
				Value: NewBytes([]byte(fmt.Sprintf("v%d", i))),
			})
		}
		pr, err := client.Produce(ctx, &ProduceRequest{
			Topic: topic, Partition: p, RequiredAcks: RequireAll,
			Records: NewRecordReader(recs...), Compression: codec,
		})
		if err != nil {
			t.Fatal(err)
		}
		if pr.Error != nil {
			t.Fatal(pr.Error)
		}
	}

	group := topic + "-group"
	newGroupReader := func() *Reader {
		return NewReader(ReaderConfig{
			Brokers: brokers, GroupID: group, Topic: topic, MaxWait: 200 * time.Millisecond,
			HeartbeatInterval: 200 * time.Millisecond, SessionTimeout: 10 * time.Second,
		})
	}
	r := newGroupReader()
	next := map[int]int64{}
	for i := 0; i < 3*n; i++ {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m.Offset != next[m.Partition] || string(m.Key) != fmt.Sprintf("p%d-%d", m.Partition, m.Offset) {
			t.Fatalf("partition %d: got offset %d key %q, want offset %d", m.Partition, m.Offset, m.Key, next[m.Partition])
		}
		next[m.Partition]++
	}
	r.Close()

	r = newGroupReader()
	short, cancelShort := context.WithTimeout(ctx, 2*time.Second)
	m, err := r.FetchMessage(short)
	cancelShort()
	r.Close()
	if err == nil {
		t.Fatalf("message %d of partition %d read again after the commit", m.Offset, m.Partition)
	}

	pr := NewReader(ReaderConfig{Brokers: brokers, Topic: topic, Partition: 1, MaxWait: 200 * time.Millisecond})
	defer pr.Close()
	for i := 0; i < n; i++ {
		m, err := pr.FetchMessage(ctx)
		if err != nil || m.Offset != int64(i) {
			t.Fatalf("partition reader: %d %v", m.Offset, err)
		}
	}
	if pr.Lag() != 0 {
		t.Fatalf("lag %d", pr.Lag())
	}
}
