package rdmock_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/itest/rdmock"
)

// Kafka API keys and error codes the tests inject.
const (
	apiProduce = 0

	errNotLeader = 6 // NOT_LEADER_OR_FOLLOWER
)

// ctxFor is a context that ends with the test, bounded by a generous hang
// guard.
func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// topicName is a topic name unique within the test (each test has its own
// cluster, so uniqueness across runs does not matter).
func topicName(t *testing.T) string {
	return strings.NewReplacer("/", "-", " ", "-", "(", "", ")", "", "'", "").Replace(t.Name())
}

// keyPartitioner sends each message to the partition named in its key,
// "k-PARTITION-SEQ", so that the test knows where every message went.
var keyPartitioner = kafka.BalancerFunc(func(msg kafka.Message, partitions ...int) int {
	p, err := strconv.Atoi(strings.Split(string(msg.Key), "-")[1])
	if err != nil {
		panic(err)
	}
	return p
})

// messages makes n messages spread over partitions round-robin, with
// printable keys, values and headers that name their sequence number and
// tag, so that kcat can show them too.
func messages(tag string, n, partitions int) []kafka.Message {
	msgs := make([]kafka.Message, n)
	for i := range msgs {
		p := i % partitions
		msgs[i] = kafka.Message{
			Key:   []byte(fmt.Sprintf("k-%d-%d", p, i)),
			Value: []byte(fmt.Sprintf("value-%s-%d-%s", tag, i, strings.Repeat("x", i%50))),
			Headers: []kafka.Header{
				{Key: "seq", Value: []byte(strconv.Itoa(i))},
				{Key: "tag", Value: []byte(tag)},
			},
		}
	}
	return msgs
}

// expected is what an independent client should read back for msgs.
func expected(msgs []kafka.Message) []rdmock.Record {
	recs := make([]rdmock.Record, len(msgs))
	for i, m := range msgs {
		p, err := strconv.Atoi(strings.Split(string(m.Key), "-")[1])
		if err != nil {
			p = m.Partition
		}
		recs[i] = record(p, m)
	}
	return recs
}

func record(partition int, m kafka.Message) rdmock.Record {
	r := rdmock.Record{Partition: partition, Offset: m.Offset, Key: m.Key, Value: m.Value}
	for _, h := range m.Headers {
		r.Headers = append(r.Headers, rdmock.Header{Key: h.Key, Value: h.Value})
	}
	return r
}

// fromReader turns messages read by kafka-go into records.
func fromReader(msgs []kafka.Message) []rdmock.Record {
	recs := make([]rdmock.Record, len(msgs))
	for i, m := range msgs {
		recs[i] = record(m.Partition, m)
	}
	return recs
}

func newTransport(t *testing.T) *kafka.Transport {
	tr := &kafka.Transport{ClientID: "rdmock-test", MetadataTTL: 500 * time.Millisecond}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}
