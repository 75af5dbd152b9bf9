package kafka

import (
	"encoding/binary"
	"hash"
	"hash/crc32"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
)

// Balancer decides which partition of a topic a message is written to.
// Writers call Balance with the message and the partitions of its topic, in
// increasing order.
//
// A balancer may keep state about the partitions it saw (LeastBytes does), so
// programs should use one balancer per topic. Balancers must be safe for
// concurrent use.
type Balancer interface {
	// Balance returns the partition msg goes to, chosen from partitions.
	Balance(msg Message, partitions ...int) (partition int)
}

// BalancerFunc lets a plain function act as a Balancer.
type BalancerFunc func(Message, ...int) int

// Balance calls f.
func (f BalancerFunc) Balance(msg Message, partitions ...int) int {
	return f(msg, partitions...)
}

// RoundRobin spreads messages evenly over the partitions, in turn. With a
// ChunkSize above 1, ChunkSize consecutive messages go to the same partition
// before moving on to the next one, which makes for larger batches.
type RoundRobin struct {
	ChunkSize int

	turns atomic.Uint32 // messages balanced so far (wraps around)
}

// Balance implements Balancer.
func (rr *RoundRobin) Balance(msg Message, partitions ...int) int {
	turn := rr.turns.Add(1) - 1
	perPartition := uint32(max(rr.ChunkSize, 1))
	return partitions[int(turn/perPartition)%len(partitions)]
}

// LeastBytes sends each message to the partition that received the fewest
// bytes (keys plus values) from this balancer so far; ties go to the lowest
// partition number. The counts restart whenever the set of partitions
// changes.
//
// Producers do not coordinate: the partitions are only balanced overall if
// every producer's own traffic is.
type LeastBytes struct {
	mutex      sync.Mutex
	partitions []int    // sorted copy of the partitions of the last call
	bytes      []uint64 // bytes sent to partitions[i]
}

// Balance implements Balancer.
func (lb *LeastBytes) Balance(msg Message, partitions ...int) int {
	lb.mutex.Lock()
	defer lb.mutex.Unlock()

	if !lb.samePartitions(partitions) {
		lb.partitions = append(lb.partitions[:0], partitions...)
		sort.Ints(lb.partitions)
		lb.bytes = make([]uint64, len(partitions))
	}

	best := 0
	for i := 1; i < len(lb.bytes); i++ {
		if lb.bytes[i] < lb.bytes[best] {
			best = i
		}
	}
	lb.bytes[best] += uint64(len(msg.Key)) + uint64(len(msg.Value))
	return lb.partitions[best]
}

// samePartitions reports whether partitions is the set seen last time.
func (lb *LeastBytes) samePartitions(partitions []int) bool {
	if len(partitions) != len(lb.partitions) {
		return false
	}
	if sort.IntsAreSorted(partitions) {
		for i, p := range partitions {
			if lb.partitions[i] != p {
				return false
			}
		}
		return true
	}
	sorted := append([]int(nil), partitions...)
	sort.Ints(sorted)
	for i, p := range sorted {
		if lb.partitions[i] != p {
			return false
		}
	}
	return true
}

// Hash routes messages with the same key to the same partition by hashing
// the key, so that they stay ordered. Messages with a nil key are spread
// round-robin.
//
// The partition is the hash as a signed 32-bit integer, modulo the number of
// partitions, made non-negative:
//
//	abs(int32(hasher.Sum32()) % len(partitions))
//
// The default hash is 32-bit FNV-1a, which makes the choice identical to the
// default (hash) partitioner of the Sarama client.
type Hash struct {
	rr RoundRobin

	// Hasher replaces FNV-1a. It must not be modified once the balancer is in
	// use; calls are serialized since hash.Hash32 values keep state.
	Hasher hash.Hash32

	lock sync.Mutex
}

// Balance implements Balancer. Note that the result is an index
// into partitions, which is the partition number when partitions lists all
// partitions of the topic, as Writers do.
func (h *Hash) Balance(msg Message, partitions ...int) int {
	if msg.Key == nil {
		return h.rr.Balance(msg, partitions...)
	}
	p := int32(h.sum(msg.Key)) % int32(len(partitions))
	if p < 0 {
		p = -p
	}
	return int(p)
}

func (h *Hash) sum(key []byte) uint32 {
	if h.Hasher == nil {
		return fnv1a32(key)
	}
	h.lock.Lock()
	defer h.lock.Unlock()
	return sumWith(h.Hasher, key)
}

