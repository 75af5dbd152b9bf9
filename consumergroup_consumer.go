package kafka

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/consumergroupheartbeat"
)

// The "consumer" group protocol (KIP-848, Kafka 4.0): the member sends
// ConsumerGroupHeartbeat, the coordinator assigns the partitions and
// answers with them, and there is no JoinGroup/SyncGroup. Each assignment
// that differs from what the member owns becomes a Generation (its ID the
// member epoch) with the partitions it takes away as revoked, as for the
// cooperative balancer: the Reader stops those, commits their offsets and
// ends the generation, and only then does the member acknowledge the new
// set in its next heartbeat. A ConsumerGroup used directly gives every
// partition up at each generation's end (its Start functions return), so
// there the member acknowledges as soon as the previous generation closed.

// Values of ReaderConfig.GroupProtocol and ConsumerGroupConfig.GroupProtocol.
const (
	GroupProtocolClassic  = "classic"
	GroupProtocolConsumer = "consumer"
)

// validateGroupProtocol checks the settings of the group protocol chosen;
// field names the option in errors (ReaderConfig.GroupProtocol).
func validateGroupProtocol(field, protocol, assignor string) error {
	switch protocol {
	case "", GroupProtocolClassic:
		if assignor != "" {
			return fmt.Errorf("kafka: ServerAssignor needs %s %q", field, GroupProtocolConsumer)
		}
	case GroupProtocolConsumer:
	default:
		return fmt.Errorf("kafka: %s is %q: it must be %q (the default) or %q", field, protocol, GroupProtocolClassic, GroupProtocolConsumer)
	}
	return nil
}

// consumerMember is the state of a member of a "consumer" group, owned by
// the group's goroutine (runConsumer). Only epoch is read elsewhere: the
// generations commit with the latest member epoch.
type consumerMember struct {
	cg       *ConsumerGroup
	memberID string
	epoch    atomic.Int32
	interval time.Duration
	failures int // heartbeats failed in a row (transient errors)

	// owned are the partitions the member reads now; sendOwned is set
	// when the coordinator has not heard of them yet, full when the next
	// heartbeat must carry the whole member state (join, or after a
	// failed heartbeat).
	owned     map[string][]int32
	sendOwned bool
	full      bool

	// latest is the last assignment the coordinator sent, as topic IDs
	// (resolved to names when reconciled); reconciling is the assignment
	// of a generation whose revoked partitions the Reader is giving up.
	latest      []consumergroupheartbeat.TopicPartitions
	reconciling map[string][]int32

	// gen is the current generation; handed once Next returned it.
	gen    *Generation
	handed bool

	// names and ids map topic IDs to names and back.
	names map[[16]byte]string
	ids   map[string][16]byte
}

// newMemberID makes the member ID the client chooses (Kafka 4.0 expects
// one in ConsumerGroupHeartbeat v1): 16 random bytes, as the Java client's
// UUIDs, in URL-safe base64.
func newMemberID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// checkConsumerProtocol makes sure that the brokers support
// ConsumerGroupHeartbeat; an older one would answer with an error that
// does not say what to change.
func (cg *ConsumerGroup) checkConsumerProtocol() error {
	if _, supported, err := cg.brokerMaxVersion(protocol.ConsumerGroupHeartbeat); err != nil || supported {
		return err
	}
	option := "ConsumerGroupConfig.GroupProtocol"
	if cg.config.keepsPartitions {
		option = "ReaderConfig.GroupProtocol"
	}
	return &fatalGroupError{fmt.Errorf("kafka: %s %q needs Kafka 4.0 or later (brokers that support ConsumerGroupHeartbeat, KIP-848); this broker does not, use %q: %w",
		option, GroupProtocolConsumer, GroupProtocolClassic, UnsupportedVersion)}
}

// runConsumer is run for the "consumer" protocol: it heartbeats until the
// group is closed or fails, and turns assignments into generations.
func (cg *ConsumerGroup) runConsumer() {
	m := &consumerMember{cg: cg, memberID: newMemberID(), full: true, interval: cg.config.HeartbeatInterval}
	checked := false
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		var next chan<- *Generation
		var ended <-chan struct{}
		if m.gen != nil && !m.handed {
			next = cg.next
		}
		if m.gen != nil {
			ended = m.gen.ended
		}
		select {
		case <-cg.done:
			m.leave()
			return
		case next <- m.gen:
			m.handed = true
			continue
		case <-ended:
			if err := m.gen.fatalErr(); err != nil {
				m.closeGeneration()
				cg.stop(err)
				return
			}
			m.generationEnded()
		case <-timer.C:
			err := error(nil)
			if !checked {
				if err = cg.checkConsumerProtocol(); err == nil {
					checked = true
				} else if fatal := cg.asFatal(err); fatal != nil {
					cg.stop(fatal)
					return
				}
			}
			if err == nil {
				err = m.heartbeat()
			}
			if err != nil {
				if !m.failed(err) {
					return
				}
			}
		}
		m.reconcile()
		wait := m.interval
		switch {
		case m.failures > 0:
			wait = backoff(m.failures, 100*time.Millisecond, min(m.interval, time.Second))
		case m.sendOwned || m.full:
			wait = 0
		}
		timer.Stop()
		select {
		case <-timer.C:
		default:
		}
		timer.Reset(wait)
	}
}

