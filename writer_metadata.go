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

// partitions returns the number of partitions of topic.
func (w *Writer) partitions(ctx context.Context, topic string) (int, error) {
	m := &w.state().meta
	if f := m.last.Load(); f != nil && f.topic == topic && f.valid.Load() {
		return f.count, nil
	}
	for {
		m.mu.Lock()
		e := m.topics[topic]
		switch {
		case e == nil:
			e = &writerTopicMeta{}
			m.topics[topic] = e
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
		m.mu.Unlock()

		n, leaders, err := w.lookupPartitions(ctx, topic)

		m.mu.Lock()
		e.loading = nil
		if err == nil {
			m.leaders[topic] = leaders
		}
		if e.invalidated {
			// The answer goes to this caller only: whoever waited for
			// it, and every later call, asks again.
			e.invalidated = false
			e.count = 0
		} else if err == nil {
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
		close(loading)
		m.mu.Unlock()
		return n, err
	}
}

// lookupPartitions asks the cluster, retrying while the topic is being
// created or its leaders elected.
func (w *Writer) lookupPartitions(ctx context.Context, topic string) (int, []int32, error) {
	for attempt := 1; ; attempt++ {
		n, leaders, err := w.fetchPartitions(ctx, topic)
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

// fetchPartitions returns the partition count of topic and the leader of
// each partition (-1 when it has none).
func (w *Writer) fetchPartitions(ctx context.Context, topic string) (int, []int32, error) {
	ctx, cancel := context.WithTimeout(withLookupAside(ctx), w.readTimeout())
	defer cancel()
	r, err := w.transportOrDefault().RoundTrip(ctx, w.Addr, &metadataAPI.Request{
		TopicNames:             []string{topic},
		AllowAutoTopicCreation: w.AllowAutoTopicCreation,
	})
	if err != nil {
		return 0, nil, err
	}
	res, ok := r.(*metadataAPI.Response)
	if !ok {
		return 0, nil, errors.New("kafka.(*Writer): unexpected response type to a metadata request")
	}
	for i := range res.Topics {
		t := &res.Topics[i]
		if t.Name != topic {
			continue
		}
		if t.ErrorCode != 0 {
			return 0, nil, Error(t.ErrorCode)
		}
		if len(t.Partitions) == 0 {
			return 0, nil, LeaderNotAvailable
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
		return len(t.Partitions), leaders, nil
	}
	return 0, nil, UnknownTopicOrPartition
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
