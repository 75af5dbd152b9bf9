package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

const (
	LastOffset  int64 = -1 // The most recent offset available for a partition.
	FirstOffset int64 = -2 // The least recent offset available for a partition.
)

// Defaults of ReaderConfig.
const (
	readerDefaultQueueCapacity    = 100
	readerDefaultMinBytes         = 1
	readerDefaultMaxBytes         = 1e6
	readerDefaultMaxWait          = 10 * time.Second
	readerDefaultReadBatchTimeout = 10 * time.Second
	readerDefaultReadLagInterval  = time.Minute
	readerDefaultBackoffMin       = 100 * time.Millisecond
	readerDefaultBackoffMax       = time.Second
	readerDefaultMaxAttempts      = 3

	// Attempts and delays of a commit before its error is reported.
	readerCommitAttempts   = 3
	readerCommitBackoffMin = 100 * time.Millisecond
	readerCommitBackoffMax = 5 * time.Second
)

var (
	errOnlyAvailableWithGroup = errors.New("unavailable when GroupID is not set")
	errNotAvailableWithGroup  = errors.New("unavailable when GroupID is set")
)

// Reader consumes messages from Kafka: from one partition (ReaderConfig.
// Partition), or as a member of a consumer group (ReaderConfig.GroupID),
// which spreads the partitions of its topics over its members and stores
// their offsets.
//
// Connections are retried as needed; blocking calls take a context.
//
// Close the Reader when done with it: a group member that disappears without
// leaving holds its partitions until its session times out, delaying the
// others. Programs that may be stopped by a signal should close it from a
// signal handler.
type Reader struct {
	config ReaderConfig

	// msgs carries messages and errors from the partition readers to
	// FetchMessage; its capacity is QueueCapacity.
	msgs chan readerMessage

	// The transport all requests go through, its cluster address, and the
	// function that closes it.
	client         Client
	closeTransport context.CancelFunc

	mutex   sync.Mutex
	join    sync.WaitGroup     // the partition readers of the current version
	cancel  context.CancelFunc // stops the partition readers of the current version
	stop    context.CancelFunc // ends stctx, on Close
	done    chan struct{}      // closed when the group loop returns
	commits chan commitRequest
	version int64 // incremented each time partition readers are (re)started
	offset  int64
	lag     int64
	closed  bool

	// runError reports errors of the group loop (failing to get a
	// generation) to a waiting FetchMessage; sends never block.
	runError chan error

	once  uint32 // set once the read lag loop was started (or must not be)
	stctx context.Context
	stats *readerStats
}

