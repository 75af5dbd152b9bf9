package kafka

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/consumer"
	"github.com/segmentio/kafka-go/protocol/heartbeat"
	"github.com/segmentio/kafka-go/protocol/joingroup"
	"github.com/segmentio/kafka-go/protocol/leavegroup"
	"github.com/segmentio/kafka-go/protocol/metadata"
	"github.com/segmentio/kafka-go/protocol/offsetcommit"
	"github.com/segmentio/kafka-go/protocol/offsetfetch"
	"github.com/segmentio/kafka-go/protocol/syncgroup"
)

// ErrGroupClosed is what ConsumerGroup.Next returns once the group is closed.
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
		cg.run()
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
		return memberID, gen.fatalErr()
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
		allReturned:     make(chan struct{}),
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

// request sends req to the group coordinator (the transport finds it),
// bounded by the group's Timeout plus extra.
func (cg *ConsumerGroup) request(req protocol.Message, extra time.Duration) (protocol.Message, error) {
	ctx, cancel := context.WithTimeout(cg.ctx, cg.config.Timeout+extra)
	defer cancel()
	return cg.client.roundTrip(ctx, nil, req)
}

// joinGroup sends JoinGroup until it gets an answer other than
// MEMBER_ID_REQUIRED (brokers from 2.2 on first hand a new member an ID,
// then expect it to join again with it).
func (cg *ConsumerGroup) joinGroup(memberID string) (string, *joingroup.Response, error) {
	req := &joingroup.Request{
		GroupID:            cg.config.ID,
		SessionTimeoutMS:   int32(cg.config.SessionTimeout / time.Millisecond),
		RebalanceTimeoutMS: int32(cg.config.RebalanceTimeout / time.Millisecond),
		GroupInstanceID:    cg.config.GroupInstanceID,
		ProtocolType:       groupProtocolType,
	}
	if err := cg.checkStaticMembership(); err != nil {
		return memberID, nil, err
	}
	for _, b := range cg.config.GroupBalancers {
		userData, err := b.UserData()
		if err != nil {
			return memberID, nil, fmt.Errorf("unable to construct protocol metadata for member, %v: %w", b.ProtocolName(), err)
		}
		var meta []byte
		if _, ok := b.(cooperativeBalancer); ok {
			meta, err = encodeCooperativeSubscription(cg.config.Topics, cg.owned, cg.ownedGeneration)
		} else {
			meta, err = encodeSubscription(cg.config.Topics, userData)
		}
		if err != nil {
			return memberID, nil, err
		}
		req.Protocols = append(req.Protocols, joingroup.RequestProtocol{Name: b.ProtocolName(), Metadata: meta})
	}

	for attempt := 0; ; attempt++ {
		attemptReq := *req
		attemptReq.MemberID = memberID
		m, err := cg.request(&attemptReq, cg.config.RebalanceTimeout)
		if err != nil {
			return memberID, nil, err
		}
		res := m.(*joingroup.Response)
		if res.ErrorCode == int16(MemberIDRequired) && res.MemberID != "" && attempt < 3 {
			memberID = res.MemberID
			continue
		}
		if err := makeError(res.ErrorCode, ""); err != nil {
			if errors.Is(err, UnknownMemberId) {
				memberID = ""
			}
			return memberID, nil, err
		}
		return res.MemberID, res, nil
	}
}

// checkStaticMembership makes sure, once, that the brokers know static
// membership (JoinGroup v5+, Kafka 2.3): an older broker would drop the
// GroupInstanceID without a word, and the member would be a dynamic one.
func (cg *ConsumerGroup) checkStaticMembership() error {
	if cg.config.GroupInstanceID == "" || cg.staticChecked {
		return nil
	}
	ctx, cancel := context.WithTimeout(cg.ctx, cg.config.Timeout)
	defer cancel()
	res, err := cg.client.ApiVersions(ctx, &ApiVersionsRequest{})
	if err != nil {
		return err
	}
	for _, k := range res.ApiKeys {
		if k.ApiKey == int(protocol.JoinGroup) && k.MaxVersion < 5 {
			return &fatalGroupError{fmt.Errorf("kafka: GroupInstanceID needs brokers that support static membership (JoinGroup v5, Kafka 2.3 or later); this one supports JoinGroup up to v%d: %w",
				k.MaxVersion, UnsupportedVersion)}
		}
	}
	cg.staticChecked = true
	return nil
}

