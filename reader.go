// This file is long (over 800 lines) because it holds the Reader's type,
// its documented configuration and every exported Reader method, so that
// the Reader's API reads in one place; fetching, group membership,
// batching and cooperative rebalancing live in reader_*.go files of their
// own.

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

// Offsets with a special meaning where an offset is expected.
const (
	LastOffset  int64 = -1 // the end of the partition: only messages written from now on
	FirstOffset int64 = -2 // the oldest message the partition still holds
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
	stats  *readerStats

	// client sends every request through the reader's own transport;
	// dropTransport closes that transport's connections.
	client        Client
	dropTransport context.CancelFunc

	// queue carries batches of messages, and errors, from the partition
	// readers to FetchMessage; it holds about QueueCapacity messages
	// (readerQueueBatches). queued counts the messages in it. commitQueue carries
	// CommitMessages calls to the commit loop of the current generation.
	queue       chan readerMessage
	queued      atomic.Int64
	spare       chan []Message // emptied batches, for the partition readers to reuse
	commitQueue chan commitRequest

	// life ends on Close.
	life context.Context
	end  context.CancelFunc

	// Group readers only: groupDone is closed when the group loop has
	// returned, groupErr passes its errors to a waiting FetchMessage.
	// groupFailed is closed, with groupFatal set, when the group cannot
	// go on (see fatalGroupError): FetchMessage and CommitMessages return
	// groupFatal from then on.
	groupDone   chan struct{}
	groupErr    chan error
	groupFailed chan struct{}
	groupFatal  error

	// workers counts the partition readers and the lag loop.
	workers    sync.WaitGroup
	lagStarted atomic.Bool

	mu          sync.Mutex
	closed      bool
	generation  int64              // bumped when the partition readers are replaced
	stopReaders context.CancelFunc // stops the partition readers of generation
	offset      int64              // partition readers: next offset to return
	lag         int64
	coop        map[topicPartition]*coopReader // cooperative groups (reader_cooperative.go)

	// current[currentPos:] is the rest of the batch FetchMessage took from queue, of
	// partition readers of version currentVersion with the high watermark
	// currentWatermark: the next messages FetchMessage returns.
	current          []Message
	currentPos       int
	currentVersion   int64
	currentWatermark int64
	// pending are the batches other FetchMessage calls took from queue
	// while current was in use, returned after it, in order, each
	// checked against the version of its own partition reader.
	pending []readerMessage

	// Group readers with CommitInterval: ReadMessage records what it
	// returned of the current batch in currentRead (one store per
	// message), moved to readCommits when the batch ends; the commit loop
	// takes readCommits at each tick. This replaces a commit request per
	// message.
	currentRead    commit
	currentHasRead bool
	readCommits    offsetStash
	// carry: offsets a cooperative generation could not commit, for the
	// next one (reader_group.go carryCommits).
	carry *commitCarry
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
	// group, in order of preference. Only with GroupID. With
	// CooperativeStickyGroupBalancer (when the coordinator picks it), the
	// Reader keeps reading the partitions it keeps across rebalances.
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

	// GroupInstanceID makes the reader a static member of its group
	// (KIP-345, Kafka 2.3 or later): restarted with the same
	// GroupInstanceID within SessionTimeout, it gets its partitions back
	// without a rebalance, and the other members keep reading. A static
	// member does not leave the group on Close; its partitions wait
	// SessionTimeout for it. Another process joining with the same ID
	// fences this one: FetchMessage and CommitMessages then return an
	// error matching FencedInstanceID, for good. Only with GroupID; see
	// ConsumerGroupConfig.GroupInstanceID.
	GroupInstanceID string

	// GroupProtocol selects the consumer group protocol: GroupProtocolClassic
	// ("classic", the default when empty: JoinGroup and SyncGroup, a
	// member of the group runs GroupBalancers) or GroupProtocolConsumer
	// ("consumer", KIP-848, Kafka 4.0 or later: the broker assigns the
	// partitions and members only heartbeat, so a member joining or
	// leaving moves just the partitions that change owner, and the
	// others keep reading). Only with GroupID.
	//
	// With "consumer", the broker's group.consumer.* settings replace
	// GroupBalancers, HeartbeatInterval and SessionTimeout, which must
	// be left unset; the Reader stops the partitions the broker takes
	// away, commits their offsets with its commit settings, and only
	// then tells the broker they are free. GroupInstanceID, commits and
	// RebalanceTimeout work as with "classic". A broker that does not
	// support it makes FetchMessage return an error matching
	// UnsupportedVersion that names this option.
	GroupProtocol string

	// ServerAssignor names the broker's assignor ("uniform" or "range"
	// in Kafka 4.0) with GroupProtocol "consumer"; empty leaves the
	// choice to the broker (its group.consumer.assignors).
	ServerAssignor string

	// transport, when set, replaces the transport built from Dialer (tests
	// use it to script broker answers).
	transport RoundTripper
}