// ReaderConfig configures a Reader.
type ReaderConfig struct {
	// Brokers are addresses of brokers of the cluster.
	Brokers []string

	// GroupID makes the Reader a member of this consumer group. Partition
	// must then be left zero.
	GroupID string

	// GroupTopics are the topics a group reader consumes, when there are
	// several; Topic is used otherwise. Only with GroupID.
	GroupTopics []string

	// Topic is the topic to read from.
	Topic string

	// Partition is the partition to read from, without GroupID.
	Partition int

	// Dialer configures the connections (client ID, TLS, SASL, resolver,
	// timeouts). DefaultDialer when nil.
	Dialer *Dialer

	// QueueCapacity is the number of messages fetched ahead of
	// FetchMessage. Default: 100.
	QueueCapacity int

	// MinBytes is the amount of data a broker waits for (up to MaxWait)
	// before it answers a fetch. A high value on a quiet topic delays
	// delivery. Default: 1.
	MinBytes int

	// MaxBytes bounds the size of a fetch response. A message larger than
	// this is still returned, alone, by recent brokers. Default: 1MB.
	MaxBytes int

	// MaxWait is how long a broker holds a fetch waiting for MinBytes of
	// data. Default: 10s.
	MaxWait time.Duration

	// ReadBatchTimeout bounds the time spent receiving a fetch response
	// beyond MaxWait. Default: 10s.
	ReadBatchTimeout time.Duration

	// ReadLagInterval is how often a partition reader updates the lag
	// reported by Stats; negative disables it. Default: 1m.
	ReadLagInterval time.Duration

	// GroupBalancers are the partition assignment strategies offered to the
	// group, in order of preference. Only with GroupID.
	//
	// Default: [Range, RoundRobin]
	GroupBalancers []GroupBalancer

	// HeartbeatInterval is how often the member heartbeats to the group
	// coordinator. Only with GroupID. Default: 3s.
	HeartbeatInterval time.Duration

	// CommitInterval, when non-zero, makes CommitMessages return at once
	// and the offsets be committed periodically (and on Close). Zero makes
	// commits synchronous. Only with GroupID. Default: 0.
	CommitInterval time.Duration

	// PartitionWatchInterval is how often partition counts are checked when
	// WatchPartitionChanges is set. Only with GroupID. Default: 5s.
	PartitionWatchInterval time.Duration

	// WatchPartitionChanges makes the group rebalance when partitions are
	// added to its topics.
	WatchPartitionChanges bool

	// SessionTimeout is how long the coordinator keeps a silent member in
	// the group. Only with GroupID. Default: 30s.
	SessionTimeout time.Duration

	// RebalanceTimeout is how long the coordinator waits for members to
	// rejoin during a rebalance. Only with GroupID. Default: 30s.
	RebalanceTimeout time.Duration

	// JoinGroupBackoff is the pause before joining again after an error.
	// Default: 5s.
	JoinGroupBackoff time.Duration

	// RetentionTime is how long the broker keeps the group's offsets; -1
	// leaves it to the broker. Only with GroupID. Default: -1.
	RetentionTime time.Duration

	// StartOffset is where a group member starts reading a partition that
	// has no committed offset: FirstOffset or LastOffset. Only with GroupID.
	// Default: FirstOffset.
	StartOffset int64

	// ReadBackoffMin and ReadBackoffMax bound the pause between fetches
	// after errors. Defaults: 100ms and 1s.
	ReadBackoffMin time.Duration
	ReadBackoffMax time.Duration

	// Logger, when set, receives messages about what the reader does.
	Logger Logger

	// ErrorLogger, when set, receives the errors; Logger is used otherwise.
	ErrorLogger Logger

	// IsolationLevel is ReadUncommitted (all records) or ReadCommitted
	// (records of aborted transactions are skipped, and reading stops at
	// open transactions).
	IsolationLevel IsolationLevel

	// MaxAttempts is how many times setting up a partition reader fails
	// before its error is returned by FetchMessage. Default: 3.
	MaxAttempts int

	// OffsetOutOfRangeError makes the reader return OffsetOutOfRange when
	// its starting offset is out of range, instead of retrying until it is.
	OffsetOutOfRangeError bool
}

// Validate checks the configuration, with the errors NewReader panics with.
func (config *ReaderConfig) Validate() error {
	if len(config.Brokers) == 0 {
		return errors.New("cannot create a new kafka reader with an empty list of broker addresses")
	}
	if config.Partition < 0 || config.Partition >= math.MaxInt32 {
		return fmt.Errorf("partition number out of bounds: %d", config.Partition)
	}
	if config.MinBytes < 0 {
		return fmt.Errorf("invalid negative minimum batch size (min = %d)", config.MinBytes)
	}
	if config.MaxBytes < 0 {
		return fmt.Errorf("invalid negative maximum batch size (max = %d)", config.MaxBytes)
	}
	switch {
	case config.GroupID != "" && config.Partition != 0:
		return errors.New("either Partition or GroupID may be specified, but not both")
	case config.GroupID != "" && config.Topic == "" && len(config.GroupTopics) == 0:
		return errors.New("either Topic or GroupTopics must be specified with GroupID")
	case config.GroupID == "" && config.Topic == "":
		return errors.New("cannot create a new kafka reader with an empty topic")
	}
	if config.MinBytes > config.MaxBytes {
		return fmt.Errorf("minimum batch size greater than the maximum (min = %d, max = %d)", config.MinBytes, config.MaxBytes)
	}
	if config.ReadBackoffMax < 0 {
		return fmt.Errorf("ReadBackoffMax out of bounds: %d", config.ReadBackoffMax)
	}
	if config.ReadBackoffMin < 0 {
		return fmt.Errorf("ReadBackoffMin out of bounds: %d", config.ReadBackoffMin)
	}
	return nil
}

