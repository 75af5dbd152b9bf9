// Package loadgen is the client-independent half of the benchmark load
// generators: flag parsing, the producer and consumer scenarios, heap
// sampling and the JSON result. Each client module (fork, upstream, franz,
// sarama) links it with a small adapter and is built into its own binary
// by the bench tool, so that every client runs in a process of its own.
package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Scenario names understood by Run.
const (
	Throughput  = "throughput"
	SlowBroker  = "slow"
	Latency     = "latency"
	CreateTopic = "create-topic"
)

// Codecs are the compression codecs every client maps (besides "none"),
// named as Kafka's producer config names them.
var Codecs = []string{"zstd", "snappy", "lz4", "gzip"}

// Config describes one run. The bench tool passes it as flags.
type Config struct {
	Client      string
	Scenario    string
	Brokers     []string
	Topic       string
	Partitions  int
	Messages    int
	Size        int
	Compression string // "none" or one of Codecs
	// Duration bounds the slow-broker scenario: the producer writes as fast
	// as the client lets it (at most Messages) and the heap is sampled for
	// this long; then the process exits without draining.
	Duration time.Duration
	// Rate is the offered load of the slow-broker scenario in messages per
	// second (0: as fast as the client accepts). An offered load above what
	// the broker drains makes an unbounded client's heap grow steadily.
	Rate        int
	SampleEvery time.Duration
	// Warmup synchronous writes are sent before the timed ones (latency).
	Warmup int

	// Bounds of this project's Writer; the upstream build refuses them.
	MaxBufferedBatches int
	MaxBufferedBytes   int64
	// Semaphore, when positive, makes the kafka-go adapter admit at most
	// this many unacknowledged messages (released in Completion).
	Semaphore int
	// Sticky selects this project's Sticky balancer instead of RoundRobin
	// for the asynchronous Writer; the upstream build refuses it.
	Sticky bool
	// SnappyFast makes kafka-go's snappy codec use s2's fast snappy
	// encoder (snappy.FasterCompression), the effort franz-go uses;
	// kafka-go's default is the slower "better" encoder.
	SnappyFast bool
	// BatchSize, when positive, replaces the kafka-go adapters' BatchSize
	// of 1000 messages for the asynchronous Writer; a large one leaves
	// batches capped by BatchBytes alone, as franz-go's are by bytes.
	BatchSize int
	// SnappyUnframed makes kafka-go's snappy codec write each batch as one
	// bare snappy block (snappy.Unframed), as franz-go does, instead of the
	// xerial 32 KiB frames of the Java client and v0.4.51.
	SnappyUnframed bool

	// CPUProfile, when set, is a file to write a CPU profile of the run to.
	CPUProfile string
	// MemProfile, when set, is a file to write a heap profile to, half way
	// through a consumer scenario.
	MemProfile string
	// Group is the consumer group of the group consumer scenarios.
	Group string
	// CommitEvery is how many messages ConsumeGroupCommit reads between
	// two synchronous commits.
	CommitEvery int
	// KeepSamples keeps the heap series of a consumer scenario.
	KeepSamples bool
	// RoundRobin asks a synchronous producer to spread its messages over
	// every partition in turn (set for the trickle of the rebalance phase,
	// which every member must see), whatever the client's default.
	RoundRobin bool
	// Keyed gives every message of the throughput scenario a key (one of
	// 10007, in turn), so that the client's key hash spreads them over
	// every partition of the topic; the producer must be a KeyedProducer.
	Keyed bool
	// Topics, when above 1, spreads the throughput scenario's messages in
	// turn over the topics Topic-0 .. Topic-(Topics-1) (TopicName), each of
	// Partitions partitions; the producer must be a KeyedProducer.
	Topics int
}

// TopicName is the name of topic i of a multi-topic run.
func TopicName(base string, i int) string { return fmt.Sprintf("%s-%d", base, i) }

// Acker receives the outcome of n asynchronously produced messages.
type Acker func(n int, err error)

// Client builds producers for one client library.
type Client interface {
	Async(cfg Config, ack Acker) (AsyncProducer, error)
	Sync(cfg Config) (SyncProducer, error)
}