// Validate checks the configuration, with the errors NewReader panics with.
func (config *ReaderConfig) Validate() error {
	group := config.GroupID != ""
	switch {
	case len(config.Brokers) == 0:
		return errors.New("cannot create a new kafka reader with an empty list of broker addresses")
	case config.Partition < 0, config.Partition >= math.MaxInt32:
		return fmt.Errorf("partition number out of bounds: %d", config.Partition)
	case config.MinBytes < 0:
		return fmt.Errorf("invalid negative minimum batch size (min = %d)", config.MinBytes)
	case config.MaxBytes < 0:
		return fmt.Errorf("invalid negative maximum batch size (max = %d)", config.MaxBytes)
	case group && config.Partition != 0:
		return errors.New("either Partition or GroupID may be specified, but not both")
	case !group && config.GroupInstanceID != "":
		return errors.New("GroupInstanceID is only available with GroupID")
	case group && config.Topic == "" && len(config.GroupTopics) == 0:
		return errors.New("either Topic or GroupTopics must be specified with GroupID")
	case !group && config.Topic == "":
		return errors.New("cannot create a new kafka reader with an empty topic")
	case config.MinBytes > config.MaxBytes:
		return fmt.Errorf("minimum batch size greater than the maximum (min = %d, max = %d)", config.MinBytes, config.MaxBytes)
	case config.ReadBackoffMax < 0:
		return fmt.Errorf("ReadBackoffMax out of bounds: %d", config.ReadBackoffMax)
	case config.ReadBackoffMin < 0:
		return fmt.Errorf("ReadBackoffMin out of bounds: %d", config.ReadBackoffMin)
	case !group && (config.GroupProtocol != "" || config.ServerAssignor != ""):
		return errors.New("GroupProtocol and ServerAssignor are only available with GroupID")
	}
	if err := validateGroupProtocol("ReaderConfig.GroupProtocol", config.GroupProtocol, config.ServerAssignor); err != nil {
		return err
	}
	if config.GroupProtocol == GroupProtocolConsumer {
		for _, f := range []struct {
			name string
			set  bool
		}{
			{"GroupBalancers", len(config.GroupBalancers) > 0},
			{"HeartbeatInterval", config.HeartbeatInterval != 0},
			{"SessionTimeout", config.SessionTimeout != 0},
		} {
			if f.set {
				return fmt.Errorf("kafka: ReaderConfig.%s cannot be used with GroupProtocol %q: the broker's group.consumer.* settings replace it", f.name, GroupProtocolConsumer)
			}
		}
	}
	return nil
}