// ReaderStats is a snapshot of a Reader's activity, from Reader.Stats.
// Counters and summaries cover the time since the previous snapshot.
type ReaderStats struct {
	Dials      int64 `metric:"kafka.reader.dial.count"      type:"counter"`
	Fetches    int64 `metric:"kafka.reader.fetch.count"     type:"counter"`
	Messages   int64 `metric:"kafka.reader.message.count"   type:"counter"`
	Bytes      int64 `metric:"kafka.reader.message.bytes"   type:"counter"`
	Rebalances int64 `metric:"kafka.reader.rebalance.count" type:"counter"`
	Timeouts   int64 `metric:"kafka.reader.timeout.count"   type:"counter"`
	Errors     int64 `metric:"kafka.reader.error.count"     type:"counter"`

	DialTime   DurationStats `metric:"kafka.reader.dial.seconds"`
	ReadTime   DurationStats `metric:"kafka.reader.read.seconds"`
	WaitTime   DurationStats `metric:"kafka.reader.wait.seconds"`
	FetchSize  SummaryStats  `metric:"kafka.reader.fetch.size"`
	FetchBytes SummaryStats  `metric:"kafka.reader.fetch.bytes"`

	Offset        int64         `metric:"kafka.reader.offset"          type:"gauge"`
	Lag           int64         `metric:"kafka.reader.lag"             type:"gauge"`
	MinBytes      int64         `metric:"kafka.reader.fetch_bytes.min" type:"gauge"`
	MaxBytes      int64         `metric:"kafka.reader.fetch_bytes.max" type:"gauge"`
	MaxWait       time.Duration `metric:"kafka.reader.fetch_wait.max"  type:"gauge"`
	QueueLength   int64         `metric:"kafka.reader.queue.length"    type:"gauge"`
	QueueCapacity int64         `metric:"kafka.reader.queue.capacity"  type:"gauge"`

	ClientID  string `tag:"client_id"`
	Topic     string `tag:"topic"`
	Partition string `tag:"partition"`

	// DeprecatedFetchesWithTypo repeats Fetches under the misspelled metric
	// name that older releases used, for dashboards that still rely on it.
	DeprecatedFetchesWithTypo int64 `metric:"kafak.reader.fetch.count" type:"counter"`
}

// readerStats accumulates the statistics of a Reader with atomic operations.
type readerStats struct {
	dials      counter
	fetches    counter
	messages   counter
	bytes      counter
	rebalances counter
	timeouts   counter
	errors     counter
	dialTime   summary
	readTime   summary
	waitTime   summary
	fetchSize  summary
	fetchBytes summary
	offset     gauge
	lag        gauge
	partition  string
}