// encodeSubscription writes this member's subscription as version 0 of
// the consumer protocol: version, topics, user data, and nothing after.
// It is the one layout that every leader reads:
//
//   - kafka-go v0.4.51 leaders ignore the version and reject any byte
//     after the user data, so the owned partitions of version 1+ cannot be
//     sent;
//   - librdkafka leaders ignore trailing bytes but, from version 1, require
//     the owned partitions, and drop a member whose version 1 subscription
//     lacks them (the layout kafka-go v0.4.51 writes);
//   - Java's ConsumerProtocolSubscription schema reads version 0 as topics
//     and user data, and fails on a version 1 without owned partitions.
//
// kafka-go never sends owned partitions (its balancers are eager), so
// version 0 loses nothing. Null user data is written empty, as before.
func encodeSubscription(topics []string, userData []byte) ([]byte, error) {
	if userData == nil {
		userData = []byte{}
	}
	return protocol.Marshal(0, consumer.Subscription{Version: 0, Topics: topics, UserData: userData})
}

// encodeAssignment writes an assignment as kafka-go always has: version 1,
// partitions by topic and empty user data.
func encodeAssignment(byTopic map[string][]int) ([]byte, error) {
	a := consumer.Assignment{Version: 1, UserData: []byte{}}
	topics := make([]string, 0, len(byTopic))
	for topic := range byTopic {
		topics = append(topics, topic)
	}
	sort.Strings(topics)
	for _, topic := range topics {
		ids := make([]int32, len(byTopic[topic]))
		for i, p := range byTopic[topic] {
			ids[i] = int32(p)
		}
		a.AssignedPartitions = append(a.AssignedPartitions, consumer.TopicPartition{Topic: topic, Partitions: ids})
	}
	return protocol.Marshal(1, a)
}

// decodeSubscription reads the subscription a member sent in JoinGroup. It
// accepts metadata of any version, including the version 1 header without
// owned partitions that kafka-go releases write.
func decodeSubscription(b []byte) (consumer.Subscription, error) {
	var s consumer.Subscription
	if len(b) < 2 {
		return s, fmt.Errorf("member metadata of %d bytes is too short", len(b))
	}
	version := int16(b[0])<<8 | int16(b[1])
	if version < 0 {
		return s, fmt.Errorf("invalid member metadata version %d", version)
	}
	v := min(version, 3)
	err := protocol.Unmarshal(b, v, &s)
	if err != nil && v > 0 {
		s = consumer.Subscription{}
		err = protocol.Unmarshal(b, 0, &s)
	}
	return s, err
}

// cgDecodeAssignment reads a member assignment of any version; no bytes
// is no assignment.
func cgDecodeAssignment(b []byte) (consumer.Assignment, error) {
	var a consumer.Assignment
	if len(b) == 0 {
		return a, nil
	}
	if len(b) < 2 {
		return a, fmt.Errorf("member assignment of %d bytes is too short", len(b))
	}
	version := int16(b[0])<<8 | int16(b[1])
	if version < 0 {
		return a, fmt.Errorf("invalid member assignment version %d", version)
	}
	err := protocol.Unmarshal(b, min(version, consumer.MaxVersionSupported), &a)
	return a, err
}

