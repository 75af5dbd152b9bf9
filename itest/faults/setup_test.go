package faults_test

import (
	"context"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/internal/faultproxy"
	"github.com/segmentio/kafka-go/itest/clustertest"
	"github.com/segmentio/kafka-go/itest/internal/kgocheck"
	"github.com/segmentio/kafka-go/sasl/plain"
)

func kgoSASL(t *testing.T) []kgo.Opt {
	return []kgo.Opt{kgo.SASL(kgocheck.Mechanism(t, "PLAIN", clustertest.PlainUser, clustertest.PlainSecret))}
}

func metadataRequest(topic string) *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	return req
}

func partitionsOf(m kmsg.Response, topic string) int {
	res, ok := m.(*kmsg.MetadataResponse)
	if !ok {
		return 0
	}
	for _, tp := range res.Topics {
		if tp.Topic != nil && *tp.Topic == topic && tp.ErrorCode == 0 {
			return len(tp.Partitions)
		}
	}
	return 0
}

func newProxy(t *testing.T) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// mode is one way of using the Writer.
type mode struct {
	async, bounded, completion bool
}

func (m mode) String() string {
	s := "sync"
	if m.async {
		s = "async"
	}
	if m.bounded {
		s += "-bounded"
	} else {
		s += "-unbounded"
	}
	if m.completion {
		s += "-completion"
	}
	return s
}

func allModes() []mode {
	var ms []mode
	for _, async := range []bool{false, true} {
		for _, bounded := range []bool{false, true} {
			for _, completion := range []bool{false, true} {
				ms = append(ms, mode{async, bounded, completion})
			}
		}
	}
	return ms
}

// newWriter builds a Writer in mode m whose connections all go through p.
func newWriter(addrs []string, topic string, p *faultproxy.Proxy, m mode, l *ledger, saslOn bool) *kafka.Writer {
	tr := &kafka.Transport{Dial: p.Dial, MetadataTTL: time.Minute}
	if saslOn {
		tr.SASL = plain.Mechanism{Username: clustertest.PlainUser, Password: clustertest.PlainSecret}
	}
	w := &kafka.Writer{
		Addr:            kafka.TCP(addrs...),
		Topic:           topic,
		Balancer:        &kafka.Hash{},
		Transport:       tr,
		Async:           m.async,
		BatchSize:       8,
		BatchTimeout:    2 * time.Millisecond,
		RequiredAcks:    kafka.RequireAll,
		MaxAttempts:     30,
		WriteBackoffMin: time.Millisecond,
		WriteBackoffMax: 20 * time.Millisecond,
	}
	if m.bounded {
		w.MaxBufferedBatches = 2
		w.MaxBufferedBytes = 8 * 1024
	}
	if m.completion {
		w.Completion = l.completion
	}
	return w
}

// produceKeys writes messages 0..n-1 of producer; see produceRange.
func produceKeys(t *testing.T, w *kafka.Writer, l *ledger, producer, n int, rng *rand.Rand, timeouts bool) {
	produceRange(t, w, l, producer, 0, n, rng, timeouts)
}

// produceRange writes messages from..to-1 of producer in calls of 1 to 4
// messages, each keyed by the producer so that they share a partition and
// their order there can be checked. With timeouts, one call in 8 gets a
// deadline of 0 to 20 ms (the ledger then records refusals and unknown
// outcomes). It may run on any goroutine.
func produceRange(t *testing.T, w *kafka.Writer, l *ledger, producer, from, to int, rng *rand.Rand, timeouts bool) {
	key := []byte{byte('a' + producer%26), byte(producer)}
	for seq := from; seq < to; {
		k := 1 + rng.Intn(4)
		msgs := make([]kafka.Message, 0, k)
		for ; len(msgs) < k && seq < to; seq++ {
			msgs = append(msgs, kafka.Message{Key: key, Value: newValue(producer, seq)})
		}
		ctx, cancel := context.Background(), context.CancelFunc(func() {})
		if timeouts && rng.Intn(8) == 0 {
			ctx, cancel = context.WithTimeout(ctx, time.Duration(rng.Intn(20))*time.Millisecond)
		}
		err := w.WriteMessages(ctx, msgs...)
		l.written(t, w, msgs, err, ctx)
		cancel()
	}
}

// ensureTopic creates topic (kfake auto-creates it on metadata).
func ensureTopic(t *testing.T, addrs []string, topic string, saslOn bool) {
	t.Helper()
	if saslOn {
		kgocheck.Metadata(t, addrs, topic, kgoSASL(t)...)
		return
	}
	kgocheck.Metadata(t, addrs, topic)
}

// every returns a rule applying action to every nth request of key, at
// most max times.
func every(key int16, nth, max int32, action faultproxy.Action) faultproxy.Rule {
	var seen, fired atomic.Int32
	return func(r faultproxy.Request) faultproxy.Action {
		if r.ApiKey != key || seen.Add(1)%nth != 0 || fired.Add(1) > max {
			return faultproxy.Forward
		}
		return action
	}
}

// both applies the first rule that does not forward.
func both(rules ...faultproxy.Rule) faultproxy.Rule {
	return func(r faultproxy.Request) faultproxy.Action {
		for _, rule := range rules {
			if a := rule(r); a != faultproxy.Forward {
				return a
			}
		}
		return faultproxy.Forward
	}
}

// produceErrors makes kfake fail produce requests: every nth one (at most
// max) gets its connection closed (close) or an error code on each of its
// partitions (code).
func produceErrors(c *kfake.Cluster, nth, max int32, close bool, code int16) *atomic.Int32 {
	var seen, fired atomic.Int32
	var mu sync.Mutex
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mu.Lock()
		defer mu.Unlock()
		if seen.Add(1)%nth != 0 || fired.Load() >= max {
			return nil, nil, false
		}
		fired.Add(1)
		if close {
			return nil, errProduceControl, true
		}
		return produceErrorResponse(req.(*kmsg.ProduceRequest), code), nil, true
	})
	return &fired
}

var errProduceControl = context.Canceled // any error: kfake then closes the connection

func produceErrorResponse(req *kmsg.ProduceRequest, code int16) *kmsg.ProduceResponse {
	res := req.ResponseKind().(*kmsg.ProduceResponse)
	res.Version = req.Version
	for _, rt := range req.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.ErrorCode = code
			sp.BaseOffset = -1
			st.Partitions = append(st.Partitions, sp)
		}
		res.Topics = append(res.Topics, st)
	}
	return res
}
