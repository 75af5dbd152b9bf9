package faults_test

import (
	"math/rand"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/segmentio/kafka-go/internal/faultproxy"
	"github.com/segmentio/kafka-go/itest/clustertest"
)

// keys of the requests the faults aim at (kmsg.Produce, ...).
const (
	keyProduce          = 0
	keyApiVersions      = 18
	keySaslAuthenticate = 36
)

// fault is one kind of trouble, set up on a fresh cluster and proxy.
type fault struct {
	name string
	sasl bool
	// afterAppend says the fault drops answers to produce requests the
	// broker appended: the run must then see such a loss, and the
	// retries report success.
	afterAppend bool
	// setup installs the fault; fired reports how often it struck.
	setup func(c *kfake.Cluster, p *faultproxy.Proxy) (fired func() int)
}

// proxyFault installs the rule made by rule (fresh counters for every
// run) and reports how often the given actions were taken.
func proxyFault(rule func() faultproxy.Rule, actions ...faultproxy.Action) func(*kfake.Cluster, *faultproxy.Proxy) func() int {
	return func(_ *kfake.Cluster, p *faultproxy.Proxy) func() int {
		p.SetRule(rule())
		return func() int {
			s, n := p.Stats(), 0
			for _, a := range actions {
				n += s.Fired[a]
			}
			return n
		}
	}
}

var faults = []fault{
	{name: "produce-close-before", setup: proxyFault(func() faultproxy.Rule { return every(keyProduce, 3, 4, faultproxy.CloseBefore) }, faultproxy.CloseBefore)},
	{name: "produce-reset-before", setup: proxyFault(func() faultproxy.Rule { return every(keyProduce, 3, 4, faultproxy.ResetBefore) }, faultproxy.ResetBefore)},
	{name: "produce-close-after", afterAppend: true, setup: proxyFault(func() faultproxy.Rule { return every(keyProduce, 3, 4, faultproxy.CloseAfter) }, faultproxy.CloseAfter)},
	{name: "produce-reset-after", afterAppend: true, setup: proxyFault(func() faultproxy.Rule { return every(keyProduce, 3, 4, faultproxy.ResetAfter) }, faultproxy.ResetAfter)},
	// Connections closed under produce requests make the Writer dial
	// again, and those handshakes fail in turn.
	{name: "apiversions-close", setup: proxyFault(func() faultproxy.Rule {
		return both(
			every(keyApiVersions, 2, 4, faultproxy.CloseBefore),
			every(keyProduce, 4, 3, faultproxy.ResetBefore),
		)
	}, faultproxy.CloseBefore)},
	{name: "apiversions-close-after", setup: proxyFault(func() faultproxy.Rule {
		return both(
			every(keyApiVersions, 2, 4, faultproxy.CloseAfter),
			every(keyProduce, 4, 3, faultproxy.ResetBefore),
		)
	}, faultproxy.CloseAfter)},
	{name: "sasl-close", sasl: true, setup: proxyFault(func() faultproxy.Rule {
		return both(
			every(keySaslAuthenticate, 2, 4, faultproxy.CloseBefore),
			every(keyProduce, 4, 3, faultproxy.ResetBefore),
		)
	}, faultproxy.CloseBefore)},
	{name: "dial-refused", setup: func(c *kfake.Cluster, p *faultproxy.Proxy) func() int {
		var dials, refused atomic.Int32
		p.SetRefuse(func(string) bool {
			return dials.Add(1)%2 == 0 && refused.Add(1) <= 4
		})
		p.SetRule(every(keyProduce, 4, 4, faultproxy.CloseBefore))
		return func() int { return p.Stats().Refused }
	}},
	{name: "kfake-closes", setup: func(c *kfake.Cluster, p *faultproxy.Proxy) func() int {
		fired := produceErrors(c, 3, 4, true, 0)
		return func() int { return int(fired.Load()) }
	}},
	{name: "kfake-not-leader", setup: func(c *kfake.Cluster, p *faultproxy.Proxy) func() int {
		fired := produceErrors(c, 3, 4, false, 6) // NOT_LEADER_OR_FOLLOWER
		return func() int { return int(fired.Load()) }
	}},
}

// Every fault, in every mode of the Writer: nothing accepted is lost,
// nothing fails (the faults stop well within MaxAttempts), order holds per
// partition, and duplicates come only from lost answers.
func TestWriterFaultMatrix(t *testing.T) {
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			for _, m := range allModes() {
				t.Run(m.String(), func(t *testing.T) {
					runFault(t, f, m)
				})
			}
		})
	}
}

func runFault(t *testing.T, f fault, m mode) {
	const producers, perProducer = 3, 40
	var addrs []string
	var c *kfake.Cluster
	var opts []kgo.Opt
	if f.sasl {
		addrs, c = clustertest.StartSASL(t)
		opts = kgoSASL(t)
	} else {
		addrs, c = clustertest.Start(t)
	}
	topic := clustertest.Topic(t)
	ensureTopic(t, addrs, topic, f.sasl)
	p := newProxy(t)
	fired := f.setup(c, p)
	l := newLedger()
	w := newWriter(addrs, topic, p, m, l, f.sasl)
	rng := rand.New(rand.NewSource(int64(len(t.Name()))))
	for producer := 0; producer < producers; producer++ {
		produceKeys(t, w, l, producer, perProducer, rng, false)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if fired() == 0 {
		t.Fatalf("the fault never struck")
	}
	logs := readLog(t, addrs, topic, opts...)
	// Each batch of a lost produce answer may be in the log twice: a
	// request carries a batch of each partition its broker leads.
	lost := p.Stats().UnansweredBatches
	v := check(t, l, logs, lost)
	if f.afterAppend && lost == 0 {
		t.Errorf("no produce answer was lost after the append")
	}
	if n := l.count(failed); n != 0 {
		t.Errorf("%d messages failed: %v", n, l.failures)
	}
	if n := l.count(delivered) + l.count(unknownOutcome); n != producers*perProducer {
		t.Errorf("%d messages accepted, want %d", n, producers*perProducer)
	}
	t.Logf("fault struck %d times; %d produce answers lost; %v", fired(), lost, v)
}
