package kafka

import (
	"context"
	"errors"
)

// coopReader is a partition reader of a cooperative group: it lives as
// long as its partition stays assigned, across generations.
type coopReader struct {
	version int64
	cancel  context.CancelFunc
	done    chan struct{}
}

// reconcile makes the running partition readers those of assignments: the
// readers of partitions no longer assigned stop (reconcile waits for
// them, so that they are given up before the group rejoins), new
// partitions get readers, and the others go on untouched.
func (r *Reader) reconcile(assignments map[string][]PartitionAssignment) {
	want := map[topicPartition]int64{}
	for topic, list := range assignments {
		for _, a := range list {
			want[topicPartition{topic: topic, partition: int32(a.ID)}] = a.Offset
		}
	}
	var stopping []*coopReader
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	// Readers of an eager generation, if the group used one before.
	r.stopReaders()
	r.stopReaders = func() {}
	if r.coop == nil {
		r.coop = map[topicPartition]*coopReader{}
	}
	for k, c := range r.coop {
		if _, ok := want[k]; !ok {
			c.cancel()
			stopping = append(stopping, c)
			delete(r.coop, k)
		}
	}
	for k, offset := range want {
		if _, ok := r.coop[k]; ok {
			continue
		}
		r.generation++
		ctx, cancel := context.WithCancel(r.life)
		c := &coopReader{version: r.generation, cancel: cancel, done: make(chan struct{})}
		r.coop[k] = c
		pr := &partitionReader{reader: r, topic: k.topic, partition: int(k.partition), version: c.version}
		r.workers.Add(1)
		go func(offset int64) {
			defer r.workers.Done()
			defer close(c.done)
			pr.run(ctx, offset)
		}(offset)
	}
	r.mu.Unlock()
	for _, c := range stopping {
		<-c.done
	}
	r.withLogger(func(l Logger) { l.Printf("cooperative group %s: reading %v", r.config.GroupID, want) })
}

// stopCooperative stops every cooperative partition reader: the member
// lost its partitions, or the group went back to an eager balancer.
func (r *Reader) stopCooperative() {
	r.mu.Lock()
	readers := r.coop
	r.coop = nil
	r.carry = nil // not this member's to commit any more
	if len(readers) > 0 {
		r.generation++ // what they queued is stale now
	}
	r.mu.Unlock()
	for _, c := range readers {
		c.cancel()
	}
	for _, c := range readers {
		<-c.done
	}
}

// liveError tells whether an error queued by partition readers of version
// concerns the program still: they are of the current generation or, in a
// cooperative group, one of them is still running.
func (r *Reader) liveError(version int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.coop == nil {
		return version >= r.generation
	}
	for _, c := range r.coop {
		if c.version == version {
			return true
		}
	}
	return false
}

// cooperativeGeneration runs a generation of a cooperative balancer:
// partitions kept go on being read, revoked ones stop, new ones start.
// When partitions were revoked, the generation ends as soon as its commit
// loop has started, so that pending commits are flushed (with this
// generation) before the group rejoins for the follow-up rebalance.
func (r *Reader) cooperativeGeneration(gen *Generation) {
	r.reconcile(gen.Assignments)
	gen.Start(func(ctx context.Context) { r.commitLoop(ctx, gen) })
	if len(gen.revoked) > 0 {
		gen.Start(func(context.Context) {})
	}
}

// lostPartitions tells whether a group error means this member no longer
// owns its partitions (anything but a rebalance in progress).
func lostPartitions(err error) bool {
	return err != nil && !errors.Is(err, RebalanceInProgress)
}