// ReaderStats is a snapshot of a Reader's activity, from Reader.Stats.
// Counters and summaries cover the time since the previous snapshot; the
// struct tags name the metrics, as in the original package.
type ReaderStats struct {
	// Counters. Timeouts counts the fetches that came back empty after
	// MaxWait, and those the broker answered REQUEST_TIMED_OUT.
	Dials      int64 `metric:"kafka.reader.dial.count" type:"counter"`
	Fetches    int64 `metric:"kafka.reader.fetch.count" type:"counter"`
	Messages   int64 `metric:"kafka.reader.message.count" type:"counter"`
	Bytes      int64 `metric:"kafka.reader.message.bytes" type:"counter"`
	Rebalances int64 `metric:"kafka.reader.rebalance.count" type:"counter"`
	Timeouts   int64 `metric:"kafka.reader.timeout.count" type:"counter"`
	Errors     int64 `metric:"kafka.reader.error.count" type:"counter"`

	// Distributions.
	DialTime   DurationStats `metric:"kafka.reader.dial.seconds"`
	ReadTime   DurationStats `metric:"kafka.reader.read.seconds"`
	WaitTime   DurationStats `metric:"kafka.reader.wait.seconds"`
	FetchSize  SummaryStats  `metric:"kafka.reader.fetch.size"`
	FetchBytes SummaryStats  `metric:"kafka.reader.fetch.bytes"`

	// Gauges.
	Offset        int64         `metric:"kafka.reader.offset" type:"gauge"`
	Lag           int64         `metric:"kafka.reader.lag" type:"gauge"`
	MinBytes      int64         `metric:"kafka.reader.fetch_bytes.min" type:"gauge"`
	MaxBytes      int64         `metric:"kafka.reader.fetch_bytes.max" type:"gauge"`
	MaxWait       time.Duration `metric:"kafka.reader.fetch_wait.max" type:"gauge"`
	QueueLength   int64         `metric:"kafka.reader.queue.length" type:"gauge"`
	QueueCapacity int64         `metric:"kafka.reader.queue.capacity" type:"gauge"`

	// Tags.
	ClientID  string `tag:"client_id"`
	Topic     string `tag:"topic"`
	Partition string `tag:"partition"`

	// DeprecatedFetchesWithTypo repeats Fetches under the misspelled metric
	// name that older releases used, for dashboards that still rely on it.
	DeprecatedFetchesWithTypo int64 `metric:"kafak.reader.fetch.count" type:"counter"`
}

// readerStats accumulates the statistics of a Reader; every field is
// updated atomically.
type readerStats struct {
	dials, fetches, messages, bytes, rebalances, timeouts, errors counter
	dialTime, readTime, waitTime, fetchSize, fetchBytes           summary
	offset, lag                                                   gauge

	partition string // formatted once: "-1" for group readers
}

// NewReader builds a Reader from config, panicking if ReaderConfig.Validate
// rejects it. A partition reader starts at
// FirstOffset; call SetOffset to start elsewhere.
func NewReader(config ReaderConfig) *Reader {
	if err := config.Validate(); err != nil {
		panic(err)
	}
	config.applyDefaults()
	if config.ReadBackoffMax < config.ReadBackoffMin {
		panic(fmt.Errorf("ReadBackoffMax %d smaller than ReadBackoffMin %d", config.ReadBackoffMax, config.ReadBackoffMin))
	}

	r := &Reader{
		config:      config,
		queue:       make(chan readerMessage, readerQueueBatches(config.QueueCapacity)),
		spare:       make(chan []Message, readerQueueBatches(config.QueueCapacity)+2),
		commitQueue: make(chan commitRequest, config.QueueCapacity),
		stopReaders: func() {},
		offset:      FirstOffset,
		stats:       &readerStats{partition: strconv.Itoa(config.Partition)},
	}
	r.life, r.end = context.WithCancel(context.Background())
	transportLife, dropTransport := context.WithCancel(context.Background())
	r.dropTransport = dropTransport
	var transport RoundTripper = config.transport
	if transport == nil {
		transport = newDialerTransport(transportLife, config.Dialer)
	}
	r.client = Client{Addr: TCP(config.Brokers...), Transport: transport}

	if !r.useConsumerGroup() {
		return r
	}
	// Group readers report no partition, and start at generation 1 so that
	// FetchMessage never starts partition readers itself: rebalances do.
	r.stats.partition = "-1"
	r.generation = 1
	r.groupDone = make(chan struct{})
	r.groupErr = make(chan error)
	r.groupFailed = make(chan struct{})
	groupConfig := ConsumerGroupConfig{
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
		GroupInstanceID:        config.GroupInstanceID,
		GroupProtocol:          config.GroupProtocol,
		ServerAssignor:         config.ServerAssignor,
		transport:              transport,
		keepsPartitions:        true,
	}
	cg, err := NewConsumerGroup(groupConfig)
	if err != nil {
		dropTransport()
		r.end()
		panic(err)
	}
	go r.run(cg)
	return r
}