// assignTopicPartitions runs, on the leader, the balancer the coordinator
// chose.
func (cg *ConsumerGroup) assignTopicPartitions(join *joingroup.Response) (GroupMemberAssignments, error) {
	balancer, ok := findGroupBalancer(join.ProtocolName, cg.config.GroupBalancers)
	if !ok {
		return nil, fmt.Errorf("unable to find selected balancer, %v, for group, %v", join.ProtocolName, cg.config.ID)
	}
	if cb, ok := balancer.(cooperativeBalancer); ok {
		members, err := cooperativeMembers(join)
		if err != nil {
			return nil, fmt.Errorf("unable to read metadata of a member: %w", err)
		}
		topics := map[string]bool{}
		var list []string
		for _, m := range members {
			for _, t := range m.topics {
				if !topics[t] {
					topics[t] = true
					list = append(list, t)
				}
			}
		}
		sort.Strings(list)
		partitions, err := cg.readPartitions(list...)
		if err != nil {
			return nil, err
		}
		return cb.assignCooperative(members, partitions), nil
	}
	members := make([]GroupMember, 0, len(join.Members))
	for _, m := range join.Members {
		sub, err := decodeSubscription(m.Metadata)
		if err != nil {
			return nil, fmt.Errorf("unable to read metadata for member, %v: %w", m.MemberID, err)
		}
		members = append(members, GroupMember{ID: m.MemberID, Topics: sub.Topics, UserData: sub.UserData})
	}
	partitions, err := cg.readPartitions(extractTopics(members)...)
	if err != nil {
		return nil, err
	}
	cg.withLogger(func(l Logger) {
		l.Printf("using '%v' balancer to assign group %v: %d members, %d partitions", join.ProtocolName, cg.config.ID, len(members), len(partitions))
	})
	plan := balancer.AssignGroups(members, partitions)
	cg.withLogger(func(l Logger) {
		for member, topics := range plan {
			for topic, ids := range topics {
				l.Printf("assigned member/topic/partitions %v/%v/%v", member, topic, ids)
			}
		}
	})
	return plan, nil
}

// readPartitions lists the partitions of topics, sorted by topic and ID. A
// topic that does not exist (yet) has none: it is not an error, as with the
// other clients; WatchPartitionChanges picks it up later. As with the
// original client, brokers that auto-create topics create them here.
func (cg *ConsumerGroup) readPartitions(topics ...string) ([]Partition, error) {
	if len(topics) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(cg.ctx, cg.config.Timeout)
	defer cancel()
	req := &metadata.Request{TopicNames: topics, AllowAutoTopicCreation: true}
	for _, t := range topics {
		req.Topics = append(req.Topics, metadata.RequestTopic{Name: t})
	}
	m, err := cg.client.roundTrip(ctx, nil, req)
	if err != nil {
		return nil, err
	}
	res := m.(*metadata.Response)
	brokers := make(map[int32]Broker, len(res.Brokers))
	for _, b := range res.Brokers {
		brokers[b.NodeID] = Broker{Host: b.Host, Port: int(b.Port), ID: int(b.NodeID), Rack: b.Rack}
	}
	var partitions []Partition
	for _, t := range res.Topics {
		if err := makeError(t.ErrorCode, ""); err != nil {
			if errors.Is(err, UnknownTopicOrPartition) || errors.Is(err, LeaderNotAvailable) {
				continue
			}
			return nil, err
		}
		for _, p := range t.Partitions {
			leader, ok := brokers[p.LeaderID]
			if !ok {
				leader = Broker{ID: int(p.LeaderID)}
			}
			partitions = append(partitions, Partition{
				Topic:  t.Name,
				ID:     int(p.PartitionIndex),
				Leader: leader,
				Error:  makeError(p.ErrorCode, ""),
			})
		}
	}
	sort.Slice(partitions, func(i, j int) bool {
		if partitions[i].Topic != partitions[j].Topic {
			return partitions[i].Topic < partitions[j].Topic
		}
		return partitions[i].ID < partitions[j].ID
	})
	return partitions, nil
}