// stop ends the group for good with err (see fatalGroupError).
func (cg *ConsumerGroup) stop(err error) {
	cg.fatal = err
	cg.withErrorLogger(func(l Logger) { l.Printf("%v", err) })
	close(cg.failed)
}

// heartbeat sends one ConsumerGroupHeartbeat and takes in the answer.
func (m *consumerMember) heartbeat() error {
	cfg := &m.cg.config
	req := &consumergroupheartbeat.Request{
		GroupID:            cfg.ID,
		MemberID:           m.memberID,
		MemberEpoch:        m.epoch.Load(),
		InstanceID:         cfg.GroupInstanceID,
		RebalanceTimeoutMs: -1,
	}
	if m.full {
		req.RebalanceTimeoutMs = int32(cfg.RebalanceTimeout / time.Millisecond)
		req.SubscribedTopicNames = append([]string{}, cfg.Topics...)
		req.ServerAssignor = cfg.ServerAssignor
	}
	if m.full || m.sendOwned {
		// Empty, not null, when joining: brokers refuse anything else.
		req.TopicPartitions = []consumergroupheartbeat.TopicPartitions{}
		for _, topic := range sortedTopics(m.owned) {
			ids := slices.Clone(m.owned[topic])
			slices.Sort(ids)
			req.TopicPartitions = append(req.TopicPartitions, consumergroupheartbeat.TopicPartitions{TopicID: m.ids[topic], Partitions: ids})
		}
	}
	msg, err := m.cg.request(req, 0)
	if err != nil {
		return err
	}
	res := msg.(*consumergroupheartbeat.Response)
	if err := makeError(res.ErrorCode, res.ErrorMessage); err != nil {
		return err
	}
	if res.MemberID != "" {
		m.memberID = res.MemberID
	}
	if res.HeartbeatIntervalMs > 0 {
		m.interval = time.Duration(res.HeartbeatIntervalMs) * time.Millisecond
	}
	if m.epoch.Load() == 0 {
		m.cg.withLogger(func(l Logger) {
			l.Printf("joined group %s as member %s with epoch %d", cfg.ID, m.memberID, res.MemberEpoch)
		})
	}
	m.epoch.Store(res.MemberEpoch)
	m.full, m.sendOwned, m.failures = false, false, 0
	if res.Assignment != nil {
		m.latest = res.Assignment.TopicPartitions
	}
	return nil
}

// failed handles a failed heartbeat, and tells whether the group goes on.
func (m *consumerMember) failed(err error) bool {
	cg := m.cg
	if cg.isClosed() {
		return true // the next loop turn leaves
	}
	var kerr Error
	isKafka := errors.As(err, &kerr)
	switch {
	case errors.Is(err, FencedInstanceID) || errors.Is(err, UnreleasedInstanceID):
		m.closeGeneration()
		cg.stop(&fatalGroupError{fmt.Errorf("kafka: member of group %s with GroupInstanceID %q cannot join: another member uses the same GroupInstanceID (%w)",
			cg.config.ID, cg.config.GroupInstanceID, err)})
		return false
	case !isKafka || kerr.Temporary():
		// The coordinator moved or cannot be reached: the member keeps
		// its partitions until it hears otherwise, and says everything
		// again in the next heartbeat.
		m.failures++
		m.full = true
		cg.withErrorLogger(func(l Logger) { l.Printf("heartbeat of group %s failed: %v", cg.config.ID, err) })
		return true
	}
	// Fenced (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID) or refused: the
	// partitions are not ours anymore. Join again with epoch 0 and the
	// same member ID, at once when fenced, after JoinGroupBackoff else.
	cg.withErrorLogger(func(l Logger) { l.Printf("group %s: member %s lost its partitions: %v", cg.config.ID, m.memberID, err) })
	m.closeGeneration()
	m.owned, m.latest, m.reconciling = nil, nil, nil
	m.epoch.Store(consumergroupheartbeat.JoinEpoch)
	m.full = true
	if errors.Is(err, UnknownMemberId) {
		// The coordinator forgot the member: join as a new one.
		m.memberID = newMemberID()
	}
	select {
	case cg.errs <- err:
	case <-cg.done:
		return true
	}
	if !errors.Is(err, FencedMemberEpoch) && !errors.Is(err, UnknownMemberId) {
		if !sleep(cg.ctx, cg.config.JoinGroupBackoff) {
			return true
		}
	}
	return true
}

// closeGeneration ends the current generation and waits for its functions
// (the Reader's commit loop flushes its commits then).
func (m *consumerMember) closeGeneration() {
	if m.gen != nil {
		m.gen.close()
		m.gen, m.handed = nil, false
	}
}