// NewReader returns a Reader configured with config. It panics when config
// is invalid (see ReaderConfig.Validate). A partition reader starts at
// FirstOffset; call SetOffset to start elsewhere.
func NewReader(config ReaderConfig) *Reader {
	if err := config.Validate(); err != nil {
		panic(err)
	}
	if config.GroupID != "" && len(config.GroupBalancers) == 0 {
		config.GroupBalancers = []GroupBalancer{RangeGroupBalancer{}, RoundRobinGroupBalancer{}}
	}
	if config.Dialer == nil {
		config.Dialer = DefaultDialer
	}
	if config.MaxBytes == 0 {
		config.MaxBytes = readerDefaultMaxBytes
	}
	if config.MinBytes == 0 {
		config.MinBytes = readerDefaultMinBytes
	}
	cgDefaultDuration(&config.MaxWait, readerDefaultMaxWait)
	cgDefaultDuration(&config.ReadBatchTimeout, readerDefaultReadBatchTimeout)
	cgDefaultDuration(&config.ReadLagInterval, readerDefaultReadLagInterval)
	cgDefaultDuration(&config.ReadBackoffMin, readerDefaultBackoffMin)
	cgDefaultDuration(&config.ReadBackoffMax, readerDefaultBackoffMax)
	if config.ReadBackoffMax < config.ReadBackoffMin {
		panic(fmt.Errorf("ReadBackoffMax %d smaller than ReadBackoffMin %d", config.ReadBackoffMax, config.ReadBackoffMin))
	}
	if config.QueueCapacity == 0 {
		config.QueueCapacity = readerDefaultQueueCapacity
	}
	if config.MaxAttempts == 0 {
		config.MaxAttempts = readerDefaultMaxAttempts
	}

	statsPartition := config.Partition
	version := int64(0)
	if config.GroupID != "" {
		// Group readers report no partition, and start at version 1 so
		// that only rebalances start partition readers.
		statsPartition = -1
		version = 1
	}

	tctx, tcancel := context.WithCancel(context.Background())
	stctx, stop := context.WithCancel(context.Background())
	r := &Reader{
		config:         config,
		msgs:           make(chan readerMessage, config.QueueCapacity),
		closeTransport: tcancel,
		cancel:         func() {},
		commits:        make(chan commitRequest, config.QueueCapacity),
		stop:           stop,
		offset:         FirstOffset,
		stctx:          stctx,
		stats: &readerStats{
			dialTime:   makeSummary(),
			readTime:   makeSummary(),
			waitTime:   makeSummary(),
			fetchSize:  makeSummary(),
			fetchBytes: makeSummary(),
			partition:  strconv.Itoa(statsPartition),
		},
		version: version,
	}
	transport := newDialerTransport(tctx, config.Dialer)
	r.client = Client{Addr: TCP(config.Brokers...), Transport: transport}

	if r.useConsumerGroup() {
		r.done = make(chan struct{})
		r.runError = make(chan error)
		cg, err := NewConsumerGroup(ConsumerGroupConfig{
			ID:                     config.GroupID,
			Brokers:                config.Brokers,
			Dialer:                 config.Dialer,
			Topics:                 r.getTopics(),
			GroupBalancers:         config.GroupBalancers,
			HeartbeatInterval:      config.HeartbeatInterval,
			PartitionWatchInterval: config.PartitionWatchInterval,
			WatchPartitionChanges:  config.WatchPartitionChanges,
			SessionTimeout:         config.SessionTimeout,
			RebalanceTimeout:       config.RebalanceTimeout,
			JoinGroupBackoff:       config.JoinGroupBackoff,
			RetentionTime:          config.RetentionTime,
			StartOffset:            config.StartOffset,
			Logger:                 config.Logger,
			ErrorLogger:            config.ErrorLogger,
			transport:              transport,
		})
		if err != nil {
			tcancel()
			stop()
			panic(err)
		}
		go r.run(cg)
	}
	return r
}

func (r *Reader) useConsumerGroup() bool { return r.config.GroupID != "" }

func (r *Reader) useSyncCommits() bool { return r.config.CommitInterval == 0 }

func (r *Reader) getTopics() []string {
	if len(r.config.GroupTopics) > 0 {
		return append([]string(nil), r.config.GroupTopics...)
	}
	return []string{r.config.Topic}
}

// Config returns the configuration of the reader, defaults filled in.
func (r *Reader) Config() ReaderConfig {
	return r.config
}

// Close stops the reader: partition readers stop, a group member commits
// what is pending and leaves its group, connections are closed. Later calls
// to FetchMessage return io.EOF.
func (r *Reader) Close() error {
	atomic.StoreUint32(&r.once, 1)

	r.mutex.Lock()
	closed := r.closed
	r.closed = true
	cancel := r.cancel
	r.mutex.Unlock()

	cancel()
	r.stop()
	r.join.Wait()
	if r.done != nil {
		<-r.done
	}
	if !closed {
		close(r.msgs)
		r.closeTransport()
	}
	return nil
}

