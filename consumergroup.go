package kafka

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"
)

// ErrGroupClosed is Next's answer on a ConsumerGroup that was closed.
var ErrGroupClosed = errors.New("consumer group is closed")

// ErrGenerationEnded is the Err of the context given to the functions of
// Generation.Start once the generation is over.
var ErrGenerationEnded = errors.New("consumer group generation has ended")

// Defaults of ConsumerGroupConfig (and of the group settings of
// ReaderConfig).
const (
	groupProtocolType            = "consumer"
	groupDefaultHeartbeat        = 3 * time.Second
	groupDefaultSessionTimeout   = 30 * time.Second
	groupDefaultRebalanceTimeout = 30 * time.Second
	groupDefaultJoinBackoff      = 5 * time.Second
	groupDefaultRetentionTime    = -1 * time.Millisecond
	groupDefaultPartitionWatch   = 5 * time.Second
	groupDefaultTimeout          = 5 * time.Second
)

// ConsumerGroupConfig configures a ConsumerGroup.
type ConsumerGroupConfig struct {
	// ID names the consumer group; required.
	ID string

	// Brokers are addresses of brokers of the cluster; required.
	Brokers []string

	// Dialer configures the connections to the brokers (client ID, TLS,
	// SASL, timeouts). DefaultDialer when nil.
	Dialer *Dialer

	// Topics the members of this group consume; required.
	Topics []string

	// GroupBalancers are the assignment strategies this member supports, in
	// order of preference. The coordinator picks the first one that every
	// member supports, and the leader runs it.
	//
	// Default: [Range, RoundRobin]
	GroupBalancers []GroupBalancer

	// HeartbeatInterval is how often the member tells the coordinator it is
	// alive.
	//
	// Default: 3s
	HeartbeatInterval time.Duration

	// PartitionWatchInterval is how often the partition counts of Topics are
	// checked when WatchPartitionChanges is set.
	//
	// Default: 5s
	PartitionWatchInterval time.Duration

	// WatchPartitionChanges makes the group rebalance when the number of
	// partitions of one of its topics changes.
	WatchPartitionChanges bool

	// SessionTimeout is how long the coordinator waits for a heartbeat before
	// it removes the member from the group.
	//
	// Default: 30s
	SessionTimeout time.Duration

	// RebalanceTimeout is how long the coordinator waits for the members to
	// rejoin during a rebalance.
	//
	// Default: 30s
	RebalanceTimeout time.Duration

	// JoinGroupBackoff is the pause before joining again after a failure.
	//
	// Default: 5s
	JoinGroupBackoff time.Duration

	// RetentionTime is how long the broker keeps the committed offsets; -1
	// leaves it to the broker's offsets.retention.minutes. Brokers only take
	// it from OffsetCommit v2 to v4; newer brokers always apply their own
	// setting.
	//
	// Default: -1
	RetentionTime time.Duration

	// StartOffset is where consumption starts on a partition that has no
	// committed offset: FirstOffset or LastOffset.
	//
	// Default: FirstOffset
	StartOffset int64

	// Logger, when set, receives messages about what the group does.
	Logger Logger

	// ErrorLogger, when set, receives the errors; Logger is used otherwise.
	ErrorLogger Logger

	// Timeout bounds each request to the coordinator (a JoinGroup may
	// additionally wait for RebalanceTimeout).
	//
	// Default: 5s
	Timeout time.Duration

	// GroupInstanceID, when set, makes this member a static member of the
	// group (KIP-345, Kafka 2.3 or later): the coordinator knows it by this
	// ID rather than by the member ID it hands out, so a program that
	// restarts with the same GroupInstanceID within SessionTimeout gets its
	// partitions back without a rebalance, and the other members keep
	// reading. A static member therefore does not leave the group on
	// Close: its partitions wait for it until SessionTimeout passes (set
	// it to cover a restart).
	//
	// Each member needs an ID of its own that stays the same across
	// restarts, such as a host or pod name. When a second process joins
	// with the ID of a running one, the coordinator fences the first:
	// its Next returns an error that matches FencedInstanceID, and the
	// group stops (it does not join again, which would fence the other
	// in turn).
	//
	// Up to 249 characters among a-z, A-Z, 0-9, '.', '_' and '-'. Default:
	// empty, a dynamic member.
	GroupInstanceID string

	// GroupProtocol selects the group protocol: GroupProtocolClassic
	// ("classic", the default when empty) or GroupProtocolConsumer
	// ("consumer", KIP-848, Kafka 4.0 or later), where the broker assigns
	// the partitions and members only heartbeat; see
	// ReaderConfig.GroupProtocol. With "consumer", GroupBalancers,
	// HeartbeatInterval, SessionTimeout and WatchPartitionChanges have no
	// effect (the broker's group.consumer.* settings replace them), and
	// each change of this member's partitions ends the generation: the
	// next one starts once the functions of Start returned, and only then
	// is the broker told that the partitions taken away are free.
	GroupProtocol string

	// ServerAssignor names the broker's assignor ("uniform" or "range"
	// in Kafka 4.0) with GroupProtocol "consumer"; empty leaves it to the
	// broker.
	ServerAssignor string

	// transport, when set, is used instead of a transport of the group's own;
	// a Reader shares its transport with its group this way.
	transport RoundTripper

	// keepsPartitions is set by a Reader, which goes on reading the
	// partitions it keeps across generations of a cooperative balancer:
	// a generation that revokes partitions is handed to it (the Reader
	// ends it once they are given up) instead of being skipped.
	keepsPartitions bool
}

