package kafka

import (
	"context"
	"errors"
	"time"
)

// The consumer-group side of the Reader: the loop that turns generations
// into partition readers, and the commits (synchronous or on an interval).

// run is the group loop of a group reader: for each generation it starts
// the partition readers of the assignment and the commit loop, until Close.
func (r *Reader) run(cg *ConsumerGroup) {
	defer close(r.groupDone)
	defer cg.Close()
	r.withLogger(func(l Logger) { l.Printf("entering loop for consumer group, %v", r.config.GroupID) })

	for r.life.Err() == nil {
		gen, err := r.nextGeneration(cg)
		var fatal *fatalGroupError
		if errors.As(err, &fatal) {
			r.fail(fatal)
			return
		}
		if err != nil {
			// Tell a waiting FetchMessage, if any, and keep trying.
			select {
			case r.groupErr <- err:
			default:
			}
			continue
		}
		if gen == nil {
			return
		}
		r.stats.rebalances.add(1)
		if gen.cooperative {
			r.cooperativeGeneration(gen)
			continue
		}
		r.stopCooperative()
		r.subscribe(gen.Assignments)
		gen.Start(func(ctx context.Context) { r.commitLoop(ctx, gen) })
		gen.Start(func(ctx context.Context) {
			select {
			case <-ctx.Done():
			case <-r.life.Done():
			}
			r.unsubscribe()
		})
	}
}

// fail stops the reader for good after an error of its group that it
// cannot recover from. Messages still queued are dropped: they come from
// partitions that another member reads now.
func (r *Reader) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.groupFatal != nil {
		return
	}
	r.generation++
	r.groupFatal = err
	close(r.groupFailed)
}

// nextGeneration waits for the group's next generation, trying up to
// MaxAttempts times; it returns nil, nil once the reader is closed.
func (r *Reader) nextGeneration(cg *ConsumerGroup) (*Generation, error) {
	var err error
	for i := 0; i < r.config.MaxAttempts; i++ {
		var gen *Generation
		if gen, err = cg.Next(r.life); err == nil {
			return gen, nil
		}
		if r.life.Err() != nil {
			return nil, nil
		}
		r.stats.errors.add(1)
		if lostPartitions(err) {
			r.stopCooperative()
		}
		var fatal *fatalGroupError
		if errors.As(err, &fatal) {
			break // the group logged it, and stopped
		}
		r.withErrorLogger(func(l Logger) { l.Printf("%v", err) })
	}
	return nil, err
}

// subscribe starts partition readers for the assignments of a generation.
func (r *Reader) subscribe(assignments map[string][]PartitionAssignment) {
	offsets := make(map[topicPartition]int64)
	for topic, list := range assignments {
		for _, a := range list {
			offsets[topicPartition{topic: topic, partition: int32(a.ID)}] = a.Offset
		}
	}
	r.mu.Lock()
	r.startReaders(offsets)
	r.mu.Unlock()
	r.withLogger(func(l Logger) { l.Printf("subscribed to topics and partitions: %+v", offsets) })
}

// unsubscribe stops the partition readers at the end of a generation.
// The messages they queued are not returned any more (the generation
// count moves on, so FetchMessage skips them): their partitions may be
// another member's already, which reads them again from the group's
// commits; returned now, they would be read twice and their commits could
// move the other member's back.
func (r *Reader) unsubscribe() {
	r.mu.Lock()
	stop := r.stopReaders
	r.generation++
	r.mu.Unlock()
	stop()
	r.workers.Wait()
}

// offsetStash collects the offsets to commit: topic -> partition -> offset.
type offsetStash map[string]map[int]int64

// merge keeps, per partition, the highest offset.
func (o offsetStash) merge(commits []commit) {
	for _, c := range commits {
		o.add(c.topic, c.partition, c.offset)
	}
}

// mergeStash merges the offsets of other, as merge does.
func (o offsetStash) mergeStash(other offsetStash) {
	for topic, parts := range other {
		for partition, offset := range parts {
			o.add(topic, partition, offset)
		}
	}
}