// applyDefaults fills in the unset fields of a validated configuration.
func (config *ReaderConfig) applyDefaults() {
	if config.GroupID != "" && len(config.GroupBalancers) == 0 {
		config.GroupBalancers = []GroupBalancer{RangeGroupBalancer{}, RoundRobinGroupBalancer{}}
	}
	if config.Dialer == nil {
		config.Dialer = DefaultDialer
	}
	for _, d := range []struct {
		field *int
		value int
	}{
		{&config.MaxBytes, readerDefaultMaxBytes},
		{&config.MinBytes, readerDefaultMinBytes},
		{&config.QueueCapacity, readerDefaultQueueCapacity},
		{&config.MaxAttempts, readerDefaultMaxAttempts},
	} {
		if *d.field == 0 {
			*d.field = d.value
		}
	}
	cgDefaultDuration(&config.MaxWait, readerDefaultMaxWait)
	cgDefaultDuration(&config.ReadBatchTimeout, readerDefaultReadBatchTimeout)
	cgDefaultDuration(&config.ReadLagInterval, readerDefaultReadLagInterval)
	cgDefaultDuration(&config.ReadBackoffMin, readerDefaultBackoffMin)
	cgDefaultDuration(&config.ReadBackoffMax, readerDefaultBackoffMax)
}

func (r *Reader) useConsumerGroup() bool { return r.config.GroupID != "" }

// syncCommits tells whether CommitMessages waits for the commit.
func (r *Reader) syncCommits() bool { return r.config.CommitInterval == 0 }

func (r *Reader) getTopics() []string {
	if len(r.config.GroupTopics) == 0 {
		return []string{r.config.Topic}
	}
	return append([]string(nil), r.config.GroupTopics...)
}

// Config returns the configuration of the reader, defaults filled in.
func (r *Reader) Config() ReaderConfig {
	return r.config
}

// Close stops the reader: partition readers stop, a group member commits
// what is pending and leaves its group, connections are closed. Later calls
// to FetchMessage return io.EOF.
func (r *Reader) Close() error {
	// No lag loop may start from now on.
	r.lagStarted.Store(true)

	r.mu.Lock()
	first := !r.closed
	r.closed = true
	stop := r.stopReaders
	r.mu.Unlock()

	stop()
	r.end()
	r.workers.Wait()
	if r.groupDone != nil {
		<-r.groupDone
	}
	if first {
		close(r.queue)
		r.dropTransport()
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
	if r.useConsumerGroup() && !r.syncCommits() && r.life.Err() == nil {
		// Committed in the background: the commit loop takes what was
		// returned at each tick, without a request per message.
		msg, err := r.fetchMessage(ctx, true)
		if err != nil {
			return Message{}, fmt.Errorf("fetching message: %w", err)
		}
		return msg, nil
	}
	msg, err := r.FetchMessage(ctx)
	switch {
	case err != nil:
		return Message{}, fmt.Errorf("fetching message: %w", err)
	case !r.useConsumerGroup():
		return msg, nil
	}
	if err := r.CommitMessages(ctx, msg); err != nil {
		return Message{}, fmt.Errorf("committing message: %w", err)
	}
	return msg, nil
}

// next returns the next message of the current batch or of the batches
// pending after it, if there is one, starting the partition readers of a
// partition reader on first use.
func (r *Reader) next(autoCommit bool) (msg Message, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.generation == 0 && !r.closed {
		r.startReaders(r.partitionOffsets())
	}
	for r.currentPos == len(r.current) || !r.liveLocked(r.currentVersion, r.current[r.currentPos]) {
		r.dropCurrent()
		if len(r.pending) == 0 {
			return Message{}, false
		}
		item := r.pending[0]
		r.pending[0] = readerMessage{}
		r.pending = r.pending[1:]
		if r.liveLocked(item.version, item.messages[0]) {
			r.current, r.currentVersion, r.currentWatermark = item.messages, item.version, item.watermark
		}
	}
	msg = r.current[r.currentPos]
	r.current[r.currentPos] = Message{} // the batch must not keep what the program dropped
	r.currentPos++
	r.offset = msg.Offset + 1
	r.lag = r.currentWatermark - r.offset
	if autoCommit {
		r.currentRead, r.currentHasRead = makeCommit(msg), true
	}
	if r.currentPos == len(r.current) {
		r.dropCurrent()
	}
	return msg, true
}

// dropCurrent ends the current batch, handing its array back to the
// partition readers when it is empty. The caller holds r.mu.
func (r *Reader) dropCurrent() {
	r.stashRead()
	if r.current != nil && r.currentPos == len(r.current) {
		select {
		case r.spare <- r.current[:0]:
		default:
		}
	}
	r.current, r.currentPos = nil, 0
}

// stashRead moves what ReadMessage returned of the current batch to the
// offsets the commit loop commits. The caller holds r.mu.
func (r *Reader) stashRead() {
	if !r.currentHasRead {
		return
	}
	if r.readCommits == nil {
		r.readCommits = offsetStash{}
	}
	r.readCommits.merge([]commit{r.currentRead})
	r.currentHasRead = false
}

// takeReadCommits adds what ReadMessage returned so far to pending.
func (r *Reader) takeReadCommits(pending offsetStash) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stashRead()
	pending.mergeStash(r.readCommits)
	r.readCommits.reset()
}