// Validate checks the configuration and fills in the defaults of unset
// fields.
func (config *ConsumerGroupConfig) Validate() error {
	switch {
	case len(config.Brokers) == 0:
		return errors.New("cannot create a consumer group with an empty list of broker addresses")
	case len(config.Topics) == 0:
		return errors.New("cannot create a consumer group without a topic")
	case config.ID == "":
		return errors.New("cannot create a consumer group without an ID")
	}

	if config.Dialer == nil {
		config.Dialer = DefaultDialer
	}
	if len(config.GroupBalancers) == 0 {
		config.GroupBalancers = []GroupBalancer{RangeGroupBalancer{}, RoundRobinGroupBalancer{}}
	}
	// Each duration: its default, and the message when it is out of range
	// (upstream's texts, misspelling included: programs may match them).
	durations := []struct {
		field  *time.Duration
		def    time.Duration
		format string
	}{
		{&config.HeartbeatInterval, groupDefaultHeartbeat, "HeartbeatInterval out of bounds: %d"},
		{&config.SessionTimeout, groupDefaultSessionTimeout, "SessionTimeout out of bounds: %d"},
		{&config.RebalanceTimeout, groupDefaultRebalanceTimeout, "RebalanceTimeout out of bounds: %d"},
		{&config.JoinGroupBackoff, groupDefaultJoinBackoff, "JoinGroupBackoff out of bounds: %d"},
		{&config.RetentionTime, groupDefaultRetentionTime, "RetentionTime out of bounds: %d"},
		{&config.PartitionWatchInterval, groupDefaultPartitionWatch, "PartitionWachInterval out of bounds %d"},
	}
	for _, d := range durations {
		cgDefaultDuration(d.field, d.def)
	}
	for _, d := range durations {
		ok := cgMillisFit(*d.field)
		if d.field == &config.RetentionTime {
			// Any non-negative retention, or -1ms for the broker's.
			ok = *d.field >= 0 || *d.field == groupDefaultRetentionTime
		}
		if !ok {
			return fmt.Errorf(d.format, *d.field)
		}
	}

	switch config.StartOffset {
	case 0:
		config.StartOffset = FirstOffset
	case FirstOffset, LastOffset:
	default:
		return fmt.Errorf("StartOffset is not valid %d", config.StartOffset)
	}
	if err := validateGroupInstanceID(config.GroupInstanceID); err != nil {
		return err
	}
	if err := validateGroupProtocol("ConsumerGroupConfig.GroupProtocol", config.GroupProtocol, config.ServerAssignor); err != nil {
		return err
	}
	cgDefaultDuration(&config.Timeout, groupDefaultTimeout)
	return nil
}

