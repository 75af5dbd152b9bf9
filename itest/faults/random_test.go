package faults_test

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/segmentio/kafka-go/internal/faultproxy"
	"github.com/segmentio/kafka-go/itest/clustertest"
)

// Environment variables of TestWriterRandomFaults.
const (
	envSeed     = "KAFKA_FAULT_SEED"     // replays a run (the seed is logged)
	envDuration = "KAFKA_FAULT_DURATION" // total time for the rounds, a Go duration (default 20s)
)

// lockedRand is a rand.Rand shared by the goroutines of the proxy and of
// kfake's control functions.
type lockedRand struct {
	mu  sync.Mutex
	rng *rand.Rand
}

func (r *lockedRand) chance(p float64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rng.Float64() < p
}

func (r *lockedRand) intn(n int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rng.Intn(n)
}

// roundConfig is one round: a mode of the Writer and how often each fault
// strikes.
type roundConfig struct {
	mode
	seed int64
	// per produce request, at the proxy
	closeBefore, resetBefore, closeAfter, resetAfter float64
	// per handshake request (ApiVersions), at the proxy
	handshake float64
	// per dial
	refuse float64
	// per produce request, in kfake: close the connection, or answer a
	// retriable error code
	kfakeClose, kfakeRetriable float64
	// pause between two leader moves (0: none)
	moveEvery time.Duration
	// ctx timeouts on WriteMessages calls
	timeouts bool
	// MaxBufferedBytes when bounded; small values make callers wait, and
	// so give up (refusals).
	maxBytes int64
	// how long the proxy holds each produce request
	produceDelay time.Duration
}

func (c roundConfig) String() string {
	return fmt.Sprintf("%v seed=%d before=%.2f/%.2f after=%.2f/%.2f handshake=%.2f refuse=%.2f kfake=%.2f/%.2f moves=%v timeouts=%v maxBytes=%d delay=%v",
		c.mode, c.seed, c.closeBefore, c.resetBefore, c.closeAfter, c.resetAfter, c.handshake, c.refuse,
		c.kfakeClose, c.kfakeRetriable, c.moveEvery, c.timeouts, c.maxBytes, c.produceDelay)
}

func randomRound(rng *rand.Rand) roundConfig {
	p := func(max float64) float64 {
		if rng.Intn(3) == 0 {
			return 0 // this fault is off for the round
		}
		return rng.Float64() * max
	}
	c := roundConfig{
		mode:           mode{async: rng.Intn(2) == 0, bounded: rng.Intn(2) == 0, completion: rng.Intn(2) == 0},
		seed:           rng.Int63(),
		closeBefore:    p(0.05),
		resetBefore:    p(0.05),
		closeAfter:     p(0.05),
		resetAfter:     p(0.05),
		handshake:      p(0.15),
		refuse:         p(0.15),
		kfakeClose:     p(0.03),
		kfakeRetriable: p(0.06),
		timeouts:       rng.Intn(2) == 0,
		maxBytes:       int64(512 + rng.Intn(8192)),
		produceDelay:   time.Duration(rng.Intn(3)) * time.Duration(rng.Intn(3000)) * time.Microsecond,
	}
	if rng.Intn(3) != 0 {
		c.moveEvery = time.Duration(20+rng.Intn(80)) * time.Millisecond
	}
	return c
}

// A seeded random mix of every fault, leader moves and callers giving up,
// in random modes of the Writer, for a bounded time. The seed is logged;
// KAFKA_FAULT_SEED replays it (the faults hit the same requests as far as
// the goroutines' interleaving allows) and KAFKA_FAULT_DURATION changes
// the time spent. Round N's configuration depends only on the seed, so
// KAFKA_FAULT_SEED=S go test -run 'TestWriterRandomFaults/roundN$' runs it
// alone (the other rounds are skipped at once).
func TestWriterRandomFaults(t *testing.T) {
	seed := time.Now().UnixNano()
	if s := os.Getenv(envSeed); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", envSeed, s, err)
		}
		seed = v
	}
	budget := 20 * time.Second
	if s := os.Getenv(envDuration); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("%s=%q: %v", envDuration, s, err)
		}
		budget = d
	}
	t.Logf("seed %d (replay with %s=%d)", seed, envSeed, seed)
	rng := rand.New(rand.NewSource(seed))
	end := time.Now().Add(budget)
	for round := 0; round < 2 || time.Now().Before(end); round++ {
		cfg := randomRound(rng)
		ok := t.Run(fmt.Sprintf("round%d", round), func(t *testing.T) {
			t.Logf("%v", cfg)
			runRandomRound(t, cfg)
		})
		if !ok {
			t.Logf("round %d failed; replay with %s=%d go test -run 'TestWriterRandomFaults/round%d$'", round, envSeed, seed, round)
			return
		}
	}
}

