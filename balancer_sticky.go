package kafka

import (
	"hash"
	"math/rand/v2"
	"slices"
	"sync"
)

// Sticky sends messages without a key to one partition at a time: it stays
// on a partition until a batch's worth of messages went to it, then moves to
// another one, as the Java client and librdkafka do by default (KIP-480,
// KIP-794). Small unkeyed messages then travel in fewer, fuller batches than
// with RoundRobin, which costs less CPU per message on both ends.
//
// Messages with a key go exactly where Hash (with the same Hasher) sends
// them, so keyed traffic is not moved by switching balancers.
//
// A batch's worth is BatchSize messages or BatchBytes bytes (keys, values
// and headers), whichever is reached first. Left at zero, a Writer using
// this balancer fills them in with its own BatchSize and BatchBytes, so the
// balancer moves on when the Writer's batch is full. When a Writer picks the
// next partition, partitions with more batches waiting to be sent (those of
// a slow broker) are chosen less often, as KIP-794 describes.
//
// The stickiness is kept per topic (Message.Topic), so one Sticky may serve
// a Writer that writes to several topics. It is safe for concurrent use.
type Sticky struct {
	// Hasher replaces FNV-1a for keyed messages, as in Hash. It must not be
	// modified once the balancer is in use.
	Hasher hash.Hash32

	// BatchSize is the number of messages sent to a partition before moving
	// on; zero means the Writer's BatchSize (100 outside a Writer).
	BatchSize int

	// BatchBytes is the number of bytes sent to a partition before moving
	// on; zero means the Writer's BatchBytes (1 MiB outside a Writer).
	BatchBytes int64

	hash Hash // keyed messages; lazily given Hasher

	mutex  sync.Mutex
	once   sync.Once
	topics map[string]*stickyTopic
}

// stickyTopic is the partition a topic's unkeyed messages currently go to,
// and how much went there since the balancer moved to it.
type stickyTopic struct {
	partition int // a value from the partitions argument; -1 before the first
	messages  int
	bytes     int64
}

// stickyLimits are the batch limits the balancer moves on at.
type stickyLimits struct {
	messages int
	bytes    int64
}

// Balance implements Balancer.
func (s *Sticky) Balance(msg Message, partitions ...int) int {
	return s.balance(msg.Topic, &msg, partitions, stickyLimits{}, nil)
}

// balance is Balance for a message of topic (which a Writer with a Topic
// does not set in msg), with the Writer's batch limits, used where a field
// of s is zero, and queued, the number of batches waiting in each partition
// (nil when unknown), which weighs the choice of the next partition.
//
// msg is a pointer, not a copy of a 152-byte Message for every message, and
// is not kept.
func (s *Sticky) balance(topic string, msg *Message, partitions []int, lim stickyLimits, queued func(partition int) int) int {
	if msg.Key != nil {
		s.once.Do(func() { s.hash.Hasher = s.Hasher })
		return s.hash.Balance(*msg, partitions...)
	}
	if s.BatchSize > 0 {
		lim.messages = s.BatchSize
	}
	if s.BatchBytes > 0 {
		lim.bytes = s.BatchBytes
	}
	if lim.messages <= 0 {
		lim.messages = defaultWriterBatchSize
	}
	if lim.bytes <= 0 {
		lim.bytes = defaultWriterBatchBytes
	}

	s.mutex.Lock()
	defer s.mutex.Unlock()
	if s.topics == nil {
		s.topics = make(map[string]*stickyTopic)
	}
	t := s.topics[topic]
	if t == nil {
		t = &stickyTopic{partition: -1}
		s.topics[topic] = t
	}
	if t.partition < 0 || t.messages >= lim.messages || t.bytes >= lim.bytes || !hasPartition(partitions, t.partition) {
		t.partition = pickPartition(partitions, t.partition, queued)
		t.messages, t.bytes = 0, 0
	}
	t.messages++
	t.bytes += msg.totalSize()
	return t.partition
}

// hasPartition reports whether p is one of partitions. A Writer passes
// 0..n-1, where p is found at index p without a scan of every partition
// for every message.
func hasPartition(partitions []int, p int) bool {
	if p >= 0 && p < len(partitions) && partitions[p] == p {
		return true
	}
	return slices.Contains(partitions, p)
}

// pickPartition chooses the partition to move to, other than current when
// there is a choice. Each candidate is weighted by how much shorter its
// queue is than the longest one (plus one, so that every candidate has a
// chance): with equal queues, or without queue lengths, the choice is
// uniform.
func pickPartition(partitions []int, current int, queued func(int) int) int {
	n := len(partitions)
	if n == 1 || !hasPartition(partitions, current) {
		if queued == nil {
			return partitions[rand.IntN(n)]
		}
		current = -1 // nothing to skip
	}
	if queued == nil {
		i := rand.IntN(n - 1)
		if partitions[i] == current {
			i = n - 1 // the draw left the last one out; it takes current's place
		}
		return partitions[i]
	}
	// Queue lengths move while we look; read each once.
	weights := make([]int, n)
	longest := 0
	for i, p := range partitions {
		if p != current {
			weights[i] = queued(p)
			longest = max(longest, weights[i])
		}
	}
	total := 0
	for i, p := range partitions {
		if p == current {
			weights[i] = 0
		} else {
			weights[i] = longest + 1 - weights[i]
		}
		total += weights[i]
	}
	r := rand.IntN(total)
	for i, w := range weights {
		if r < w {
			return partitions[i]
		}
		r -= w
	}
	panic("kafka: sticky balancer weights do not add up")
}