// validateGroupInstanceID applies the rules Kafka has for instance IDs
// (those of topic names), so that a bad one is reported here rather than
// by the coordinator on every join.
func validateGroupInstanceID(id string) error {
	if len(id) > 249 {
		return fmt.Errorf("GroupInstanceID is %d characters long, more than the 249 Kafka allows", len(id))
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("GroupInstanceID %q has the character %q: only a-z, A-Z, 0-9, '.', '_' and '-' are allowed", id, c)
		}
	}
	return nil
}

func cgDefaultDuration(d *time.Duration, def time.Duration) {
	if *d == 0 {
		*d = def
	}
}

// cgMillisFit tells whether d is non-negative and, in milliseconds, fits
// the int32 fields of the group requests.
func cgMillisFit(d time.Duration) bool {
	return d >= 0 && d/time.Millisecond < math.MaxInt32
}

// PartitionAssignment is a partition given to this member for a generation,
// and where to start reading it.
type PartitionAssignment struct {
	// ID is the partition number.
	ID int

	// Offset is the offset committed by the group for the partition, or the
	// group's StartOffset (FirstOffset or LastOffset) when there is none.
	Offset int64
}

// NewConsumerGroup validates config and returns a group that starts joining
// in the background. Connection and protocol errors are reported by Next.
func NewConsumerGroup(config ConsumerGroupConfig) (*ConsumerGroup, error) {
	if err := config.Validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	cg := &ConsumerGroup{
		config: config,
		next:   make(chan *Generation),
		errs:   make(chan error),
		done:   make(chan struct{}),
		failed: make(chan struct{}),
		ctx:    ctx,
		cancel: cancel,
	}
	cg.client.Addr = TCP(config.Brokers...)
	if config.transport != nil {
		cg.client.Transport = config.transport
	} else {
		// The transport lives until Close, even after cg.ctx is cancelled,
		// so that the final LeaveGroup can still be sent.
		tctx, tcancel := context.WithCancel(context.Background())
		cg.client.Transport = newDialerTransport(tctx, config.Dialer)
		cg.closeTransport = tcancel
	}
	cg.wg.Add(1)
	go func() {
		defer cg.wg.Done()
		if config.GroupProtocol == GroupProtocolConsumer {
			cg.runConsumer()
		} else {
			cg.run()
		}
	}()
	return cg, nil
}

// ConsumerGroup is the membership of one program in a Kafka consumer group.
// Programs use the Generations it returns from Next: each rebalance (a
// member joins or leaves) ends one generation and starts the next, with new
// partition assignments.
type ConsumerGroup struct {
	config ConsumerGroupConfig
	client Client

	next chan *Generation
	errs chan error

	// failed is closed, with fatal set, when the member cannot go on (see
	// fatalGroupError); Next returns fatal from then on.
	failed chan struct{}
	fatal  error

	// staticChecked is set, by the group's goroutine, once the brokers
	// are known to support static membership.
	staticChecked bool

	// owned and ownedGeneration (group goroutine only) are the partitions
	// of the last cooperative generation, sent in the next subscription.
	owned           map[string][]int32
	ownedGeneration int32

	closeOnce      sync.Once
	wg             sync.WaitGroup
	done           chan struct{}
	ctx            context.Context // cancelled by Close: aborts pending requests
	cancel         context.CancelFunc
	closeTransport context.CancelFunc
}

// Close ends the current generation, leaves the group and releases the
// group's resources. It is safe to call more than once.
func (cg *ConsumerGroup) Close() error {
	cg.closeOnce.Do(func() {
		close(cg.done)
		cg.cancel()
	})
	cg.wg.Wait()
	if cg.closeTransport != nil {
		cg.closeTransport()
	}
	return nil
}

// Next waits for the next generation of the group. A new generation is only
// returned once the previous one has ended. Errors met while joining are
// returned here; after Close, Next returns ErrGroupClosed. An error after
// which the member cannot go on (another process took its GroupInstanceID)
// stops the group, and Next returns it from then on.
func (cg *ConsumerGroup) Next(ctx context.Context) (*Generation, error) {
	var gen *Generation
	var err error
	select {
	case gen = <-cg.next:
	case err = <-cg.errs:
	case <-cg.failed:
		err = cg.fatal
	case <-cg.done:
		err = ErrGroupClosed
	case <-ctx.Done():
		err = ctx.Err()
	}
	return gen, err
}