// ReadMessage returns the next message, waiting for one if needed, and
// for a group reader commits its offset before returning it (so the
// message counts as consumed even if the program fails to process it: use
// FetchMessage and CommitMessages for at-least-once processing).
//
// It returns io.EOF once the reader is closed.
func (r *Reader) ReadMessage(ctx context.Context) (Message, error) {
	m, err := r.FetchMessage(ctx)
	if err != nil {
		return Message{}, fmt.Errorf("fetching message: %w", err)
	}
	if r.useConsumerGroup() {
		if err := r.CommitMessages(ctx, m); err != nil {
			return Message{}, fmt.Errorf("committing message: %w", err)
		}
	}
	return m, nil
}

// FetchMessage returns the next message, waiting for one if needed, without
// committing it (see CommitMessages).
//
// It returns io.EOF once the reader is closed.
func (r *Reader) FetchMessage(ctx context.Context) (Message, error) {
	r.activateReadLag()
	for {
		r.mutex.Lock()
		if !r.closed && r.version == 0 {
			r.start(r.getTopicPartitionOffset())
		}
		version := r.version
		r.mutex.Unlock()

		select {
		case <-ctx.Done():
			return Message{}, ctx.Err()

		case err := <-r.runError:
			return Message{}, err

		case m, ok := <-r.msgs:
			if !ok {
				return Message{}, io.EOF
			}
			if m.version < version {
				// Left over from partition readers replaced since (SetOffset,
				// rebalance).
				continue
			}
			r.mutex.Lock()
			if m.error == nil && version == r.version {
				r.offset = m.message.Offset + 1
				r.lag = m.watermark - r.offset
			}
			r.mutex.Unlock()
			if errors.Is(m.error, io.EOF) {
				// io.EOF means "reader closed" to callers; an EOF from below
				// is something else.
				m.error = io.ErrUnexpectedEOF
			}
			return m.message, m.error
		}
	}
}

// CommitMessages commits the offsets of msgs for the reader's group: the
// next read of each partition starts after the highest message given for
// it, so committing the last message of a partition commits all before it.
//
// With CommitInterval set the commit happens in the background and the
// call returns at once; otherwise it waits for the coordinator's answer.
func (r *Reader) CommitMessages(ctx context.Context, msgs ...Message) error {
	if !r.useConsumerGroup() {
		return errOnlyAvailableWithGroup
	}
	if r.stctx.Err() != nil {
		return io.ErrClosedPipe
	}
	req := commitRequest{commits: makeCommits(msgs...)}
	var errch chan error
	if r.useSyncCommits() {
		errch = make(chan error, 1)
		req.errch = errch
	}
	select {
	case r.commits <- req:
	case <-ctx.Done():
		return ctx.Err()
	case <-r.stctx.Done():
		return io.ErrClosedPipe
	}
	if errch == nil {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case err := <-errch:
		return err
	case <-r.stctx.Done():
		// Closed while waiting: the last commit loop answers the requests
		// it took before it returns; any other request is dropped.
		select {
		case <-r.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case err := <-errch:
			return err
		default:
			return io.ErrClosedPipe
		}
	}
}

// ReadLag asks the partition leader for the end of the partition and
// returns how far the reader is behind it. Not available for group readers.
func (r *Reader) ReadLag(ctx context.Context) (lag int64, err error) {
	if r.useConsumerGroup() {
		return 0, errNotAvailableWithGroup
	}
	first, last, err := r.listFirstLast(ctx, r.config.Topic, r.config.Partition)
	if err != nil {
		return 0, err
	}
	switch cur := r.Offset(); cur {
	case FirstOffset:
		return last - first, nil
	case LastOffset:
		return 0, nil
	default:
		return last - cur, nil
	}
}

