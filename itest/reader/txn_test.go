package reader

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	kafka "github.com/segmentio/kafka-go"
)

// With ReadCommitted, records of aborted transactions are skipped; with
// ReadUncommitted they are returned. Transaction markers never are.
func TestReaderIsolationLevel(t *testing.T) {
	const topic = "txn"
	addrs, _ := startCluster(t, topic, 1)
	ctx := ctxTimeout(t, 60*time.Second)
	cl := newProducer(t, addrs, kgo.TransactionalID("txn-producer"))
	plain := newProducer(t, addrs)

	txn := func(prefix string, commit bool) {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 5; i++ {
			r := &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf("%s%d", prefix, i))}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	txn("a", true)
	txn("b", false)
	if err := plain.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("plain")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	txn("c", true)
	txn("d", false)
	if err := plain.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("end")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	read := func(level kafka.IsolationLevel, n int) []string {
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: topic, IsolationLevel: level, MaxWait: 100 * time.Millisecond})
		defer r.Close()
		var values []string
		last := int64(-1)
		for len(values) < n {
			m, err := r.FetchMessage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if m.Offset <= last {
				t.Fatalf("offset %d after %d", m.Offset, last)
			}
			last = m.Offset
			values = append(values, string(m.Value))
		}
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		if m, err := r.FetchMessage(short); err == nil {
			t.Fatalf("unexpected message %q at %d", m.Value, m.Offset)
		}
		return values
	}

	committed := read(kafka.ReadCommitted, 12)
	if got := fmt.Sprint(committed); got != "[a0 a1 a2 a3 a4 plain c0 c1 c2 c3 c4 end]" {
		t.Fatalf("read committed: %s", got)
	}
	all := read(kafka.ReadUncommitted, 22)
	if got := fmt.Sprint(all); got != "[a0 a1 a2 a3 a4 b0 b1 b2 b3 b4 plain c0 c1 c2 c3 c4 d0 d1 d2 d3 d4 end]" {
		t.Fatalf("read uncommitted: %s", got)
	}
	checkNoGoroutines(t)
}

// Deleting the topic being read makes FetchMessage return an error instead
// of blocking, and Close still returns. (The cluster does not create topics
// automatically: a reader would otherwise bring the topic back, as upstream's
// does, and wait for data in it.)
func TestReaderTopicDeletedMidRead(t *testing.T) {
	const topic = "doomed"
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(1, topic))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addrs := c.ListenAddrs()
	cl := newProducer(t, addrs)
	produce(t, cl, topic, 1, 5)
	ctx := ctxTimeout(t, 60*time.Second)

	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:        addrs,
		Topic:          topic,
		MaxWait:        100 * time.Millisecond,
		ReadBackoffMin: 10 * time.Millisecond,
		ReadBackoffMax: 50 * time.Millisecond,
	})
	for i := 0; i < 5; i++ {
		if _, err := r.FetchMessage(ctx); err != nil {
			t.Fatal(err)
		}
	}

	req := kmsg.NewPtrDeleteTopicsRequest()
	name := topic
	req.Topics = []kmsg.DeleteTopicsRequestTopic{{Topic: &name}}
	req.TopicNames = []string{topic}
	res, err := req.RequestWith(ctx, cl)
	if err != nil || len(res.Topics) != 1 || res.Topics[0].ErrorCode != 0 {
		t.Fatalf("delete topic: %v %+v", err, res)
	}

	wait, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	_, err = r.FetchMessage(wait)
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("FetchMessage after deletion: %v", err)
	}
	if !errors.Is(err, kafka.UnknownTopicOrPartition) {
		t.Logf("error: %v", err)
	}
	r.Close()
	checkNoGoroutines(t)
}

// Like the original, a reader of a topic that does not exist creates it
// when the cluster allows, then reads what is written to it.
func TestReaderCreatesMissingTopic(t *testing.T) {
	addrs, _ := startCluster(t, "other", 1)
	const topic = "created-by-reader"
	ctx := ctxTimeout(t, 60*time.Second)
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: topic, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	got := make(chan kafka.Message, 1)
	go func() {
		if m, err := r.FetchMessage(ctx); err == nil {
			got <- m
		}
	}()
	cl := newProducer(t, addrs)
	// The topic appears without anyone else asking for its creation.
	for {
		req := kmsg.NewPtrMetadataRequest()
		name := topic
		req.Topics = []kmsg.MetadataRequestTopic{{Topic: &name}}
		req.AllowAutoTopicCreation = false
		res, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Topics) == 1 && res.Topics[0].ErrorCode == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cl.ProduceSync(ctx, record(topic, 0, 0)).FirstErr(); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		if m.Offset != 0 || string(m.Value) != "v0" {
			t.Fatalf("got %+v", m)
		}
	case <-ctx.Done():
		t.Fatal("no message")
	}
}