// fatalGroupError is an error after which the member must not join again:
// its GroupInstanceID belongs to another process now, and joining would
// fence that one in turn.
type fatalGroupError struct{ err error }

func (e *fatalGroupError) Error() string { return e.err.Error() }
func (e *fatalGroupError) Unwrap() error { return e.err }

// asFatal returns the fatal form of err when err is one, and nil
// otherwise.
func (cg *ConsumerGroup) asFatal(err error) error {
	var fatal *fatalGroupError
	switch {
	case errors.As(err, &fatal):
		return fatal
	case errors.Is(err, FencedInstanceID):
		return &fatalGroupError{fmt.Errorf("kafka: member of group %s with GroupInstanceID %q was fenced: another member joined with the same GroupInstanceID (%w)",
			cg.config.ID, cg.config.GroupInstanceID, err)}
	}
	return nil
}

// memberLostError ends a classic generation whose heartbeat or commit was
// answered UNKNOWN_MEMBER_ID: the coordinator no longer knows the member.
type memberLostError struct{ group, memberID string }

func (e *memberLostError) Error() string {
	return fmt.Sprintf("kafka: group %s no longer knows member %s (its partitions are lost): joining as a new member: %v", e.group, e.memberID, UnknownMemberId)
}

func (e *memberLostError) Unwrap() error { return UnknownMemberId }

// run joins generation after generation until the group is closed. Only
// the member ID carries over from one generation to the next.
func (cg *ConsumerGroup) run() {
	memberID := ""
	for {
		var err error
		memberID, err = cg.nextGeneration(memberID)
		var wait time.Duration
		switch {
		case err == nil:
			continue
		case cg.asFatal(err) != nil:
			// No LeaveGroup: the member ID is no longer ours to leave with.
			cg.fatal = cg.asFatal(err)
			cg.withErrorLogger(func(l Logger) { l.Printf("%v", cg.fatal) })
			close(cg.failed)
			return
		case errors.Is(err, ErrGroupClosed) || cg.isClosed():
			cg.leaveGroup(memberID)
			return
		case errors.As(err, new(*memberLostError)):
			// Dropped by the coordinator (a session that expired): the
			// partitions are lost, not given up. Next reports it first, so
			// that a Reader stops what it still reads of them; then the
			// member joins again as a new one, at once, as the Java client
			// does (a JoinGroup with the old ID would only be refused).
			cg.owned = nil
			memberID = ""
		case errors.Is(err, RebalanceInProgress):
			// Rejoin at once with the same member ID: the coordinator holds
			// the JoinGroup until the rebalance completes. The partitions
			// owned stay owned.
		default:
			cg.owned = nil
			// Start over as a new member after a pause, so that a broken
			// cluster does not get a tight loop of requests.
			cg.leaveGroup(memberID)
			memberID = ""
			wait = cg.config.JoinGroupBackoff
		}
		select {
		case <-cg.done:
			cg.leaveGroup(memberID)
			return
		case cg.errs <- err:
		}
		if wait > 0 && !sleep(cg.ctx, wait) {
			cg.leaveGroup(memberID)
			return
		}
	}
}

func (cg *ConsumerGroup) isClosed() bool {
	select {
	case <-cg.done:
		return true
	default:
		return false
	}
}

