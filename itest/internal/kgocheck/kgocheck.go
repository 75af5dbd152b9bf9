// Package kgocheck checks a running cluster with an independent client
// (franz-go's kgo), so that the cluster setup itself is verified without
// depending on the kafka-go code under test.
package kgocheck

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/segmentio/kafka-go/itest/clustertest"
)

// Mechanism builds the kgo SASL mechanism for one of "PLAIN",
// "SCRAM-SHA-256" or "SCRAM-SHA-512".
func Mechanism(t testing.TB, name, user, pass string) sasl.Mechanism {
	t.Helper()
	switch name {
	case "PLAIN":
		return plain.Auth{User: user, Pass: pass}.AsMechanism()
	case "SCRAM-SHA-256":
		return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()
	case "SCRAM-SHA-512":
		return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()
	}
	t.Fatalf("unknown SASL mechanism %q", name)
	return nil
}

// TopicName returns a topic name unique to this test and run.
func TopicName(t testing.TB) string { return clustertest.Topic(t) }

// Login connects to addrs with the given mechanism and issues one request
// that needs an authenticated connection. It returns the client's error
// (nil when the login was accepted). A nil mech connects without SASL.
func Login(ctx context.Context, addrs []string, mech sasl.Mechanism) error {
	opts := []kgo.Opt{
		kgo.SeedBrokers(addrs...),
		kgo.RequestRetries(0),
		kgo.DialTimeout(5 * time.Second),
	}
	if mech != nil {
		opts = append(opts, kgo.SASL(mech))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	// ApiVersions is allowed before authentication, so only a request
	// such as Metadata proves the broker let us through.
	req := kmsg.NewPtrMetadataRequest()
	_, err = req.RequestWith(ctx, cl)
	return err
}

// Metadata returns the number of brokers in the cluster and the number of
// partitions of topic, auto-creating the topic.
func Metadata(t testing.TB, addrs []string, topic string, opts ...kgo.Opt) (brokers, partitions int) {
	t.Helper()
	cl := newClient(t, addrs, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = true
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	// A freshly auto-created topic can briefly report a leader error on a
	// real broker; retry a few times before giving up.
	for attempt := 0; ; attempt++ {
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("metadata request: %v", err)
		}
		if len(resp.Topics) == 1 && resp.Topics[0].ErrorCode == 0 {
			return len(resp.Brokers), len(resp.Topics[0].Partitions)
		}
		if attempt == 20 {
			t.Fatalf("metadata for %q never became ready: %+v", topic, resp.Topics)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// RoundTrip produces n records to a new topic and consumes them back,
// failing the test unless every record is seen exactly once with the value
// it was produced with.
func RoundTrip(t testing.TB, addrs []string, n int, opts ...kgo.Opt) {
	t.Helper()
	topic := TopicName(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	producer := newClient(t, addrs, append([]kgo.Opt{kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation()}, opts...)...)
	for i := 0; i < n; i++ {
		rec := &kgo.Record{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("v%d", i))}
		if err := producer.ProduceSync(ctx, rec).FirstErr(); err != nil {
			t.Fatalf("produce record %d: %v", i, err)
		}
	}

	consumer := newClient(t, addrs, append([]kgo.Opt{
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	}, opts...)...)
	seen := make(map[string]string, n)
	partitions := make(map[int32]bool)
	for len(seen) < n {
		fetches := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records before timeout", len(seen), n)
		}
		fetches.EachError(func(topic string, p int32, err error) {
			t.Fatalf("fetch %s/%d: %v", topic, p, err)
		})
		fetches.EachRecord(func(r *kgo.Record) {
			k := string(r.Key)
			if _, dup := seen[k]; dup {
				t.Errorf("record %s consumed twice", k)
			}
			seen[k] = string(r.Value)
			partitions[r.Partition] = true
		})
	}
	for i := 0; i < n; i++ {
		k, want := fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)
		if got := seen[k]; got != want {
			t.Errorf("record %s: value %q, want %q", k, got, want)
		}
	}
	t.Logf("round trip of %d records through %d partitions of %s", n, len(partitions), topic)
}

func newClient(t testing.TB, addrs []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addrs...)}, opts...)...)
	if err != nil {
		t.Fatalf("kgo.NewClient: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}