// take makes item, a batch of partition readers of version gen or later,
// the current batch, unless the partition readers were replaced since.
func (r *Reader) take(item readerMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(item.messages) == 0 || !r.liveLocked(item.version, item.messages[0]) {
		return
	}
	if len(r.pending) > 0 || (r.currentPos < len(r.current) && r.liveLocked(r.currentVersion, r.current[r.currentPos])) {
		// Another FetchMessage call took a batch meanwhile: this one
		// comes after it. They stay apart, as in a cooperative group
		// they may come from partition readers of different versions
		// that do not stop together.
		r.pending = append(r.pending, item)
		return
	}
	r.dropCurrent()
	r.current, r.currentVersion, r.currentWatermark = item.messages, item.version, item.watermark
}

// liveLocked tells whether messages of partition readers of version, such
// as msg, are still to be returned: they are of the current generation,
// or, in a cooperative group, come from the partition reader that reads
// msg's partition now (kept across rebalances or not: a partition given
// up keeps no reader, whatever its version). The caller holds r.mu.
func (r *Reader) liveLocked(version int64, msg Message) bool {
	if r.coop == nil {
		return version >= r.generation
	}
	c, ok := r.coop[topicPartition{topic: msg.Topic, partition: int32(msg.Partition)}]
	return ok && c.version == version
}

// FetchMessage returns the next message, waiting for one if needed, without
// committing it (see CommitMessages).
//
// It returns io.EOF once the reader is closed.
func (r *Reader) FetchMessage(ctx context.Context) (Message, error) {
	return r.fetchMessage(ctx, false)
}

// fetchMessage is FetchMessage; autoCommit records the message returned
// for the commit loop (ReadMessage with CommitInterval).
func (r *Reader) fetchMessage(ctx context.Context, autoCommit bool) (Message, error) {
	// A call whose context has ended returns its error even when messages
	// are queued: a program that stops its read loop by cancelling gets no
	// more messages (upstream's select picked between the two at random).
	if err := ctx.Err(); err != nil {
		return Message{}, err
	}
	r.activateReadLag()
	for {
		msg, ok := r.next(autoCommit)
		if ok {
			return msg, nil
		}
		var item readerMessage
		var got bool
		if ctx.Err() == nil {
			// A queued batch is taken without selecting over the group's
			// errors and ctx too, which costs more.
			select {
			case item, ok = <-r.queue:
				got = true
			default:
			}
		}
		if !got {
			select {
			case item, ok = <-r.queue:
			case err := <-r.groupErr:
				return Message{}, err
			case <-r.groupFailed:
				return Message{}, r.groupFatal
			case <-ctx.Done():
				return Message{}, ctx.Err()
			}
		}
		if !ok {
			return Message{}, io.EOF
		}
		r.queued.Add(-int64(len(item.messages)))
		if item.error != nil {
			if !r.liveError(item.version) {
				// From partition readers replaced since (by SetOffset or
				// a rebalance): not the program's concern anymore.
				continue
			}
			if errors.Is(item.error, io.EOF) {
				// io.EOF tells callers the reader is closed; an EOF from a
				// connection means something else.
				return Message{}, io.ErrUnexpectedEOF
			}
			return Message{}, item.error
		}
		r.take(item)
	}
}