// AsyncProducer hands messages to the client without waiting for the
// broker. Produce may block when the client applies backpressure. Close
// flushes and returns once every accepted message has been acknowledged or
// has failed (and the Acker was told).
type AsyncProducer interface {
	Produce(ctx context.Context, value []byte) error
	Close() error
	Settings() string
}

// KeyedProducer is an AsyncProducer that can give a message a key and a
// topic of its own (the configured topic when topic is empty).
type KeyedProducer interface {
	ProduceKeyed(ctx context.Context, topic string, key, value []byte) error
}

// SyncProducer writes one message and returns once the broker answered.
type SyncProducer interface {
	Send(ctx context.Context, value []byte) error
	Close() error
	Settings() string
}

// TopicCreator is implemented by the adapter the bench tool uses to create
// the topic of a run before the run starts.
type TopicCreator interface {
	CreateTopic(ctx context.Context, cfg Config) error
}

// ParseFlags reads a Config from command-line arguments.
func ParseFlags(client string, args []string, stderr io.Writer) (Config, error) {
	fs := flag.NewFlagSet(client, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := Config{Client: client}
	var brokers string
	fs.StringVar(&cfg.Scenario, "scenario", Throughput, "throughput, slow, latency, idle, create-topic, "+ConsumePartition+", "+ConsumeGroupRead+" or "+ConsumeGroupCommit)
	fs.StringVar(&brokers, "brokers", "127.0.0.1:9092", "comma-separated bootstrap brokers")
	fs.StringVar(&cfg.Topic, "topic", "bench", "topic to write to")
	fs.IntVar(&cfg.Partitions, "partitions", 3, "partitions (create-topic; the consumers read them all)")
	fs.IntVar(&cfg.Messages, "messages", 100000, "messages to write (slow: at most)")
	fs.IntVar(&cfg.Size, "size", 100, "value size in bytes")
	fs.StringVar(&cfg.Compression, "compression", "none", "none, "+strings.Join(Codecs, ", "))
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Second, "slow: how long to produce and sample; consumers: how long reading everything may take; idle: how long to stay idle")
	fs.IntVar(&cfg.Rate, "rate", 0, "slow: offered messages per second (0 = unpaced)")
	fs.DurationVar(&cfg.SampleEvery, "sample", 50*time.Millisecond, "heap sampling interval")
	fs.IntVar(&cfg.Warmup, "warmup", 20, "latency: untimed writes first")
	fs.IntVar(&cfg.MaxBufferedBatches, "max-buffered-batches", 0, "Writer.MaxBufferedBatches (fork only)")
	fs.Int64Var(&cfg.MaxBufferedBytes, "max-buffered-bytes", 0, "Writer.MaxBufferedBytes (fork only)")
	fs.BoolVar(&cfg.Sticky, "sticky", false, "kafka-go: the Sticky balancer for unkeyed messages (fork only)")
	fs.BoolVar(&cfg.SnappyFast, "snappy-fast", false, "kafka-go: snappy.FasterCompression instead of the default encoder")
	fs.IntVar(&cfg.BatchSize, "batch-size", 0, "kafka-go: Writer.BatchSize of the asynchronous Writer (0: 1000)")
	fs.BoolVar(&cfg.SnappyUnframed, "snappy-unframed", false, "kafka-go: snappy.Unframed (one bare block per batch) instead of xerial frames")
	fs.IntVar(&cfg.Semaphore, "semaphore", 0, "kafka-go: unacknowledged messages admitted by an application semaphore")
	fs.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write a CPU profile of the run to this file (consumers: until the first member has read everything)")
	fs.StringVar(&cfg.MemProfile, "memprofile", "", "consumers: write a heap profile to this file when half the messages were read; throughput: at the end (its alloc_space covers the run)")
	fs.StringVar(&cfg.Group, "group", "", "consumer group of the group scenarios (default: the topic name + \"-group\")")
	fs.IntVar(&cfg.CommitEvery, "commit-every", 1000, "consume-group-commit: messages between two synchronous commits")
	fs.BoolVar(&cfg.KeepSamples, "keep-samples", false, "consumers: keep the heap series in the result")
	fs.BoolVar(&cfg.Keyed, "keyed", false, "throughput: keyed messages, spread over the partitions by the client's key hash")
	fs.IntVar(&cfg.Topics, "topics", 1, "throughput: messages in turn over this many topics, <topic>-0 ... (create-topic creates them)")
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for _, b := range strings.Split(brokers, ",") {
		if b = strings.TrimSpace(b); b != "" {
			cfg.Brokers = append(cfg.Brokers, b)
		}
	}
	switch {
	case len(cfg.Brokers) == 0:
		return Config{}, errors.New("-brokers is empty")
	case cfg.Messages < 1 || cfg.Size < 1:
		return Config{}, errors.New("-messages and -size must be positive")
	case cfg.Compression != "none" && !slices.Contains(Codecs, cfg.Compression):
		return Config{}, fmt.Errorf("-compression %q: want none, %s", cfg.Compression, strings.Join(Codecs, ", "))
	case cfg.SampleEvery <= 0:
		return Config{}, errors.New("-sample must be positive")
	case cfg.CommitEvery < 1:
		return Config{}, errors.New("-commit-every must be positive")
	}
	if cfg.Group == "" {
		cfg.Group = cfg.Topic + "-group"
	}
	return cfg, nil
}