// nextGeneration joins and syncs the group, hands the resulting generation
// to Next, and returns once the generation is over.
func (cg *ConsumerGroup) nextGeneration(memberID string) (string, error) {
	memberID, join, err := cg.joinGroup(memberID)
	if err != nil {
		cg.withErrorLogger(func(l Logger) { l.Printf("failed to join group %s: %v", cg.config.ID, err) })
		return memberID, err
	}
	cg.withLogger(func(l Logger) {
		l.Printf("joined group %s as member %s in generation %d", cg.config.ID, memberID, join.GenerationID)
	})

	var plan GroupMemberAssignments
	if join.LeaderID == memberID && join.SkipAssignment {
		// A static leader that came back (KIP-814): the group kept its
		// assignment, which SyncGroup returns; a new plan would be ignored.
		cg.withLogger(func(l Logger) {
			l.Printf("leader of group %s is back as member %s: the assignment stays as it was", cg.config.ID, memberID)
		})
	} else if join.LeaderID == memberID {
		if plan, err = cg.assignTopicPartitions(join); err != nil {
			cg.withErrorLogger(func(l Logger) { l.Printf("failed to assign partitions of group %s: %v", cg.config.ID, err) })
			return memberID, err
		}
	}

	assigned, err := cg.syncGroup(memberID, join, plan)
	if err != nil {
		cg.withErrorLogger(func(l Logger) { l.Printf("failed to sync group %s: %v", cg.config.ID, err) })
		return memberID, err
	}

	cooperative := cg.isCooperative(join.ProtocolName)
	var revoked map[string][]int32
	if cooperative {
		revoked = revokedPartitions(cg.owned, assigned)
		cg.owned, cg.ownedGeneration = assigned, join.GenerationID
		if len(revoked) > 0 && !cg.config.keepsPartitions {
			// The functions of the previous generation have returned:
			// the revoked partitions are given up already, and the
			// follow-up rebalance can start at once.
			cg.withLogger(func(l Logger) { l.Printf("group %s: gave up %v, rejoining", cg.config.ID, revoked) })
			return memberID, nil
		}
	} else {
		cg.owned = nil
	}

	offsets, err := cg.fetchOffsets(assigned)
	if err != nil {
		cg.withErrorLogger(func(l Logger) { l.Printf("failed to fetch offsets of group %s: %v", cg.config.ID, err) })
		return memberID, err
	}

	gen := cg.newGeneration(join.GenerationID, memberID, cg.makeAssignments(assigned, offsets))
	gen.cooperative, gen.revoked = cooperative, revoked
	gen.startWatchers()

	// Hand the generation to Next, then wait for its end; Close ends it
	// at either step (Next may have no caller anymore).
	handed := false
	for {
		var next chan<- *Generation
		if !handed {
			next = cg.next
		}
		select {
		case next <- gen:
			handed = true
			continue
		case <-gen.ended:
		case <-cg.done:
		}
		gen.close()
		if cg.isClosed() {
			return memberID, ErrGroupClosed
		}
		if err := gen.fatalErr(); err != nil {
			return memberID, err
		}
		if gen.lostMember() {
			return memberID, &memberLostError{group: cg.config.ID, memberID: memberID}
		}
		return memberID, nil
	}
}

func (cg *ConsumerGroup) newGeneration(id int32, memberID string, assignments map[string][]PartitionAssignment) *Generation {
	return &Generation{
		ID:              id,
		GroupID:         cg.config.ID,
		MemberID:        memberID,
		Assignments:     assignments,
		cg:              cg,
		ended:           make(chan struct{}),
		instanceID:      cg.config.GroupInstanceID,
		retentionMillis: cg.config.RetentionTime.Milliseconds(),
		log:             cg.withLogger,
		logError:        cg.withErrorLogger,
	}
}

// startWatchers starts the goroutines whose return ends the generation: the
// heartbeat (it fails when the group rebalances) and the partition count
// watchers.
func (g *Generation) startWatchers() {
	cfg := &g.cg.config
	g.heartbeatLoop(cfg.HeartbeatInterval)
	if !cfg.WatchPartitionChanges {
		return
	}
	for _, topic := range cfg.Topics {
		g.partitionWatcher(cfg.PartitionWatchInterval, topic)
	}
}

func (cg *ConsumerGroup) withLogger(do func(Logger)) {
	if l := cg.config.Logger; l != nil {
		do(l)
	}
}

func (cg *ConsumerGroup) withErrorLogger(do func(Logger)) {
	switch {
	case cg.config.ErrorLogger != nil:
		do(cg.config.ErrorLogger)
	case cg.config.Logger != nil:
		do(cg.config.Logger)
	}
}

// extractTopics returns the topics the members subscribe to, sorted and
// without duplicates.
func extractTopics(members []GroupMember) []string {
	seen := map[string]bool{}
	var topics []string
	for _, m := range members {
		for _, t := range m.Topics {
			if !seen[t] {
				seen[t] = true
				topics = append(topics, t)
			}
		}
	}
	sort.Strings(topics)
	return topics
}