// Offset returns the offset of the next message a partition reader returns
// (FirstOffset or LastOffset before the first one), or -1 for a group
// reader.
func (r *Reader) Offset() int64 {
	if r.useConsumerGroup() {
		return -1
	}
	r.mutex.Lock()
	offset := r.offset
	r.mutex.Unlock()
	r.withLogger(func(l Logger) {
		l.Printf("looking up offset of kafka reader for partition %d of %s: %s", r.config.Partition, r.config.Topic, toHumanOffset(offset))
	})
	return offset
}

// Lag returns how many messages were after the last one returned when it
// was fetched, or -1 for a group reader.
func (r *Reader) Lag() int64 {
	if r.useConsumerGroup() {
		return -1
	}
	r.mutex.Lock()
	defer r.mutex.Unlock()
	return r.lag
}

// SetOffset makes the next message read the one at offset (or FirstOffset,
// LastOffset). Not available for group readers; io.ErrClosedPipe after
// Close.
func (r *Reader) SetOffset(offset int64) error {
	if r.useConsumerGroup() {
		return errNotAvailableWithGroup
	}
	r.mutex.Lock()
	defer r.mutex.Unlock()
	if r.closed {
		return io.ErrClosedPipe
	}
	if offset != r.offset {
		r.withLogger(func(l Logger) {
			l.Printf("setting the offset of the kafka reader for partition %d of %s from %s to %s",
				r.config.Partition, r.config.Topic, toHumanOffset(r.offset), toHumanOffset(offset))
		})
		r.offset = offset
		if r.version != 0 {
			r.start(r.getTopicPartitionOffset())
		}
		r.activateReadLag()
	}
	return nil
}

// SetOffsetAt makes the next message read the first one with a timestamp at
// or after t.
func (r *Reader) SetOffsetAt(ctx context.Context, t time.Time) error {
	r.mutex.Lock()
	closed := r.closed
	r.mutex.Unlock()
	if closed {
		return io.ErrClosedPipe
	}
	if len(r.config.Brokers) < 1 {
		return errors.New("no brokers in config")
	}
	offset, err := r.listOffset(ctx, r.config.Topic, r.config.Partition, t.UnixMilli())
	if err != nil {
		return err
	}
	return r.SetOffset(offset)
}

// Stats returns the reader's statistics since the previous call.
func (r *Reader) Stats() ReaderStats {
	clientID := ""
	if r.config.Dialer != nil {
		clientID = r.config.Dialer.ClientID
	}
	s := ReaderStats{
		Dials:         r.stats.dials.snapshot(),
		Fetches:       r.stats.fetches.snapshot(),
		Messages:      r.stats.messages.snapshot(),
		Bytes:         r.stats.bytes.snapshot(),
		Rebalances:    r.stats.rebalances.snapshot(),
		Timeouts:      r.stats.timeouts.snapshot(),
		Errors:        r.stats.errors.snapshot(),
		DialTime:      r.stats.dialTime.snapshotDuration(),
		ReadTime:      r.stats.readTime.snapshotDuration(),
		WaitTime:      r.stats.waitTime.snapshotDuration(),
		FetchSize:     r.stats.fetchSize.snapshot(),
		FetchBytes:    r.stats.fetchBytes.snapshot(),
		Offset:        r.stats.offset.snapshot(),
		Lag:           r.stats.lag.snapshot(),
		MinBytes:      int64(r.config.MinBytes),
		MaxBytes:      int64(r.config.MaxBytes),
		MaxWait:       r.config.MaxWait,
		QueueLength:   int64(len(r.msgs)),
		QueueCapacity: int64(cap(r.msgs)),
		ClientID:      clientID,
		Topic:         r.config.Topic,
		Partition:     r.stats.partition,
	}
	s.DeprecatedFetchesWithTypo = s.Fetches
	return s
}

func (r *Reader) getTopicPartitionOffset() map[topicPartition]int64 {
	return map[topicPartition]int64{
		{topic: r.config.Topic, partition: int32(r.config.Partition)}: r.offset,
	}
}