// CommitMessages commits the offsets of msgs for the reader's group: the
// next read of each partition starts after the highest message given for
// it, so committing the last message of a partition commits all before it.
//
// With CommitInterval set the commit happens in the background and the
// call returns at once; otherwise it waits for the coordinator's answer.
//
// Messages of a partition a rebalance gave to another member since they
// were fetched are not committed (their new owner's commits stand, and it
// reads them again): ErrorLogger says so.
func (r *Reader) CommitMessages(ctx context.Context, msgs ...Message) error {
	if !r.useConsumerGroup() {
		return errOnlyAvailableWithGroup
	}
	if r.life.Err() != nil {
		return io.ErrClosedPipe
	}
	req := commitRequest{commits: makeCommits(msgs...)}
	var result chan error
	if r.syncCommits() {
		result = make(chan error, 1)
		req.errch = result
	}
	select {
	case r.commitQueue <- req:
	case <-r.life.Done():
		return io.ErrClosedPipe
	case <-r.groupFailed:
		return r.groupFatal
	case <-ctx.Done():
		return ctx.Err()
	}
	if result == nil {
		return nil
	}
	select {
	case err := <-result:
		return err
	case <-r.groupFailed:
		return r.groupFatal
	case <-ctx.Done():
		return ctx.Err()
	case <-r.life.Done():
	}
	// Closed while waiting: the last commit loop answers the requests it
	// took before the group loop returns; any other request is dropped.
	select {
	case <-r.groupDone:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-result:
		return err
	default:
		return io.ErrClosedPipe
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
	cur := r.Offset()
	if cur == FirstOffset {
		cur = first
	} else if cur == LastOffset {
		cur = last
	}
	return last - cur, nil
}

// Offset tells where a partition reader stands: the offset its next message
// will have (FirstOffset or LastOffset until it has read one). A group
// reader answers -1.
func (r *Reader) Offset() int64 {
	if r.useConsumerGroup() {
		return -1
	}
	r.mu.Lock()
	offset := r.offset
	r.mu.Unlock()
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
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lag
}

// SetOffset makes the next message read the one at offset (or FirstOffset,
// LastOffset). Not available for group readers; io.ErrClosedPipe after
// Close.
func (r *Reader) SetOffset(offset int64) error {
	if r.useConsumerGroup() {
		return errNotAvailableWithGroup
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.closed:
		return io.ErrClosedPipe
	case offset == r.offset:
		return nil
	}
	r.withLogger(func(l Logger) {
		l.Printf("setting the offset of the kafka reader for partition %d of %s from %s to %s",
			r.config.Partition, r.config.Topic, toHumanOffset(r.offset), toHumanOffset(offset))
	})
	r.offset = offset
	if r.generation > 0 {
		// Already reading: restart from the new offset.
		r.startReaders(r.partitionOffsets())
	}
	r.activateReadLag()
	return nil
}

// SetOffsetAt makes the next message read the first one with a timestamp at
// or after t.
func (r *Reader) SetOffsetAt(ctx context.Context, t time.Time) error {
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return io.ErrClosedPipe
	}
	if len(r.config.Brokers) == 0 {
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
	st := r.stats
	s := ReaderStats{
		MinBytes:      int64(r.config.MinBytes),
		MaxBytes:      int64(r.config.MaxBytes),
		MaxWait:       r.config.MaxWait,
		QueueLength:   r.queueLength(),
		QueueCapacity: int64(r.config.QueueCapacity),
		Topic:         r.config.Topic,
		Partition:     st.partition,
	}
	if r.config.Dialer != nil {
		s.ClientID = r.config.Dialer.ClientID
	}
	s.Dials, s.Fetches, s.Messages = st.dials.snapshot(), st.fetches.snapshot(), st.messages.snapshot()
	s.Bytes, s.Rebalances = st.bytes.snapshot(), st.rebalances.snapshot()
	s.Timeouts, s.Errors = st.timeouts.snapshot(), st.errors.snapshot()
	s.DialTime, s.ReadTime, s.WaitTime = st.dialTime.snapshotDuration(), st.readTime.snapshotDuration(), st.waitTime.snapshotDuration()
	s.FetchSize, s.FetchBytes = st.fetchSize.snapshot(), st.fetchBytes.snapshot()
	s.Offset, s.Lag = st.offset.snapshot(), st.lag.snapshot()
	s.DeprecatedFetchesWithTypo = s.Fetches
	return s
}

// queueLength is the number of messages fetched and not returned yet.
func (r *Reader) queueLength() int64 {
	r.mu.Lock()
	n := int64(len(r.current) - r.currentPos)
	for _, item := range r.pending {
		n += int64(len(item.messages))
	}
	r.mu.Unlock()
	return n + max(r.queued.Load(), 0)
}

// partitionOffsets is what a partition reader reads: its one partition,
// from r.offset. The caller holds r.mu.
func (r *Reader) partitionOffsets() map[topicPartition]int64 {
	key := topicPartition{topic: r.config.Topic, partition: int32(r.config.Partition)}
	return map[topicPartition]int64{key: r.offset}
}

func (r *Reader) withLogger(do func(Logger)) {
	if l := r.config.Logger; l != nil {
		do(l)
	}
}

func (r *Reader) withErrorLogger(do func(Logger)) {
	switch {
	case r.config.ErrorLogger != nil:
		do(r.config.ErrorLogger)
	case r.config.Logger != nil:
		do(r.config.Logger)
	}
}

// activateReadLag starts, once, the loop that refreshes the lag gauge of a
// partition reader.
func (r *Reader) activateReadLag() {
	// A load first: every FetchMessage calls this, and a compare-and-swap
	// costs a locked instruction each time.
	if r.config.ReadLagInterval <= 0 || r.useConsumerGroup() || r.lagStarted.Load() || !r.lagStarted.CompareAndSwap(false, true) {
		return
	}
	r.workers.Add(1)
	go func() {
		defer r.workers.Done()
		r.lagLoop(r.life)
	}()
}

func (r *Reader) lagLoop(ctx context.Context) {
	tick := time.NewTicker(r.config.ReadLagInterval)
	defer tick.Stop()
	for ctx.Err() == nil {
		rctx, cancel := context.WithTimeout(ctx, r.config.ReadLagInterval/2)
		lag, err := r.ReadLag(rctx)
		cancel()
		if err == nil {
			r.stats.lag.observe(lag)
		} else if ctx.Err() == nil {
			r.stats.errors.add(1)
			r.withErrorLogger(func(l Logger) {
				l.Printf("kafka reader failed to read lag of partition %d of %s: %s", r.config.Partition, r.config.Topic, err)
			})
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
		}
	}
}

// startReaders replaces the partition readers with new ones reading from
// offsets, under a new generation number. The caller holds r.mu.
func (r *Reader) startReaders(offsets map[topicPartition]int64) {
	if r.closed {
		return
	}
	r.stopReaders()
	ctx, cancel := context.WithCancel(context.Background())
	r.stopReaders = cancel
	r.generation++
	r.stashRead()
	r.current, r.currentPos, r.pending = nil, 0, nil
	for key, offset := range offsets {
		pr := &partitionReader{reader: r, topic: key.topic, partition: int(key.partition), version: r.generation}
		r.workers.Add(1)
		go func(offset int64) {
			defer r.workers.Done()
			pr.run(ctx, offset)
		}(offset)
	}
}

// humanOffset prints FirstOffset and LastOffset by name in log messages.
type humanOffset int64

func toHumanOffset(v int64) humanOffset { return humanOffset(v) }

func (offset humanOffset) Format(w fmt.State, _ rune) {
	var s string
	switch int64(offset) {
	case FirstOffset:
		s = "first offset"
	case LastOffset:
		s = "last offset"
	default:
		s = strconv.FormatInt(int64(offset), 10)
	}
	io.WriteString(w, s)
}