// syncGroup sends the leader's plan (nil for other members) and returns
// this member's partitions by topic.
func (cg *ConsumerGroup) syncGroup(memberID string, join *joingroup.Response, plan GroupMemberAssignments) (map[string][]int32, error) {
	req := &syncgroup.Request{
		GroupID:         cg.config.ID,
		GenerationID:    join.GenerationID,
		MemberID:        memberID,
		GroupInstanceID: cg.config.GroupInstanceID,
		ProtocolType:    groupProtocolType,
		ProtocolName:    join.ProtocolName,
	}
	members := make([]string, 0, len(plan))
	for id := range plan {
		members = append(members, id)
	}
	sort.Strings(members)
	for _, id := range members {
		b, err := encodeAssignment(plan[id])
		if err != nil {
			return nil, err
		}
		req.Assignments = append(req.Assignments, syncgroup.RequestAssignment{MemberID: id, Assignment: b})
	}

	// The coordinator answers once the leader has sent the assignments:
	// allow for a rebalance's worth of waiting, as for JoinGroup.
	m, err := cg.request(req, cg.config.RebalanceTimeout)
	if err != nil {
		return nil, err
	}
	res := m.(*syncgroup.Response)
	if err := makeError(res.ErrorCode, ""); err != nil {
		return nil, err
	}
	assigned := map[string][]int32{}
	if len(res.Assignments) == 0 {
		cg.withLogger(func(l Logger) {
			l.Printf("received empty assignments for group %v as member %s for generation %d", cg.config.ID, memberID, join.GenerationID)
		})
		return assigned, nil
	}
	a, err := cgDecodeAssignment(res.Assignments)
	if err != nil {
		return nil, err
	}
	for _, tp := range a.AssignedPartitions {
		assigned[tp.Topic] = append(assigned[tp.Topic], tp.Partitions...)
	}
	return assigned, nil
}

// fetchOffsets returns the committed offsets of the assigned partitions;
// partitions without one get the StartOffset.
func (cg *ConsumerGroup) fetchOffsets(assigned map[string][]int32) (map[string]map[int]int64, error) {
	req := &offsetfetch.Request{GroupID: cg.config.ID}
	for _, topic := range cg.config.Topics {
		req.Topics = append(req.Topics, offsetfetch.RequestTopic{Name: topic, PartitionIndexes: append([]int32{}, assigned[topic]...)})
	}
	m, err := cg.request(req, 0)
	if err != nil {
		return nil, err
	}
	topics, code, ok := m.(*offsetfetch.Response).Group(cg.config.ID)
	if !ok {
		return nil, fmt.Errorf("no offsets returned for group %s", cg.config.ID)
	}
	if err := makeError(code, ""); err != nil {
		return nil, err
	}
	offsets := make(map[string]map[int]int64, len(topics))
	for _, t := range topics {
		byPartition := map[int]int64{}
		offsets[t.Name] = byPartition
		for _, p := range t.Partitions {
			for _, id := range assigned[t.Name] {
				if id != p.PartitionIndex {
					continue
				}
				offset := p.CommittedOffset
				if offset < 0 {
					offset = cg.config.StartOffset
				}
				byPartition[int(id)] = offset
			}
		}
	}
	return offsets, nil
}

func (cg *ConsumerGroup) makeAssignments(assigned map[string][]int32, offsets map[string]map[int]int64) map[string][]PartitionAssignment {
	out := make(map[string][]PartitionAssignment, len(cg.config.Topics))
	for _, topic := range cg.config.Topics {
		ids := assigned[topic]
		list := make([]PartitionAssignment, 0, len(ids))
		for _, id := range ids {
			offset, ok := offsets[topic][int(id)]
			if !ok {
				offset = cg.config.StartOffset
			}
			list = append(list, PartitionAssignment{ID: int(id), Offset: offset})
		}
		out[topic] = list
	}
	return out
}

