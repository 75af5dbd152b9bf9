package topics

import (
	"context"
	"errors"
	"net"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol/metadata"
)

// fixedMetadata answers every Metadata request with the same topics.
type fixedMetadata struct {
	topics []string
	err    error
	got    []kafka.Request
}

func (f *fixedMetadata) RoundTrip(_ context.Context, _ net.Addr, req kafka.Request) (kafka.Response, error) {
	f.got = append(f.got, req)
	if f.err != nil {
		return nil, f.err
	}
	res := &metadata.Response{Brokers: []metadata.ResponseBroker{{NodeID: 1, Host: "h", Port: 9092}}}
	for _, name := range f.topics {
		res.Topics = append(res.Topics, metadata.ResponseTopic{Name: name, Partitions: []metadata.ResponsePartition{{LeaderID: 1}}})
	}
	return res, nil
}

func names(topics []kafka.Topic) []string {
	out := make([]string, len(topics))
	for i, t := range topics {
		out[i] = t.Name
	}
	sort.Strings(out)
	return out
}

func TestListAndListRe(t *testing.T) {
	tr := &fixedMetadata{topics: []string{"orders", "orders-dlq", "users"}}
	client := &kafka.Client{Addr: kafka.TCP("127.0.0.1:1"), Transport: tr}
	ctx := context.Background()

	all, err := List(ctx, client)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(all), ","); got != "orders,orders-dlq,users" {
		t.Fatalf("List: %s", got)
	}
	if req, ok := tr.got[0].(*metadata.Request); !ok || req.TopicNames != nil {
		t.Fatalf("List must ask for all topics, sent %#v", tr.got[0])
	}
	if all[0].Partitions[0].Leader.Host != "h" {
		t.Fatalf("partition leader not resolved: %+v", all[0].Partitions[0])
	}

	matched, err := ListRe(ctx, client, regexp.MustCompile(`^orders`))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(matched), ","); got != "orders,orders-dlq" {
		t.Fatalf("ListRe: %s", got)
	}
	none, err := ListRe(ctx, client, regexp.MustCompile(`^nothing$`))
	if err != nil || none != nil {
		t.Fatalf("ListRe with no match: %v, %v", none, err)
	}
}

func TestListErrors(t *testing.T) {
	if _, err := List(context.Background(), nil); err == nil {
		t.Fatal("List accepted a nil client")
	}
	boom := errors.New("boom")
	client := &kafka.Client{Addr: kafka.TCP("127.0.0.1:1"), Transport: &fixedMetadata{err: boom}}
	if _, err := ListRe(context.Background(), client, regexp.MustCompile(".")); !errors.Is(err, boom) {
		t.Fatalf("got %v, want the transport's error", err)
	}
}

func TestIntegrationList(t *testing.T) {
	list := os.Getenv("KAFKA_BROKERS")
	if list == "" {
		list = "127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094"
	}
	addrs := strings.Split(list, ",")
	reachable := false
	for _, a := range addrs {
		if c, err := net.DialTimeout("tcp", a, 2*time.Second); err == nil {
			c.Close()
			reachable = true
			break
		}
	}
	if !reachable {
		if os.Getenv("KAFKA_REQUIRE_BROKERS") != "" {
			t.Fatalf("no kafka broker reachable at %s", list)
		}
		t.Skipf("no kafka broker reachable at %s", list)
	}

	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(addrs...), Transport: tr, Timeout: 20 * time.Second}
	ctx := context.Background()
	topic := "kafka-go-topics-list-" + time.Now().Format("150405.000000000")
	res, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: 2, ReplicationFactor: 1}}})
	if err != nil || res.Errors[topic] != nil {
		t.Fatalf("creating %s: %v %v", topic, err, res)
	}
	defer client.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{topic}})

	found, err := ListRe(ctx, client, regexp.MustCompile("^"+regexp.QuoteMeta(topic)+"$"))
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0].Name != topic || len(found[0].Partitions) != 2 {
		t.Fatalf("ListRe found %+v", found)
	}
}
