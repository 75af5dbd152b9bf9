package kafka

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	metadataAPI "github.com/segmentio/kafka-go/protocol/metadata"
)

// writerMetadataTTL is how long the Writer trusts a topic's partition count
// before asking again. The Transport caches metadata too; this cache only
// spares a request per WriteMessages call, and collapses concurrent lookups.
const writerMetadataTTL = time.Second

// writerMetadata caches the partition count of the topics a Writer writes to.
type writerMetadata struct {
	mu     sync.Mutex
	topics map[string]*writerTopicMeta
	// last is the topic looked up last while its count is fresh: a
	// Writer usually writes to one topic, and one-message WriteMessages
	// calls then find its count without taking mu (a lock and a map
	// lookup per call, measured at about 5% of the CPU of a stream of
	// 100-byte messages).
	last atomic.Pointer[writerFreshCount]
	// leaders is the leader of each partition of the topics looked up, as
	// of their last lookup (-1: none); it outlives invalidate, since a
	// stale leader is still the best guess of which sink a partition's
	// batch goes to (the transport routes the request in any case).
	leaders map[string][]int32
}

// writerFreshCount is a partition count as long as valid holds; valid is
// cleared, under writerMetadata.mu, when the count stops being fresh or
// the topic is invalidated.
type writerFreshCount struct {
	topic string
	count int
	valid atomic.Bool
}

type writerTopicMeta struct {
	count int
	// fast is this entry's count as published in writerMetadata.last
	// while it is fresh, nil once stale: a timer withdraws it
	// writerMetadataTTL after count was fetched (every WriteMessages call
	// checks freshness, and reading the clock there cost more than the
	// rest of the lookup).
	fast    *writerFreshCount
	loading chan struct{} // non-nil while a lookup is in progress
	// invalidated is set when the topic is invalidated while a lookup is
	// in progress: its answer may predate the change being reported, so
	// it is returned to its caller but not kept as fresh.
	invalidated bool
}

func (m *writerMetadata) init() {
	m.topics = make(map[string]*writerTopicMeta)
	m.leaders = make(map[string][]int32)
}

// leader returns the leader of key as last looked up, -1 if unknown.
func (m *writerMetadata) leader(key topicPartition) int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l := m.leaders[key.topic]; int(key.partition) < len(l) {
		return l[key.partition]
	}
	return -1
}

func (m *writerMetadata) invalidate(topic string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.topics[topic]
	switch {
	case e == nil:
	case e.loading != nil:
		e.invalidated = true
	default:
		e.stale()
		delete(m.topics, topic)
	}
}

// stale withdraws the published count of e. Called with mu held.
func (e *writerTopicMeta) stale() {
	if e.fast != nil {
		e.fast.valid.Store(false)
		e.fast = nil
	}
}