// generationEnded follows the end of the current generation: when it
// revoked partitions, they are given up now and the coordinator is told;
// the partitions kept go on in a generation without revocations.
func (m *consumerMember) generationEnded() {
	assignments := m.gen.Assignments
	m.closeGeneration()
	if m.reconciling != nil {
		m.owned, m.reconciling = m.reconciling, nil
		m.sendOwned = true
	}
	m.newGeneration(assignments, nil)
}

func (m *consumerMember) newGeneration(assignments map[string][]PartitionAssignment, revoked map[string][]int32) {
	gen := m.cg.newGeneration(m.epoch.Load(), m.memberID, assignments)
	gen.cooperative, gen.revoked, gen.memberEpoch = true, revoked, &m.epoch
	m.gen, m.handed = gen, false
}

// reconcile starts a generation for the latest assignment when it differs
// from what the member owns, unless one is still giving partitions up.
func (m *consumerMember) reconcile() {
	if m.latest == nil || m.reconciling != nil || m.epoch.Load() <= 0 {
		return
	}
	target, ok := m.resolve(m.latest)
	if !ok {
		return // topics not known yet: at the next heartbeat
	}
	if m.gen != nil && samePartitions(target, m.owned) {
		return
	}
	revoked := revokedPartitions(m.owned, target)
	added := revokedPartitions(target, m.owned)
	var offsets map[string]map[int]int64
	if len(added) > 0 {
		var err error
		if offsets, err = m.cg.fetchOffsets(added); err != nil {
			m.cg.withErrorLogger(func(l Logger) { l.Printf("failed to fetch offsets of group %s: %v", m.cg.config.ID, err) })
			return // again after the next heartbeat
		}
	}
	m.closeGeneration()
	m.cg.withLogger(func(l Logger) {
		l.Printf("group %s: member %s epoch %d assigned %v, revoked %v", m.cg.config.ID, m.memberID, m.epoch.Load(), target, revoked)
	})
	if !m.cg.config.keepsPartitions {
		// The generation just closed gave every partition up (its
		// functions returned): nothing is left to revoke.
		revoked = nil
	}
	m.newGeneration(m.cg.makeAssignments(target, offsets), revoked)
	if len(revoked) > 0 {
		m.reconciling = target
	} else {
		m.owned, m.sendOwned = target, true
	}
}

// resolve names the topics of an assignment, reading the topic IDs of the
// subscribed topics when one is unknown.
func (m *consumerMember) resolve(tps []consumergroupheartbeat.TopicPartitions) (map[string][]int32, bool) {
	for refreshed := false; ; refreshed = true {
		out := map[string][]int32{}
		known := true
		for _, tp := range tps {
			name, ok := m.names[tp.TopicID]
			if !ok {
				known = false
				break
			}
			out[name] = append(out[name], tp.Partitions...)
		}
		if known {
			return out, true
		}
		if refreshed || !m.readTopicIDs() {
			return nil, false
		}
	}
}

func (m *consumerMember) readTopicIDs() bool {
	res, err := m.cg.readMetadata(m.cg.config.Topics...)
	if err != nil {
		m.cg.withErrorLogger(func(l Logger) { l.Printf("group %s: reading topic IDs: %v", m.cg.config.ID, err) })
		return false
	}
	m.names, m.ids = map[[16]byte]string{}, map[string][16]byte{}
	for _, t := range res.Topics {
		m.names[t.TopicID] = t.Name
		m.ids[t.Name] = t.TopicID
	}
	return true
}

// leave ends the generation (its commits are flushed with the member
// epoch) and leaves the group: a static member with epoch -2, so that it
// gets its partitions back when it returns within the session timeout, a
// dynamic one with -1. It runs after Close, so it does not use cg.ctx.
func (m *consumerMember) leave() {
	m.closeGeneration()
	if m.epoch.Load() <= 0 {
		return
	}
	cfg := &m.cg.config
	epoch := int32(consumergroupheartbeat.LeaveEpoch)
	if cfg.GroupInstanceID != "" {
		epoch = consumergroupheartbeat.StaticLeaveEpoch
	}
	m.cg.withLogger(func(l Logger) { l.Printf("leaving group %s, member %s (epoch %d)", cfg.ID, m.memberID, epoch) })
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
	defer cancel()
	msg, err := m.cg.client.roundTrip(ctx, nil, &consumergroupheartbeat.Request{
		GroupID:            cfg.ID,
		MemberID:           m.memberID,
		MemberEpoch:        epoch,
		InstanceID:         cfg.GroupInstanceID,
		RebalanceTimeoutMs: -1,
	})
	if err == nil {
		res := msg.(*consumergroupheartbeat.Response)
		err = makeError(res.ErrorCode, res.ErrorMessage)
	}
	if err != nil {
		m.cg.withErrorLogger(func(l Logger) { l.Printf("leaving group %s as member %s failed: %v", cfg.ID, m.memberID, err) })
	}
}

// samePartitions tells whether a and b hold the same partitions.
func samePartitions(a, b map[string][]int32) bool {
	return len(revokedPartitions(a, b)) == 0 && len(revokedPartitions(b, a)) == 0
}