// Main is the whole main function of a load generator: it parses the
// flags, runs the scenario and prints the Result as JSON on stdout. It
// exits without closing anything left blocked (the slow scenario ends while
// clients still hold unsent messages, on purpose).
func Main(client string, c Client) {
	cfg, err := ParseFlags(client, os.Args[1:], os.Stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	stopProfile := func() {}
	if cfg.CPUProfile != "" {
		f, err := os.Create(cfg.CPUProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "cpuprofile:", err)
			os.Exit(2)
		}
		stopProfile = func() { pprof.StopCPUProfile(); f.Close() }
	}
	res, err := Run(context.Background(), cfg, c)
	stopProfile()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s %s: %v\n", client, cfg.Scenario, err)
		os.Exit(1)
	}
	out, err := json.Marshal(res)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Stdout.Write(append(out, '\n'))
	os.Exit(0)
}

// Run executes one scenario.
func Run(ctx context.Context, cfg Config, c Client) (*Result, error) {
	res := &Result{
		Client:      cfg.Client,
		Scenario:    cfg.Scenario,
		Messages:    cfg.Messages,
		Size:        cfg.Size,
		Compression: cfg.Compression,
		OfferedRate: cfg.Rate,
	}
	switch cfg.Scenario {
	case Throughput:
		return res, runThroughput(ctx, cfg, c, res)
	case SlowBroker:
		return res, runSlow(ctx, cfg, c, res)
	case Latency:
		return res, runLatency(ctx, cfg, c, res)
	case ConsumePartition, ConsumeGroupRead, ConsumeGroupCommit:
		return res, runConsume(ctx, cfg, c, res)
	case Idle:
		return res, runIdle(ctx, cfg, c, res)
	case CreateTopic:
		tc, ok := c.(TopicCreator)
		if !ok {
			return nil, fmt.Errorf("client %s cannot create topics", cfg.Client)
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		return res, tc.CreateTopic(cctx, cfg)
	default:
		return nil, fmt.Errorf("unknown scenario %q", cfg.Scenario)
	}
}

// counters are shared by the producing loop, the Acker (called from client
// goroutines) and the sampler.
type counters struct {
	produced, acked, failed atomic.Int64
	errOnce                 sync.Once
	firstErr                string
}

func (c *counters) fail(n int, err error) {
	c.failed.Add(int64(n))
	c.errOnce.Do(func() { c.firstErr = err.Error() })
}

func (c *counters) ack(n int, err error) {
	if err != nil {
		c.fail(n, err)
		return
	}
	c.acked.Add(int64(n))
}

// buffered is what the client holds: accepted but not yet resolved.
func (c *counters) buffered() int64 {
	return c.produced.Load() - c.acked.Load() - c.failed.Load()
}

func (c *counters) fill(res *Result) {
	res.Produced = c.produced.Load()
	res.Acked = c.acked.Load()
	res.Failed = c.failed.Load()
	c.errOnce.Do(func() {}) // firstErr is final from here on
	res.FirstError = c.firstErr
}

func runThroughput(ctx context.Context, cfg Config, c Client, res *Result) error {
	if cfg.MemProfile != "" {
		runtime.MemProfileRate = 64 << 10
	}
	var cnt counters
	p, err := c.Async(cfg, cnt.ack)
	if err != nil {
		return err
	}
	res.Settings = p.Settings()
	produce := p.Produce
	if cfg.Keyed || cfg.Topics > 1 {
		kp, ok := p.(KeyedProducer)
		if !ok {
			return fmt.Errorf("client %s cannot produce keyed messages or to several topics", cfg.Client)
		}
		var keys [][]byte
		if cfg.Keyed {
			keys = make([][]byte, 10007)
			for i := range keys {
				keys[i] = []byte(fmt.Sprintf("key-%d", i))
			}
			res.Settings += ", keyed messages (10007 keys in turn)"
		}
		topics := []string{""}
		if cfg.Topics > 1 {
			topics = make([]string, cfg.Topics)
			for i := range topics {
				topics[i] = TopicName(cfg.Topic, i)
			}
			res.Settings += fmt.Sprintf(", messages in turn over %d topics", cfg.Topics)
		}
		n := 0
		produce = func(ctx context.Context, value []byte) error {
			var k []byte
			if keys != nil {
				k = keys[n%len(keys)]
			}
			t := topics[n%len(topics)]
			n++
			return kp.ProduceKeyed(ctx, t, k, value)
		}
	}
	vals := newValues(cfg.Size)
	s := startSampler(cfg.SampleEvery, &cnt, false)
	start := time.Now()
	for i := 0; i < cfg.Messages; i++ {
		if err := produce(ctx, vals.next()); err != nil {
			cnt.fail(0, fmt.Errorf("produce: %w", err))
			break
		}
		cnt.produced.Add(1)
	}
	cerr := p.Close()
	res.ElapsedSec = time.Since(start).Seconds()
	s.stop(res)
	if cerr != nil {
		cnt.fail(0, fmt.Errorf("close: %w", cerr))
	}
	cnt.fill(res)
	if cfg.MemProfile != "" {
		// The heap profile holds every allocation of the run (alloc_space).
		return writeHeapProfile(cfg.MemProfile)
	}
	return nil
}

func runSlow(ctx context.Context, cfg Config, c Client, res *Result) error {
	var cnt counters
	p, err := c.Async(cfg, cnt.ack)
	if err != nil {
		return err
	}
	res.Settings = p.Settings()
	vals := newValues(cfg.Size)
	ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	s := startSampler(cfg.SampleEvery, &cnt, true)
	start := time.Now()
	go func() {
		for i := 0; i < cfg.Messages && ctx.Err() == nil; i++ {
			if cfg.Rate > 0 {
				// Pace against the schedule, not the previous send, so a
				// client that blocked for a while is then offered the
				// backlog as an application would offer it. Short waits are
				// skipped: timers are too coarse for them, and bursts of a
				// millisecond are what real producers look like anyway.
				due := start.Add(time.Duration(float64(i) / float64(cfg.Rate) * float64(time.Second)))
				if d := time.Until(due); d > time.Millisecond {
					select {
					case <-time.After(d):
					case <-ctx.Done():
						return
					}
				}
			}
			// Not ctx: when the window closes, a client blocked in Produce
			// must stay blocked rather than fail messages that were never
			// the broker's fault (the process exits right after).
			if err := p.Produce(context.Background(), vals.next()); err != nil {
				cnt.fail(0, fmt.Errorf("produce: %w", err))
				return
			}
			cnt.produced.Add(1)
		}
	}()
	<-ctx.Done()
	res.ElapsedSec = time.Since(start).Seconds()
	s.stop(res)
	cnt.fill(res)
	return nil
}

func runLatency(ctx context.Context, cfg Config, c Client, res *Result) error {
	p, err := c.Sync(cfg)
	if err != nil {
		return err
	}
	res.Settings = p.Settings()
	var cnt counters
	vals := newValues(cfg.Size)
	for i := 0; i < cfg.Warmup; i++ {
		if err := p.Send(ctx, vals.next()); err != nil {
			return fmt.Errorf("warm-up write: %w", err)
		}
	}
	res.LatenciesUS = make([]float64, 0, cfg.Messages)
	start := time.Now()
	for i := 0; i < cfg.Messages; i++ {
		t0 := time.Now()
		err := p.Send(ctx, vals.next())
		d := time.Since(t0)
		cnt.produced.Add(1)
		if err != nil {
			cnt.fail(1, err)
			continue
		}
		cnt.acked.Add(1)
		res.LatenciesUS = append(res.LatenciesUS, float64(d.Nanoseconds())/1e3)
	}
	res.ElapsedSec = time.Since(start).Seconds()
	if err := p.Close(); err != nil {
		cnt.fail(0, fmt.Errorf("close: %w", err))
	}
	cnt.fill(res)
	return nil
}

// values hands out a freshly allocated value per message, as an
// application would: clients keep references to the values they buffer, so
// sharing one slice would hide exactly the memory this benchmark is about.
// The content is word salad, compressible roughly like text, so zstd has
// real work to do. Each value starts at a random offset of the pool: with
// offsets in a fixed stride, a partition's share of the values (every
// third one under RoundRobin) repeated sooner than the whole sequence, so
// how compressible a batch was depended on how the balancer spread the
// messages.
type values struct {
	size int
	pool []byte
	rand *rand.Rand
}

func newValues(size int) *values {
	words := []string{"kafka", "broker", "partition", "offset", "record", "batch",
		"producer", "consumer", "topic", "leader", "replica", "commit", "fetch",
		"2026", "event", "user", "order", "id", "status", "ok", "{", "}", ":", ","}
	r := rand.New(rand.NewPCG(1, 2))
	n := max(1<<16, 4*size)
	var sb strings.Builder
	for sb.Len() < n {
		sb.WriteString(words[r.IntN(len(words))])
		if r.IntN(4) == 0 {
			fmt.Fprintf(&sb, "%d", r.IntN(100000))
		}
		sb.WriteByte(' ')
	}
	return &values{size: size, pool: []byte(sb.String()), rand: rand.New(rand.NewPCG(3, 4))}
}

func (v *values) next() []byte {
	off := v.rand.IntN(len(v.pool) - v.size)
	b := make([]byte, v.size)
	copy(b, v.pool[off:])
	return b
}

// sampler polls the heap and the buffered count. runtime/metrics is used
// rather than ReadMemStats because it does not stop the world.
type sampler struct {
	done   chan struct{}
	wg     sync.WaitGroup
	mu     sync.Mutex
	series []Sample
	peakH  uint64
	peakB  int64
	peakG  int
	peakS  int
}

const heapMetric = "/memory/classes/heap/objects:bytes"

func startSampler(every time.Duration, cnt *counters, keep bool) *sampler {
	s := &sampler{done: make(chan struct{})}
	start := time.Now()
	m := []metrics.Sample{{Name: heapMetric}}
	take := func() {
		metrics.Read(m)
		var h uint64
		if m[0].Value.Kind() == metrics.KindUint64 {
			h = m[0].Value.Uint64()
		}
		a := cnt.acked.Load()
		b := cnt.buffered()
		g, sk := runtime.NumGoroutine(), openSockets()
		s.mu.Lock()
		s.peakH = max(s.peakH, h)
		s.peakB = max(s.peakB, b)
		s.peakG = max(s.peakG, g)
		s.peakS = max(s.peakS, sk)
		if keep {
			s.series = append(s.series, Sample{
				TMs:       float64(time.Since(start).Microseconds()) / 1e3,
				HeapBytes: h,
				Buffered:  b,
				Acked:     a,
			})
		}
		s.mu.Unlock()
	}
	take()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.done:
				take()
				return
			case <-t.C:
				take()
			}
		}
	}()
	return s
}

func (s *sampler) stop(res *Result) {
	close(s.done)
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	res.Samples = s.series
	res.PeakHeapBytes = s.peakH
	res.PeakBuffered = s.peakB
	res.PeakGoroutines = s.peakG
	res.PeakSockets = s.peakS
}

// openSockets counts the process's open sockets (Linux: the entries of
// /proc/self/fd that are sockets; 0 elsewhere): its connections to the
// brokers, since a load generator opens no other.
func openSockets() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(target, "socket:") {
			n++
		}
	}
	return n
}