// ReferenceHash routes messages with the same key to the same partition by
// hashing the key. Messages with a nil key go to a random partition.
//
// The partition is the hash with its sign bit cleared, modulo the number of
// partitions:
//
//	(int32(hasher.Sum32()) & 0x7fffffff) % len(partitions)
//
// The default hash is 32-bit FNV-1a, which makes the choice identical to
// Sarama's reference hash partitioner.
type ReferenceHash struct {
	rr randomBalancer

	// Hasher replaces FNV-1a. It must not be modified once the balancer is in
	// use; calls are serialized since hash.Hash32 values keep state.
	Hasher hash.Hash32

	lock sync.Mutex
}

// Balance implements Balancer. As with Hash, the result is an
// index into partitions.
func (h *ReferenceHash) Balance(msg Message, partitions ...int) int {
	if msg.Key == nil {
		return h.rr.Balance(msg, partitions...)
	}
	var sum uint32
	if h.Hasher == nil {
		sum = fnv1a32(msg.Key)
	} else {
		h.lock.Lock()
		sum = sumWith(h.Hasher, msg.Key)
		h.lock.Unlock()
	}
	return int((int32(sum) & 0x7fffffff) % int32(len(partitions)))
}

func sumWith(h hash.Hash32, key []byte) uint32 {
	h.Reset()
	if _, err := h.Write(key); err != nil {
		// hash.Hash documents that Write never fails; a Hasher that does
		// is broken beyond what a balancer can work around.
		panic(err)
	}
	return h.Sum32()
}

// fnv1a32 is the 32-bit FNV-1a hash of b, computed without allocating.
func fnv1a32(b []byte) uint32 {
	const (
		offsetBasis = 2166136261
		prime       = 16777619
	)
	h := uint32(offsetBasis)
	for _, c := range b {
		h = (h ^ uint32(c)) * prime
	}
	return h
}

// randomBalancer sends messages to a uniformly random partition. A non-zero
// mock is returned instead, for tests.
type randomBalancer struct {
	mock int
}

func (b randomBalancer) Balance(msg Message, partitions ...int) (partition int) {
	if b.mock != 0 {
		return b.mock
	}
	return partitions[rand.IntN(len(partitions))]
}

// CRC32Balancer routes messages by the CRC-32 (IEEE) checksum of their key,
// modulo the number of partitions, like the hash partitioners of librdkafka
// (and so of confluent-kafka-go and the other clients built on it).
//
// With Consistent false (the default) it behaves like librdkafka's
// "consistent_random": messages with an empty or nil key go to a random
// partition. With Consistent true it behaves like "consistent": every
// message is hashed, so all messages without a key share one partition,
// which may become a hot spot.
type CRC32Balancer struct {
	Consistent bool
	random     randomBalancer
}

// Balance implements Balancer.
func (b CRC32Balancer) Balance(msg Message, partitions ...int) (partition int) {
	// librdkafka makes no difference between an empty and a missing key.
	if len(msg.Key) == 0 && !b.Consistent {
		return b.random.Balance(msg, partitions...)
	}
	return partitions[crc32.ChecksumIEEE(msg.Key)%uint32(len(partitions))]
}

// Murmur2Balancer routes messages by the murmur2 hash of their key, like the
// default partitioner of the Java client and librdkafka's "murmur2" and
// "murmur2_random" partitioners: the partition is
//
//	(murmur2(key) & 0x7fffffff) % len(partitions)
//
// With Consistent false (the default) it behaves like "murmur2_random":
// messages with a nil key go to a random partition (the Java client uses
// sticky or round-robin partitioning for those instead). With Consistent
// true, nil keys are hashed too, like librdkafka's "murmur2". Empty non-nil
// keys are always hashed.
type Murmur2Balancer struct {
	Consistent bool
	random     randomBalancer
}

// Balance implements Balancer.
func (b Murmur2Balancer) Balance(msg Message, partitions ...int) (partition int) {
	if msg.Key == nil && !b.Consistent {
		return b.random.Balance(msg, partitions...)
	}
	return partitions[(murmur2(msg.Key)&0x7fffffff)%uint32(len(partitions))]
}

// murmur2 is the 32-bit MurmurHash2 variant of Kafka's Java client
// (org.apache.kafka.common.utils.Utils.murmur2): little-endian 4-byte blocks,
// seed 0x9747b28c.
func murmur2(data []byte) uint32 {
	const (
		seed  = 0x9747b28c
		mix   = 0x5bd1e995
		shift = 24
	)
	h := uint32(seed) ^ uint32(len(data))

	blocks := len(data) &^ 3
	for off := 0; off < blocks; off += 4 {
		k := binary.LittleEndian.Uint32(data[off:])
		k *= mix
		k ^= k >> shift
		k *= mix
		h = h*mix ^ k
	}

	tail := data[blocks:]
	switch len(tail) {
	case 3:
		h ^= uint32(tail[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(tail[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(tail[0])
		h *= mix
	}

	h ^= h >> 13
	h *= mix
	h ^= h >> 15
	return h
}