// add keeps offset for the partition if it is higher than the one kept.
func (o offsetStash) add(topic string, partition int, offset int64) {
	byPartition := o[topic]
	if byPartition == nil {
		byPartition = map[int]int64{}
		o[topic] = byPartition
	}
	if cur, ok := byPartition[partition]; !ok || offset > cur {
		byPartition[partition] = offset
	}
}

func (o offsetStash) reset() {
	for k := range o {
		delete(o, k)
	}
}

// commitWithRetry commits offsets, trying up to readerCommitAttempts times.
// A fatal error (see fatalGroupError) is not retried: it stops the reader
// before the caller hears of it. Nor is UNKNOWN_MEMBER_ID: the member ID
// is gone, and a retry once the member has rejoined (a static member under
// a new ID) could only be refused again.
func (r *Reader) commitWithRetry(gen *Generation, offsets offsetStash) error {
	err := gen.CommitOffsets(offsets)
	var fatal *fatalGroupError
	for attempt := 1; err != nil && attempt < readerCommitAttempts && !errors.As(err, &fatal) && !errors.Is(err, UnknownMemberId) && !refusedForGeneration(gen, err); attempt++ {
		if !sleep(r.life, backoff(attempt, readerCommitBackoffMin, readerCommitBackoffMax)) {
			break
		}
		err = gen.CommitOffsets(offsets)
	}
	if errors.As(err, &fatal) {
		r.fail(fatal)
	}
	if gen.cooperative && gen.memberEpoch == nil && errors.Is(err, UnknownMemberId) && !gen.over() {
		// The coordinator no longer counts this member: the partitions it
		// kept reading across rebalances may be another member's already,
		// so they stop now, and the member rejoins, rather than when a
		// heartbeat fails too. Only while the generation lasts: the group
		// then waits for this commit loop before the next generation, whose
		// partition readers this must not stop; a generation that is over
		// is being replaced anyway. Classic groups only: a member of the
		// "consumer" protocol learns it was dropped from its heartbeats,
		// which fence it and reassign (consumergroup_consumer.go).
		// ILLEGAL_GENERATION does not mean as much: a member still in the
		// group gets it during the follow-up rebalance.
		r.stopCooperative()
		gen.stop()
	}
	return err
}

// refusedForGeneration tells whether err means the coordinator refuses
// every commit of gen from now on: REBALANCE_IN_PROGRESS and
// ILLEGAL_GENERATION name a generation ID that can only be replaced, never
// accepted again. Retrying them would only delay the rejoin the group waits
// for, past the join deadline, and cost the member its partitions. A
// member of the "consumer" protocol sends the latest epoch each time, so
// its retries are not concerned.
func refusedForGeneration(gen *Generation, err error) bool {
	return gen.memberEpoch == nil && (errors.Is(err, RebalanceInProgress) || errors.Is(err, IllegalGeneration))
}

// commitCarry is what a cooperative generation could not commit, for the
// next generation of the same member (carryCommits, takeCarried).
type commitCarry struct {
	memberID string
	offsets  offsetStash
}

// carryCommits keeps offsets a cooperative generation could not commit
// because it ended (refusedForGeneration): the member keeps reading the
// partitions it is assigned again, and the next generation's commit loop
// commits them (takeCarried). Only periodic commits: a CommitMessages
// caller heard of the failure and decides for itself.
func (r *Reader) carryCommits(gen *Generation, pending offsetStash, err error) {
	if err == nil || !gen.cooperative || r.syncCommits() || !refusedForGeneration(gen, err) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.carry == nil || r.carry.memberID != gen.MemberID {
		r.carry = &commitCarry{memberID: gen.MemberID, offsets: offsetStash{}}
	}
	r.carry.offsets.mergeStash(pending)
}