func (r *Reader) withLogger(do func(Logger)) {
	if r.config.Logger != nil {
		do(r.config.Logger)
	}
}

func (r *Reader) withErrorLogger(do func(Logger)) {
	if r.config.ErrorLogger != nil {
		do(r.config.ErrorLogger)
	} else {
		r.withLogger(do)
	}
}

// activateReadLag starts, once, the loop that refreshes the lag gauge of a
// partition reader.
func (r *Reader) activateReadLag() {
	if r.config.ReadLagInterval > 0 && atomic.CompareAndSwapUint32(&r.once, 0, 1) && !r.useConsumerGroup() {
		r.join.Add(1)
		go func() {
			defer r.join.Done()
			r.readLag(r.stctx)
		}()
	}
}

func (r *Reader) readLag(ctx context.Context) {
	ticker := time.NewTicker(r.config.ReadLagInterval)
	defer ticker.Stop()
	for {
		rctx, cancel := context.WithTimeout(ctx, r.config.ReadLagInterval/2)
		lag, err := r.ReadLag(rctx)
		cancel()
		switch {
		case err == nil:
			r.stats.lag.observe(lag)
		case ctx.Err() == nil:
			r.stats.errors.observe(1)
			r.withErrorLogger(func(l Logger) {
				l.Printf("kafka reader failed to read lag of partition %d of %s: %s", r.config.Partition, r.config.Topic, err)
			})
		}
		select {
		case <-ticker.C:
		case <-ctx.Done():
			return
		}
	}
}