func runRandomRound(t *testing.T, cfg roundConfig) {
	const producers, perProducer = 3, 200
	const roundTime = 2 * time.Second
	addrs, c := clustertest.Start(t)
	topic := clustertest.Topic(t)
	ensureTopic(t, addrs, topic, false)
	r := &lockedRand{rng: rand.New(rand.NewSource(cfg.seed))}

	p := newProxy(t)
	p.SetRefuse(func(string) bool { return r.chance(cfg.refuse) })
	p.SetRule(func(req faultproxy.Request) faultproxy.Action {
		switch req.ApiKey {
		case keyProduce:
			// A slow broker, made by the proxy: kfake's SleepControl
			// has a data race of its own (kfake cluster.go, bsleep).
			time.Sleep(cfg.produceDelay)
			switch {
			case r.chance(cfg.closeBefore):
				return faultproxy.CloseBefore
			case r.chance(cfg.resetBefore):
				return faultproxy.ResetBefore
			case r.chance(cfg.closeAfter):
				return faultproxy.CloseAfter
			case r.chance(cfg.resetAfter):
				return faultproxy.ResetAfter
			}
		case keyApiVersions:
			if r.chance(cfg.handshake) {
				if r.intn(2) == 0 {
					return faultproxy.CloseBefore
				}
				return faultproxy.ResetAfter
			}
		}
		return faultproxy.Forward
	})
	var kfakeFired sync.Map
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		switch {
		case r.chance(cfg.kfakeClose):
			kfakeFired.Store("close", true)
			return nil, errProduceControl, true
		case r.chance(cfg.kfakeRetriable):
			kfakeFired.Store("retriable", true)
			codes := []int16{6, 5, 7} // NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE, REQUEST_TIMED_OUT
			return produceErrorResponse(req.(*kmsg.ProduceRequest), codes[r.intn(len(codes))]), nil, true
		}
		return nil, nil, false
	})

	stopMoves := make(chan struct{})
	movesDone := make(chan int)
	go func() {
		moves := 0
		defer func() { movesDone <- moves }()
		if cfg.moveEvery == 0 {
			return
		}
		for {
			select {
			case <-stopMoves:
				return
			case <-time.After(cfg.moveEvery):
			}
			part := int32(r.intn(clustertest.Partitions))
			next := (c.LeaderFor(topic, part) + 1 + int32(r.intn(2))) % 3
			if err := c.MoveTopicPartition(topic, part, next); err == nil {
				moves++
			}
		}
	}()

	l := newLedger()
	w := newWriter(addrs, topic, p, cfg.mode, l, false)
	if cfg.bounded {
		w.MaxBufferedBytes = cfg.maxBytes
	}
	deadline := time.Now().Add(roundTime)
	var wg sync.WaitGroup
	for producer := 0; producer < producers; producer++ {
		wg.Add(1)
		seed := int64(r.intn(1 << 30))
		go func(producer int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed))
			// In slices of 20, so that the round stops on time.
			for seq := 0; seq < perProducer && time.Now().Before(deadline); seq += 20 {
				produceRange(t, w, l, producer, seq, seq+20, rng, cfg.timeouts)
			}
		}(producer)
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	close(stopMoves)
	moves := <-movesDone
	p.SetRule(nil)
	p.SetRefuse(nil)

	logs := readLog(t, addrs, topic)
	s := p.Stats()
	// Each batch of a lost produce answer may be in the log twice: a
	// request carries a batch of each partition its broker leads.
	lost := s.UnansweredBatches
	v := check(t, l, logs, lost)
	t.Logf("accepted %d (delivered %d), refused %d, failed %d; proxy %+v; kfake faults %v; %d leader moves; %d produce answers lost carrying %d batches; %v",
		l.count(delivered)+l.count(unknownOutcome)+l.count(failed), l.count(delivered), l.count(refused), l.count(failed),
		s.Fired, kfakeKeys(&kfakeFired), moves, s.Unanswered[keyProduce], lost, v)
	if n := l.count(failed); n != 0 {
		// Every fault here is transient, and strikes an attempt with a
		// probability below one half: 30 attempts in a row fail with a
		// probability below 1e-9. A failure means an error that the
		// Writer did not retry.
		t.Errorf("%d messages reported failed: %v", n, l.failures)
	}
}

func kfakeKeys(m *sync.Map) []string {
	var keys []string
	m.Range(func(k, _ any) bool { keys = append(keys, k.(string)); return true })
	return keys
}