// leaveGroup tells the coordinator this member is gone, so that the others
// rebalance at once instead of after the session timeout. It runs after
// Close too, so it does not use cg.ctx. A static member does not leave
// (KIP-345): its partitions wait for it to come back.
func (cg *ConsumerGroup) leaveGroup(memberID string) {
	if memberID == "" {
		return
	}
	if cg.config.GroupInstanceID != "" {
		cg.withLogger(func(l Logger) {
			l.Printf("static member %s (%s) of group %s does not leave the group", memberID, cg.config.GroupInstanceID, cg.config.ID)
		})
		return
	}
	cg.withLogger(func(l Logger) { l.Printf("leaving group %s, member %s", cg.config.ID, memberID) })
	ctx, cancel := context.WithTimeout(context.Background(), cg.config.Timeout)
	defer cancel()
	m, err := cg.client.roundTrip(ctx, nil, &leavegroup.Request{
		GroupID:  cg.config.ID,
		MemberID: memberID,
		Members:  []leavegroup.RequestMember{{MemberID: memberID}},
	})
	if err == nil {
		res := m.(*leavegroup.Response)
		err = makeError(res.ErrorCode, "")
		for _, mm := range res.Members {
			if err == nil {
				err = makeError(mm.ErrorCode, "")
			}
		}
	}
	if err != nil {
		cg.withErrorLogger(func(l Logger) {
			l.Printf("leave group failed for group, %v, and member, %v: %v", cg.config.ID, memberID, err)
		})
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

// Generation is one generation of a consumer group: the partitions this
// member was assigned, the means to commit offsets for them, and goroutines
// (Start) that live as long as the generation.
type Generation struct {
	// ID is the generation number the coordinator gave.
	ID int32

	// GroupID is the consumer group's ID.
	GroupID string

	// MemberID is this member's ID in the group.
	MemberID string

	// Assignments are this member's partitions by topic, with the offset to
	// start reading each from.
	Assignments map[string][]PartitionAssignment

	cg *ConsumerGroup

	// mu guards the bookkeeping of Start: ended is closed once (isOver
	// then set) when the generation ends; running counts the functions of
	// Start still running, and allReturned is closed when the last of them
	// returns.
	mu          sync.Mutex
	ended       chan struct{}
	isOver      bool
	running     int
	allReturned chan struct{}
	// fatal, set with mu held, is the error that ended the generation for
	// good (see fatalGroupError).
	fatal error

	instanceID      string
	retentionMillis int64
	log, logError   func(func(Logger))

	// cooperative is set when the group's balancer lets members keep their
	// partitions across generations; revoked are then the partitions of
	// the previous generation that this one takes away.
	cooperative bool
	revoked     map[string][]int32
}

// generationContext is the context.Context given to the functions of
// Generation.Start: done when the generation ends.
type generationContext struct{ gen *Generation }

func (c generationContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c generationContext) Done() <-chan struct{}       { return c.gen.ended }
func (c generationContext) Value(interface{}) interface{} {
	return nil
}
func (c generationContext) Err() error {
	select {
	case <-c.gen.ended:
		return ErrGenerationEnded
	default:
		return nil
	}
}

// end marks the generation over; the caller holds g.mu.
func (g *Generation) end() {
	if !g.isOver {
		g.isOver = true
		close(g.ended)
	}
}

// fail ends the generation with an error after which the member must not
// join again.
func (g *Generation) fail(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fatal == nil {
		g.fatal = err
	}
	g.end()
}

func (g *Generation) fatalErr() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.fatal
}

// close ends the generation and waits for the functions of Start to return.
func (g *Generation) close() {
	g.mu.Lock()
	g.end()
	running := g.running > 0
	g.mu.Unlock()
	if running {
		<-g.allReturned
	}
}

// Start runs fn in a goroutine bound to the generation: fn's context is
// done when the generation ends (its Err is then ErrGenerationEnded), and
// the generation ends when fn returns. The group waits for every fn to
// return before it joins the next generation, so fn must return promptly
// once its context is done.
func (g *Generation) Start(fn func(ctx context.Context)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.isOver {
		// Still call fn (the caller may wait for it to run); its context is
		// already done.
		go fn(generationContext{g})
		return
	}
	g.running++
	go func() {
		fn(generationContext{g})
		g.mu.Lock()
		defer g.mu.Unlock()
		g.end()
		g.running--
		if g.running == 0 {
			close(g.allReturned)
		}
	}()
}

// CommitOffsets commits offsets (topic -> partition -> offset of the next
// message to read) for the group, in this generation.
func (g *Generation) CommitOffsets(offsets map[string]map[int]int64) error {
	if len(offsets) == 0 {
		return nil
	}
	req := &offsetcommit.Request{
		GroupID:         g.GroupID,
		GenerationID:    g.ID,
		MemberID:        g.MemberID,
		GroupInstanceID: g.instanceID,
		RetentionTimeMs: g.retentionMillis,
	}
	topics := make([]string, 0, len(offsets))
	for topic := range offsets {
		topics = append(topics, topic)
	}
	sort.Strings(topics)
	for _, topic := range topics {
		t := offsetcommit.RequestTopic{Name: topic}
		for partition, offset := range offsets[topic] {
			t.Partitions = append(t.Partitions, offsetcommit.RequestPartition{
				PartitionIndex:       int32(partition),
				CommittedOffset:      offset,
				CommittedLeaderEpoch: -1,
				CommitTimestamp:      -1,
			})
		}
		sort.Slice(t.Partitions, func(i, j int) bool { return t.Partitions[i].PartitionIndex < t.Partitions[j].PartitionIndex })
		req.Topics = append(req.Topics, t)
	}

	ctx, cancel := context.WithTimeout(context.Background(), g.cg.config.Timeout)
	defer cancel()
	m, err := g.cg.client.roundTrip(ctx, nil, req)
	if err != nil {
		return err
	}
	for _, t := range m.(*offsetcommit.Response).Topics {
		for _, p := range t.Partitions {
			if err := makeError(p.ErrorCode, ""); err != nil {
				if fatal := g.cg.asFatal(err); fatal != nil {
					g.fail(fatal)
					return fatal
				}
				return err
			}
		}
	}
	g.log(func(l Logger) {
		var report []string
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				report = append(report, fmt.Sprintf("%s/%d: %d", t.Name, p.PartitionIndex, p.CommittedOffset))
			}
		}
		l.Printf("committed offsets for group %s: %s", g.GroupID, strings.Join(report, ", "))
	})
	return nil
}