// takeCarried moves the offsets carried from the previous generation to
// pending, if gen is one of the same member. A member that lost its
// partitions meanwhile (stopCooperative drops the carry) or joined again
// under another ID may have had them taken over by another member, whose
// commits these must not move back. Of the partitions carried, those gen
// does not give the member are left out by keepOwned, as any commit is.
func (r *Reader) takeCarried(gen *Generation, pending offsetStash) {
	r.mu.Lock()
	carry := r.carry
	r.carry = nil
	r.mu.Unlock()
	if carry != nil && carry.memberID == gen.MemberID {
		pending.mergeStash(carry.offsets)
	}
}

// committable returns the partitions whose offsets gen commits: those
// assigned to the member, and those it gives up (their last commits go
// out with the generation that revokes them).
func committable(gen *Generation) map[topicPartition]bool {
	owned := map[topicPartition]bool{}
	for topic, list := range gen.Assignments {
		for _, a := range list {
			owned[topicPartition{topic: topic, partition: int32(a.ID)}] = true
		}
	}
	for topic, list := range gen.revoked {
		for _, p := range list {
			owned[topicPartition{topic: topic, partition: p}] = true
		}
	}
	return owned
}

// keepOwned drops from pending the partitions not in owned: messages read
// in an earlier generation of partitions another member reads now
// (CommitMessages called late, reads of a generation that had ended). The
// coordinator would take the commit, since it does not check who owns a
// partition, and move the other member's commits back; not committing
// them only means the group reads them again, as it would have anyway.
func (r *Reader) keepOwned(owned map[topicPartition]bool, pending offsetStash) {
	var dropped []topicPartition
	for topic, parts := range pending {
		for p := range parts {
			if key := (topicPartition{topic: topic, partition: int32(p)}); !owned[key] {
				dropped = append(dropped, key)
				delete(parts, p)
			}
		}
		if len(parts) == 0 {
			delete(pending, topic)
		}
	}
	if len(dropped) > 0 {
		// The error log: a program committing partitions it does not read
		// (setting a group's offsets by hand, say) hears of it there.
		r.withErrorLogger(func(l Logger) {
			l.Printf("group %s: not committing offsets of partitions this member no longer reads: %v", r.config.GroupID, dropped)
		})
	}
}

// commitLoop serves CommitMessages for one generation. Synchronous commits
// are sent as they come and answered; periodic ones accumulate and are
// sent every CommitInterval. When the generation ends (Close included),
// whatever is queued or pending is committed once more, and the callers
// still waiting get that result.
func (r *Reader) commitLoop(ctx context.Context, gen *Generation) {
	r.withLogger(func(l Logger) { l.Printf("started commit for group %s", r.config.GroupID) })
	defer r.withLogger(func(l Logger) { l.Printf("stopped commit for group %s", r.config.GroupID) })

	pending := offsetStash{}
	var tick <-chan time.Time
	if !r.syncCommits() {
		ticker := time.NewTicker(r.config.CommitInterval)
		defer ticker.Stop()
		tick = ticker.C
	}
	owned := committable(gen)
	flush := func() error {
		r.keepOwned(owned, pending)
		err := r.commitWithRetry(gen, pending)
		if err == nil {
			pending.reset()
		} else if !r.syncCommits() {
			r.withErrorLogger(func(l Logger) { l.Printf("%v", err) })
		}
		return err
	}
	if r.takeCarried(gen, pending); len(pending) > 0 && ctx.Err() == nil {
		// Committed now, not at the first tick, which may be far. A
		// generation that already ended commits them once, as it ends.
		flush()
	}

	for {
		select {
		case req := <-r.commitQueue:
			pending.merge(req.commits)
			if req.errch != nil {
				err := flush()
				pending.reset() // the caller gets the error; nothing is retried later
				req.errch <- err
			}
		case <-tick:
			r.takeReadCommits(pending)
			flush()
		case <-ctx.Done():
			r.takeReadCommits(pending)
			var waiting []chan<- error
			for more := true; more; {
				select {
				case req := <-r.commitQueue:
					pending.merge(req.commits)
					if req.errch != nil {
						waiting = append(waiting, req.errch)
					}
				default:
					more = false
				}
			}
			err := flush()
			for _, ch := range waiting {
				ch <- err
			}
			r.carryCommits(gen, pending, err)
			return
		}
	}
}