// start replaces the partition readers with new ones reading from
// offsets. The caller holds r.mutex.
func (r *Reader) start(offsets map[topicPartition]int64) {
	if r.closed {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel()
	r.cancel = cancel
	r.version++

	r.join.Add(len(offsets))
	for key, offset := range offsets {
		pr := &partitionReader{
			reader:    r,
			topic:     key.topic,
			partition: int(key.partition),
			version:   r.version,
		}
		go func(offset int64) {
			defer r.join.Done()
			pr.run(ctx, offset)
		}(offset)
	}
}

// run is the group loop of a group reader: for each generation it starts
// the partition readers of the assignment and the commit loop, until Close.
func (r *Reader) run(cg *ConsumerGroup) {
	defer close(r.done)
	defer cg.Close()

	r.withLogger(func(l Logger) { l.Printf("entering loop for consumer group, %v", r.config.GroupID) })

	for {
		var gen *Generation
		var err error
		for attempt := 1; attempt <= r.config.MaxAttempts; attempt++ {
			if gen, err = cg.Next(r.stctx); err == nil {
				break
			}
			if r.stctx.Err() != nil {
				return
			}
			r.stats.errors.observe(1)
			r.withErrorLogger(func(l Logger) { l.Printf("%v", err) })
		}
		if err != nil {
			select {
			case r.runError <- err:
			default:
			}
			continue
		}

		r.stats.rebalances.observe(1)
		r.subscribe(gen.Assignments)
		gen.Start(func(ctx context.Context) { r.commitLoop(ctx, gen) })
		gen.Start(func(ctx context.Context) {
			select {
			case <-ctx.Done():
			case <-r.stctx.Done():
			}
			r.unsubscribe()
		})
	}
}

// subscribe starts partition readers for the assignments of a generation.
func (r *Reader) subscribe(assignments map[string][]PartitionAssignment) {
	offsets := make(map[topicPartition]int64)
	for topic, list := range assignments {
		for _, a := range list {
			offsets[topicPartition{topic: topic, partition: int32(a.ID)}] = a.Offset
		}
	}
	r.mutex.Lock()
	r.start(offsets)
	r.mutex.Unlock()
	r.withLogger(func(l Logger) { l.Printf("subscribed to topics and partitions: %+v", offsets) })
}

// unsubscribe stops the partition readers at the end of a generation.
// Messages already queued stay in r.msgs: dropping them could race with
// FetchMessage and commit past a gap; another member may read them again.
func (r *Reader) unsubscribe() {
	r.mutex.Lock()
	cancel := r.cancel
	r.mutex.Unlock()
	cancel()
	r.join.Wait()
}

// offsetStash collects the offsets to commit: topic -> partition -> offset.
type offsetStash map[string]map[int]int64

// merge keeps, per partition, the highest offset.
func (o offsetStash) merge(commits []commit) {
	for _, c := range commits {
		byPartition := o[c.topic]
		if byPartition == nil {
			byPartition = map[int]int64{}
			o[c.topic] = byPartition
		}
		if cur, ok := byPartition[c.partition]; !ok || c.offset > cur {
			byPartition[c.partition] = c.offset
		}
	}
}

func (o offsetStash) reset() {
	for k := range o {
		delete(o, k)
	}
}

func (r *Reader) commitOffsetsWithRetry(gen *Generation, offsets offsetStash, attempts int) (err error) {
	for attempt := 0; attempt < attempts; attempt++ {
		if attempt > 0 && !sleepContext(r.stctx, retryDelay(attempt, readerCommitBackoffMin, readerCommitBackoffMax)) {
			return err
		}
		if err = gen.CommitOffsets(offsets); err == nil {
			return nil
		}
	}
	return err
}

// commitLoop serves CommitMessages for one generation.
func (r *Reader) commitLoop(ctx context.Context, gen *Generation) {
	r.withLogger(func(l Logger) { l.Printf("started commit for group %s", r.config.GroupID) })
	defer r.withLogger(func(l Logger) { l.Printf("stopped commit for group %s", r.config.GroupID) })
	if r.useSyncCommits() {
		r.commitLoopImmediate(ctx, gen)
	} else {
		r.commitLoopInterval(ctx, gen)
	}
}

// commitLoopImmediate commits each request as it comes. When the
// generation ends, requests still queued are committed together and all
// their callers get the result.
func (r *Reader) commitLoopImmediate(ctx context.Context, gen *Generation) {
	offsets := offsetStash{}
	for {
		select {
		case <-ctx.Done():
			var waiting []chan<- error
			for drained := false; !drained; {
				select {
				case req := <-r.commits:
					offsets.merge(req.commits)
					waiting = append(waiting, req.errch)
				default:
					drained = true
				}
			}
			err := r.commitOffsetsWithRetry(gen, offsets, readerCommitAttempts)
			for _, ch := range waiting {
				ch <- err
			}
			return
		case req := <-r.commits:
			offsets.merge(req.commits)
			req.errch <- r.commitOffsetsWithRetry(gen, offsets, readerCommitAttempts)
			offsets.reset()
		}
	}
}

// commitLoopInterval commits what was requested every CommitInterval, and
// once more when the generation ends (Close included).
func (r *Reader) commitLoopInterval(ctx context.Context, gen *Generation) {
	ticker := time.NewTicker(r.config.CommitInterval)
	defer ticker.Stop()
	offsets := offsetStash{}
	flush := func() {
		if err := r.commitOffsetsWithRetry(gen, offsets, readerCommitAttempts); err != nil {
			r.withErrorLogger(func(l Logger) { l.Printf("%v", err) })
		} else {
			offsets.reset()
		}
	}
	for {
		select {
		case <-ctx.Done():
			for drained := false; !drained; {
				select {
				case req := <-r.commits:
					offsets.merge(req.commits)
				default:
					drained = true
				}
			}
			flush()
			return
		case <-ticker.C:
			flush()
		case req := <-r.commits:
			offsets.merge(req.commits)
		}
	}
}

// humanOffset prints FirstOffset and LastOffset by name in log messages.
type humanOffset int64

func toHumanOffset(v int64) humanOffset { return humanOffset(v) }

func (offset humanOffset) Format(w fmt.State, _ rune) {
	switch v := int64(offset); v {
	case FirstOffset:
		io.WriteString(w, "first offset")
	case LastOffset:
		io.WriteString(w, "last offset")
	default:
		io.WriteString(w, strconv.FormatInt(v, 10))
	}
}