// heartbeatLoop keeps the membership alive; a failed heartbeat (including
// REBALANCE_IN_PROGRESS) ends the generation.
func (g *Generation) heartbeatLoop(interval time.Duration) {
	g.Start(func(ctx context.Context) {
		g.log(func(l Logger) { l.Printf("started heartbeat for group, %v [%v]", g.GroupID, interval) })
		defer g.log(func(l Logger) { l.Printf("stopped heartbeat for group %s", g.GroupID) })
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
			rctx, cancel := context.WithTimeout(g.cg.ctx, g.cg.config.Timeout)
			m, err := g.cg.client.roundTrip(rctx, nil, &heartbeat.Request{
				GroupID:         g.GroupID,
				GenerationID:    g.ID,
				MemberID:        g.MemberID,
				GroupInstanceID: g.instanceID,
			})
			cancel()
			if err == nil {
				err = makeError(m.(*heartbeat.Response).ErrorCode, "")
			}
			if fatal := g.cg.asFatal(err); fatal != nil {
				g.fail(fatal)
				return
			}
			if err != nil {
				if !errors.Is(err, RebalanceInProgress) {
					g.logError(func(l Logger) { l.Printf("heartbeat of group %s failed: %v", g.GroupID, err) })
				}
				return
			}
		}
	})
}

// partitionWatcher ends the generation when the partition count of topic
// changes, so that the group rebalances to cover the new partitions. Kafka
// errors are retried at the next tick; any other failure (the cluster is
// unreachable) ends the generation too, as the next one reconnects.
func (g *Generation) partitionWatcher(interval time.Duration, topic string) {
	count := func() (int, bool) {
		parts, err := g.cg.readPartitions(topic)
		if err == nil {
			return len(parts), true
		}
		g.logError(func(l Logger) { l.Printf("problem getting partitions of %s: %v", topic, err) })
		var kerr Error
		return -1, errors.As(err, &kerr)
	}
	g.Start(func(ctx context.Context) {
		g.log(func(l Logger) {
			l.Printf("started partition watcher for group, %v, topic %v [%v]", g.GroupID, topic, interval)
		})
		defer g.log(func(l Logger) { l.Printf("stopped partition watcher for group, %v, topic %v", g.GroupID, topic) })

		want := -1
		if n, ok := count(); ok && n >= 0 {
			want = n
		} else {
			return
		}
		for sleep(ctx, interval) {
			n, ok := count()
			switch {
			case !ok:
				return
			case n >= 0 && n != want:
				g.log(func(l Logger) { l.Printf("partition changes found, rebalancing group: %v", g.GroupID) })
				return
			}
		}
	})
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
