package loadgen

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"
)

// fakeClient acknowledges asynchronously from its own goroutine, like the
// real clients, and can be made to block Produce after a number of
// messages (backpressure) or to fail some of them.
type fakeClient struct {
	blockAfter int
	failEvery  int

	mu    sync.Mutex
	sizes map[int]int
}

type fakeAsync struct {
	c    *fakeClient
	ack  Acker
	wg   sync.WaitGroup
	n    int
	stop chan struct{}
}

func (c *fakeClient) Async(cfg Config, ack Acker) (AsyncProducer, error) {
	return &fakeAsync{c: c, ack: ack, stop: make(chan struct{})}, nil
}

func (p *fakeAsync) Produce(ctx context.Context, v []byte) error {
	p.n++
	if p.c.blockAfter > 0 && p.n > p.c.blockAfter {
		<-ctx.Done() // never returns in the slow scenario: Background
		return ctx.Err()
	}
	p.c.mu.Lock()
	if p.c.sizes == nil {
		p.c.sizes = map[int]int{}
	}
	p.c.sizes[len(v)]++
	p.c.mu.Unlock()
	var err error
	if p.c.failEvery > 0 && p.n%p.c.failEvery == 0 {
		err = errors.New("injected")
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.ack(1, err)
	}()
	return nil
}

func (p *fakeAsync) Close() error     { p.wg.Wait(); return nil }
func (p *fakeAsync) Settings() string { return "fake" }

type fakeSync struct{ calls int }

func (c *fakeClient) Sync(cfg Config) (SyncProducer, error) { return &fakeSync{}, nil }
func (s *fakeSync) Send(ctx context.Context, v []byte) error {
	s.calls++
	time.Sleep(10 * time.Microsecond)
	return nil
}
func (s *fakeSync) Close() error     { return nil }
func (s *fakeSync) Settings() string { return "fake sync" }

func cfg(scenario string, n int) Config {
	return Config{Client: "fake", Scenario: scenario, Brokers: []string{"x"}, Messages: n, Size: 100,
		Compression: "none", SampleEvery: 5 * time.Millisecond, Duration: 100 * time.Millisecond}
}

func TestThroughputCountsEveryAck(t *testing.T) {
	c := &fakeClient{}
	res, err := Run(context.Background(), cfg(Throughput, 5000), c)
	if err != nil {
		t.Fatal(err)
	}
	if res.Produced != 5000 || res.Acked != 5000 || res.Failed != 0 || res.FirstError != "" {
		t.Fatalf("result %+v", res)
	}
	if res.ElapsedSec <= 0 || res.PeakHeapBytes == 0 || res.Settings != "fake" || res.Samples != nil {
		t.Fatalf("result %+v", res)
	}
	if c.sizes[100] != 5000 {
		t.Fatalf("value sizes %v", c.sizes)
	}
}

func TestThroughputReportsFailures(t *testing.T) {
	res, err := Run(context.Background(), cfg(Throughput, 1000), &fakeClient{failEvery: 10})
	if err != nil {
		t.Fatal(err)
	}
	if res.Acked != 900 || res.Failed != 100 || res.FirstError != "injected" {
		t.Fatalf("acked %d failed %d err %q", res.Acked, res.Failed, res.FirstError)
	}
}

func TestSlowStopsWithoutFailingBlockedMessages(t *testing.T) {
	res, err := Run(context.Background(), cfg(SlowBroker, 1_000_000), &fakeClient{blockAfter: 300})
	if err != nil {
		t.Fatal(err)
	}
	if res.Produced != 300 || res.Failed != 0 || res.FirstError != "" {
		t.Fatalf("produced %d failed %d err %q", res.Produced, res.Failed, res.FirstError)
	}
	if len(res.Samples) < 5 {
		t.Fatalf("%d samples in 100ms at 5ms", len(res.Samples))
	}
	for i := 1; i < len(res.Samples); i++ {
		if res.Samples[i].TMs < res.Samples[i-1].TMs {
			t.Fatalf("samples out of order: %+v", res.Samples)
		}
	}
}

func TestSlowPacing(t *testing.T) {
	c := cfg(SlowBroker, 1_000_000)
	c.Rate = 1000 // 100 messages in the 100ms window
	res, err := Run(context.Background(), c, &fakeClient{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Produced < 50 || res.Produced > 150 {
		t.Fatalf("produced %d at 1000/s in 100ms", res.Produced)
	}
}

func TestLatency(t *testing.T) {
	res, err := Run(context.Background(), cfg(Latency, 50), &fakeClient{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.LatenciesUS) != 50 || res.Acked != 50 {
		t.Fatalf("%d latencies, acked %d", len(res.LatenciesUS), res.Acked)
	}
	for _, l := range res.LatenciesUS {
		if l < 10 {
			t.Fatalf("latency %vus shorter than the 10us send", l)
		}
	}
}

func TestCreateTopicNeedsCreator(t *testing.T) {
	if _, err := Run(context.Background(), cfg(CreateTopic, 1), &fakeClient{}); err == nil {
		t.Fatal("fake client without CreateTopic accepted")
	}
}

func TestParseFlags(t *testing.T) {
	c, err := ParseFlags("x", []string{"-brokers", "a:1, b:2,", "-compression", "zstd", "-max-buffered-batches", "3"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Brokers) != 2 || c.Brokers[1] != "b:2" || c.Compression != "zstd" || c.MaxBufferedBatches != 3 {
		t.Fatalf("%+v", c)
	}
	for _, codec := range Codecs {
		if c, err := ParseFlags("x", []string{"-compression", codec}, io.Discard); err != nil || c.Compression != codec {
			t.Errorf("-compression %s: %v", codec, err)
		}
	}
	for _, args := range [][]string{{"-compression", "brotli"}, {"-brokers", ","}, {"-messages", "0"}, {"extra"}} {
		if _, err := ParseFlags("x", args, io.Discard); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}

func TestValuesAreFreshAndSized(t *testing.T) {
	v := newValues(1024)
	a, b := v.next(), v.next()
	if len(a) != 1024 || len(b) != 1024 || &a[0] == &b[0] {
		t.Fatal("values not fresh slices of the requested size")
	}
	if string(a) == string(b) {
		t.Fatal("consecutive values identical")
	}
}