// partitions returns the number of partitions of topic. others, when not
// nil, is called (with m.mu held: it must only read the call's messages)
// if the Writer has never looked topic up: it returns other topics of the
// call, and those the Writer has not seen either are looked up in the same
// request (a call writing to 100 new topics would otherwise wait for 100
// lookups, one after the other).
func (w *Writer) partitions(ctx context.Context, topic string, others func() []string) (int, error) {
	m := &w.state().meta
	if f := m.last.Load(); f != nil && f.topic == topic && f.valid.Load() {
		return f.count, nil
	}
	for {
		var also []string
		m.mu.Lock()
		e := m.topics[topic]
		switch {
		case e == nil:
			e = &writerTopicMeta{}
			m.topics[topic] = e
			if others != nil {
				also = others()
			}
		case e.loading != nil:
			// Someone is asking already: wait for the answer.
			loading := e.loading
			m.mu.Unlock()
			select {
			case <-loading:
				continue
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		case e.count > 0 && e.fast != nil:
			n := e.count
			m.last.Store(e.fast)
			m.mu.Unlock()
			return n, nil
		}
		loading := make(chan struct{})
		e.loading = loading
		// The other new topics wait for the same answer; one already
		// known or being looked up is left alone.
		var alsoMeta []*writerTopicMeta
		kept := also[:0]
		for _, name := range also {
			if name == topic || m.topics[name] != nil {
				continue
			}
			o := &writerTopicMeta{loading: loading}
			m.topics[name] = o
			kept = append(kept, name)
			alsoMeta = append(alsoMeta, o)
		}
		also = kept
		m.mu.Unlock()

		var n int
		var leaders []int32
		var err error
		var found map[string][]int32
		if len(also) > 0 {
			found, err = w.fetchPartitions(ctx, append([]string{topic}, also...))
			if l, ok := found[topic]; ok && err == nil {
				n, leaders = len(l), l
			}
		}
		if n == 0 {
			n, leaders, err = w.lookupPartitions(ctx, topic)
		}

		m.mu.Lock()
		m.storeLocked(topic, e, n, leaders, err)
		for i, name := range also {
			// Those the answer did not cover are left to their own
			// lookup (an entry with no count and no lookup in progress).
			l, ok := found[name]
			var oerr error
			if !ok {
				oerr = UnknownTopicOrPartition
			}
			m.storeLocked(name, alsoMeta[i], len(l), l, oerr)
		}
		close(loading)
		m.mu.Unlock()
		return n, err
	}
}

// storeLocked ends the lookup of topic (entry e): on success it publishes
// the count, fresh for writerMetadataTTL, and the leaders. m.mu must be
// held.
func (m *writerMetadata) storeLocked(topic string, e *writerTopicMeta, n int, leaders []int32, err error) {
	e.loading = nil
	if err == nil {
		m.leaders[topic] = leaders
	}
	if e.invalidated {
		// The answer goes to this caller only: whoever waited for it,
		// and every later call, asks again.
		e.invalidated = false
		e.count = 0
		return
	}
	if err != nil {
		return
	}
	e.count = n
	f := &writerFreshCount{topic: topic, count: n}
	f.valid.Store(true)
	e.fast = f
	m.last.Store(f)
	time.AfterFunc(writerMetadataTTL, func() {
		m.mu.Lock()
		if e.fast == f {
			e.stale()
		}
		m.mu.Unlock()
	})
}

// lookupPartitions asks the cluster, retrying while the topic is being
// created or its leaders elected.
func (w *Writer) lookupPartitions(ctx context.Context, topic string) (int, []int32, error) {
	for attempt := 1; ; attempt++ {
		found, err := w.fetchPartitions(ctx, []string{topic})
		leaders := found[topic]
		n := len(leaders)
		if err == nil || ctx.Err() != nil || attempt >= w.maxAttempts() {
			return n, leaders, err
		}
		retry := errors.Is(err, LeaderNotAvailable) ||
			(w.AllowAutoTopicCreation && errors.Is(err, UnknownTopicOrPartition)) ||
			isTransientNetworkError(err)
		if !retry {
			return n, nil, err
		}
		if !sleep(ctx, backoff(attempt, w.writeBackoffMin(), w.writeBackoffMax())) {
			return 0, nil, ctx.Err()
		}
	}
}

// fetchPartitions returns the leader of each partition (-1 when it has
// none) of the topics it could list, and the error of the first topic
// (names[0]) when it could not.
func (w *Writer) fetchPartitions(ctx context.Context, names []string) (map[string][]int32, error) {
	ctx, cancel := context.WithTimeout(withLookupAside(ctx), w.readTimeout())
	defer cancel()
	r, err := w.transportOrDefault().RoundTrip(ctx, w.Addr, &metadataAPI.Request{
		TopicNames:             names,
		AllowAutoTopicCreation: w.AllowAutoTopicCreation,
	})
	if err != nil {
		return nil, err
	}
	res, ok := r.(*metadataAPI.Response)
	if !ok {
		return nil, errors.New("kafka.(*Writer): unexpected response type to a metadata request")
	}
	found := make(map[string][]int32, len(names))
	err = UnknownTopicOrPartition
	for i := range res.Topics {
		t := &res.Topics[i]
		var terr error
		switch {
		case t.ErrorCode != 0:
			terr = Error(t.ErrorCode)
		case len(t.Partitions) == 0:
			terr = LeaderNotAvailable
		}
		if t.Name == names[0] {
			err = terr
		}
		if terr != nil {
			continue
		}
		leaders := make([]int32, len(t.Partitions))
		for j := range leaders {
			leaders[j] = -1
		}
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if int(p.PartitionIndex) < len(leaders) && p.PartitionIndex >= 0 {
				leaders[p.PartitionIndex] = p.LeaderID
			}
		}
		found[t.Name] = leaders
	}
	return found, err
}

// Balancers take the partitions as a list of numbers 0..n-1. The lists are
// carved out of one shared, read-only array that is only ever replaced by a
// longer one, so that no call allocates once the largest topic was seen.
var writerPartitionNumbers atomic.Pointer[[]int]

func partitionList(n int) []int {
	if p := writerPartitionNumbers.Load(); p != nil && len(*p) >= n {
		return (*p)[:n:n]
	}
	size := (n + 127) &^ 127
	list := make([]int, size)
	for i := range list {
		list[i] = i
	}
	writerPartitionNumbers.Store(&list)
	return list[:n:n]
}
