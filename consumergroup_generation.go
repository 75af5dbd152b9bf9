package kafka

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go/protocol/heartbeat"
	"github.com/segmentio/kafka-go/protocol/offsetcommit"
)

// Generation: what a member owns for one generation of its group (the
// assigned partitions, offset commits, the goroutines of Start), and the
// heartbeat and partition watchers that end it.

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

	// mu guards the closing of ended, and fatal. ended is closed when the
	// generation ends; fns tracks the functions Start began before that,
	// which close waits for.
	mu    sync.Mutex
	ended chan struct{}
	fns   sync.WaitGroup
	// fatal, set with mu held, is the error that ended the generation for
	// good (see fatalGroupError).
	fatal error
	// memberUnknown, set with mu held, records that the coordinator
	// answered a heartbeat or commit of this classic generation with
	// UNKNOWN_MEMBER_ID: the member ID is gone, and the member rejoins as
	// a new one at once (a JoinGroup with the old ID would only be
	// refused, then cost JoinGroupBackoff).
	memberUnknown bool

	instanceID      string
	retentionMillis int64
	log, logError   func(func(Logger))

	// cooperative is set when the group's balancer lets members keep their
	// partitions across generations; revoked are then the partitions of
	// the previous generation that this one takes away.
	cooperative bool
	revoked     map[string][]int32

	// memberEpoch, in a group of the "consumer" protocol, is the member
	// epoch as the heartbeats update it: commits carry the latest one.
	memberEpoch *atomic.Int32
}

// generationContext is the context.Context given to the functions of
// Generation.Start: done when the generation ends, with no deadline and no
// values.
type generationContext struct{ gen *Generation }

func (generationContext) Deadline() (deadline time.Time, ok bool) { return }

func (generationContext) Value(key interface{}) interface{} { return nil }

func (c generationContext) Done() <-chan struct{} { return c.gen.ended }

func (c generationContext) Err() error {
	if chanClosed(c.gen.ended) {
		return ErrGenerationEnded
	}
	return nil
}

// chanClosed reports, without blocking, whether ch is closed.
func chanClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// end marks the generation over; the caller holds g.mu.
func (g *Generation) end() {
	if !chanClosed(g.ended) {
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

// noteError records what err, the answer to one of this generation's
// heartbeats or commits, says about the membership.
func (g *Generation) noteError(err error) {
	if g.memberEpoch != nil || !errors.Is(err, UnknownMemberId) {
		return // the "consumer" protocol handles its own member IDs
	}
	g.mu.Lock()
	g.memberUnknown = true
	g.mu.Unlock()
}

// lostMember tells whether the coordinator no longer knows this
// generation's member ID.
func (g *Generation) lostMember() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.memberUnknown
}

func (g *Generation) fatalErr() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.fatal
}

// close ends the generation and waits for the functions of Start to return.
func (g *Generation) close() {
	g.stop()
	g.fns.Wait()
}

// Start runs fn in a goroutine bound to the generation: fn's context is
// done when the generation ends (its Err is then ErrGenerationEnded), and
// the generation ends when fn returns. The group waits for every fn to
// return before it joins the next generation, so fn must return promptly
// once its context is done.
func (g *Generation) Start(fn func(ctx context.Context)) {
	ctx := generationContext{g}
	g.mu.Lock()
	tracked := !chanClosed(g.ended)
	if tracked {
		// Counted while mu is held, so that close, which ends the
		// generation under mu first, cannot miss it.
		g.fns.Add(1)
	}
	g.mu.Unlock()
	if !tracked {
		// A generation already over still runs fn, whose context is
		// done from the start; nothing waits for it.
		go fn(ctx)
		return
	}
	go func() {
		defer g.fns.Done()
		defer g.stop()
		fn(ctx)
	}()
}

// over tells whether the generation has ended.
func (g *Generation) over() bool { return chanClosed(g.ended) }

// stop ends the generation without waiting for its functions, one of
// which may be the caller; the group then joins the next one.
func (g *Generation) stop() {
	g.mu.Lock()
	g.end()
	g.mu.Unlock()
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
	if g.memberEpoch != nil {
		req.GenerationID = g.memberEpoch.Load()
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
				if errors.Is(err, FencedInstanceID) && g.lostMember() {
					// A late commit with the dropped member ID, after the
					// member rejoined with its GroupInstanceID under a new
					// one: that ID is fenced now, the member is not.
					return err
				}
				if fatal := g.cg.asFatal(err); fatal != nil {
					g.fail(fatal)
					return fatal
				}
				g.noteError(err)
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
				MemberID:        g.MemberID,
				GroupInstanceID: g.instanceID,
				GroupID:         g.GroupID,
				GenerationID:    g.ID,
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
				g.noteError(err)
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
