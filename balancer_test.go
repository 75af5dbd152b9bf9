package kafka

import (
	"hash/crc32"
	"sync"
	"testing"
)

// partitionCounts are the topic sizes the tables below were computed for.
var partitionCounts = [4]int{1, 3, 7, 16}

func seq(from, n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = from + i
	}
	return p
}

// The expected partitions below were computed outside of Go, from the
// definitions of the hashes (FNV-1a, CRC-32 IEEE, Kafka's murmur2) and the
// partition formulas of Sarama, librdkafka and the Java client.
func TestHashBalancerTable(t *testing.T) {
	table := []struct {
		key  string
		want [4]int
	}{
		{"", [4]int{0, 0, 2, 11}},
		{"a", [4]int{0, 0, 6, 4}},
		{"foobar", [4]int{0, 0, 4, 8}},
		{"hello", [4]int{0, 0, 2, 11}},
		{"key-1", [4]int{0, 1, 1, 6}},
		{"key-2", [4]int{0, 2, 3, 3}},
		{"user:42", [4]int{0, 2, 1, 2}},
		{"\xff", [4]int{0, 2, 0, 14}},
	}
	h := &Hash{}
	for _, tt := range table {
		for i, n := range partitionCounts {
			if got := h.Balance(Message{Key: []byte(tt.key)}, seq(0, n)...); got != tt.want[i] {
				t.Errorf("Hash(%q, %d partitions) = %d, want %d", tt.key, n, got, tt.want[i])
			}
		}
	}
}

func TestReferenceHashBalancerTable(t *testing.T) {
	table := []struct {
		key  string
		want [4]int
	}{
		{"", [4]int{0, 2, 0, 5}},
		{"a", [4]int{0, 2, 3, 12}},
		{"foobar", [4]int{0, 2, 5, 8}},
		{"hello", [4]int{0, 0, 2, 11}},
		{"key-1", [4]int{0, 1, 1, 6}},
		{"key-2", [4]int{0, 2, 3, 3}},
		{"user:42", [4]int{0, 2, 1, 2}},
		{"\xff", [4]int{0, 2, 0, 14}},
	}
	h := &ReferenceHash{}
	for _, tt := range table {
		for i, n := range partitionCounts {
			if got := h.Balance(Message{Key: []byte(tt.key)}, seq(0, n)...); got != tt.want[i] {
				t.Errorf("ReferenceHash(%q, %d partitions) = %d, want %d", tt.key, n, got, tt.want[i])
			}
		}
	}
}

func TestCRC32BalancerTable(t *testing.T) {
	table := []struct {
		key  string
		want [4]int
	}{
		{"a", [4]int{0, 0, 4, 3}},
		{"foobar", [4]int{0, 2, 6, 5}},
		{"hello", [4]int{0, 1, 2, 6}},
		{"key-1", [4]int{0, 2, 0, 10}},
		{"key-2", [4]int{0, 0, 3, 0}},
		{"user:42", [4]int{0, 1, 4, 6}},
		{"\xff", [4]int{0, 0, 3, 0}},
	}
	for _, b := range []CRC32Balancer{{}, {Consistent: true}} {
		for _, tt := range table {
			for i, n := range partitionCounts {
				// The result is an element of partitions: offset them to check.
				if got := b.Balance(Message{Key: []byte(tt.key)}, seq(100, n)...); got != 100+tt.want[i] {
					t.Errorf("CRC32(%q, %d partitions) = %d, want %d", tt.key, n, got, 100+tt.want[i])
				}
			}
		}
	}
	// Cross-check the table's hash with the standard library.
	if crc32.ChecksumIEEE([]byte("foobar"))%7 != 6 {
		t.Fatal("table does not match hash/crc32")
	}
}

func TestCRC32BalancerMissingKeys(t *testing.T) {
	random := CRC32Balancer{random: randomBalancer{mock: 42}}
	for _, key := range [][]byte{nil, {}} {
		if got := random.Balance(Message{Key: key}, 0, 1, 2); got != 42 {
			t.Errorf("key %v: consistent_random must pick at random, got %d", key, got)
		}
	}
	consistent := CRC32Balancer{Consistent: true, random: randomBalancer{mock: 42}}
	for _, key := range [][]byte{nil, {}} {
		// CRC-32 of nothing is 0, so the first partition.
		if got := consistent.Balance(Message{Key: key}, 5, 6, 7); got != 5 {
			t.Errorf("key %v: consistent must hash, got %d", key, got)
		}
	}
}

// Hash values of Kafka's Java murmur2, from the Java client's own tests
// (UtilsTest.testMurmur2) and other ports checked against it.
func TestMurmur2JavaVectors(t *testing.T) {
	vectors := map[string]int32{
		"21":                         -973932308,
		"foobar":                     -790332482,
		"a-little-bit-long-string":   -985981536,
		"a-little-bit-longer-string": -1486304829,
		"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
		"abc":   479470107,
		"1":     -1993445489,
		"12":    126087238,
		"123":   -267702483,
		"1234":  -1614185708,
		"12345": -1188365604,
	}
	for key, want := range vectors {
		if got := int32(murmur2([]byte(key))); got != want {
			t.Errorf("murmur2(%q) = %d, want %d", key, got, want)
		}
		// Java: Utils.toPositive(murmur2(key)) % numPartitions.
		for _, n := range partitionCounts {
			wantPart := int(uint32(want)&0x7fffffff) % n
			if got := (Murmur2Balancer{}).Balance(Message{Key: []byte(key)}, seq(0, n)...); got != wantPart {
				t.Errorf("Murmur2Balancer(%q, %d) = %d, want %d", key, n, got, wantPart)
			}
		}
	}
}

func TestMurmur2BalancerTable(t *testing.T) {
	table := []struct {
		key  string
		want [4]int
	}{
		{"", [4]int{0, 0, 2, 9}},
		{"a", [4]int{0, 1, 5, 12}},
		{"foobar", [4]int{0, 0, 0, 14}},
		{"hello", [4]int{0, 0, 4, 13}},
		{"key-1", [4]int{0, 0, 5, 8}},
		{"key-2", [4]int{0, 2, 4, 6}},
		{"user:42", [4]int{0, 1, 6, 13}},
		{"\xff", [4]int{0, 0, 5, 11}},
	}
	for _, b := range []Murmur2Balancer{{}, {Consistent: true}} {
		for _, tt := range table {
			for i, n := range partitionCounts {
				if got := b.Balance(Message{Key: []byte(tt.key)}, seq(100, n)...); got != 100+tt.want[i] {
					t.Errorf("Murmur2(%q, %d) = %d, want %d", tt.key, n, got, 100+tt.want[i])
				}
			}
		}
	}
}

func TestMurmur2BalancerMissingKeys(t *testing.T) {
	random := Murmur2Balancer{random: randomBalancer{mock: 42}}
	if got := random.Balance(Message{}, 0, 1, 2); got != 42 {
		t.Errorf("nil key must pick at random, got %d", got)
	}
	// An empty key is a key: hashed even when not Consistent.
	if got := random.Balance(Message{Key: []byte{}}, seq(0, 16)...); got != 9 {
		t.Errorf("empty key: got %d, want 9", got)
	}
	consistent := Murmur2Balancer{Consistent: true, random: randomBalancer{mock: 42}}
	if got := consistent.Balance(Message{}, seq(0, 16)...); got != 9 {
		t.Errorf("Consistent must hash nil keys like empty ones, got %d", got)
	}
}

func TestFNV1a(t *testing.T) {
	// Reference values of the FNV specification.
	for s, want := range map[string]uint32{"": 0x811c9dc5, "a": 0xe40c292c, "foobar": 0xbf9cf968} {
		if got := fnv1a32([]byte(s)); got != want {
			t.Errorf("fnv1a32(%q) = %#x, want %#x", s, got, want)
		}
	}
}

type constHash struct{ sum uint32 }

func (h *constHash) Write(p []byte) (int, error) { return len(p), nil }
func (h *constHash) Sum(b []byte) []byte         { return b }
func (h *constHash) Reset()                      {}
func (h *constHash) Size() int                   { return 4 }
func (h *constHash) BlockSize() int              { return 1 }
func (h *constHash) Sum32() uint32               { return h.sum }

func TestHashCustomHasherSign(t *testing.T) {
	// 0xfffffffb is -5 as an int32: Hash negates the remainder, ReferenceHash
	// clears the sign bit first.
	key := Message{Key: []byte("k")}
	if got := (&Hash{Hasher: &constHash{0xfffffffb}}).Balance(key, seq(0, 3)...); got != 2 {
		t.Errorf("Hash: got %d, want 2", got)
	}
	// 0x7ffffffb % 3 = 2147483643 % 3 = 0
	if got := (&ReferenceHash{Hasher: &constHash{0xfffffffb}}).Balance(key, seq(0, 3)...); got != 0 {
		t.Errorf("ReferenceHash: got %d, want 0", got)
	}
}

func TestHashNilKeyRoundRobin(t *testing.T) {
	h := &Hash{}
	for i, want := range []int{4, 5, 6, 4, 5} {
		if got := h.Balance(Message{}, 4, 5, 6); got != want {
			t.Errorf("call %d: got %d, want %d", i, got, want)
		}
	}
}

func TestReferenceHashNilKeyRandom(t *testing.T) {
	h := &ReferenceHash{}
	seen := map[int]int{}
	for i := 0; i < 600; i++ {
		p := h.Balance(Message{}, 3, 4, 5)
		if p < 3 || p > 5 {
			t.Fatalf("partition %d not in the list", p)
		}
		seen[p]++
	}
	if len(seen) != 3 {
		t.Fatalf("random choice must reach every partition: %v", seen)
	}
}

func TestRoundRobin(t *testing.T) {
	rr := &RoundRobin{}
	for i, want := range []int{0, 1, 2, 0, 1, 2, 0} {
		if got := rr.Balance(Message{}, 0, 1, 2); got != want {
			t.Errorf("call %d: got %d, want %d", i, got, want)
		}
	}
	chunked := &RoundRobin{ChunkSize: 2}
	for i, want := range []int{7, 7, 8, 8, 9, 9, 7, 7} {
		if got := chunked.Balance(Message{}, 7, 8, 9); got != want {
			t.Errorf("chunked call %d: got %d, want %d", i, got, want)
		}
	}
}

func TestRoundRobinConcurrent(t *testing.T) {
	rr := &RoundRobin{}
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 75; i++ {
				p := rr.Balance(Message{}, 0, 1, 2)
				mu.Lock()
				counts[p]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if counts[0] != 100 || counts[1] != 100 || counts[2] != 100 {
		t.Fatalf("uneven: %v", counts)
	}
}

func TestLeastBytes(t *testing.T) {
	lb := &LeastBytes{}
	msg := func(n int) Message { return Message{Value: make([]byte, n)} }
	steps := []struct {
		size int
		want int
	}{
		{10, 0}, // all at 0 bytes: lowest partition
		{5, 1},  // 10, 0, 0
		{1, 2},  // 10, 5, 0
		{1, 2},  // 10, 5, 1
		{20, 2}, // 10, 5, 2
		{1, 1},  // 10, 5, 22
	}
	for i, s := range steps {
		// Unsorted input: the balancer works on partition numbers.
		if got := lb.Balance(msg(s.size), 2, 0, 1); got != s.want {
			t.Fatalf("step %d: got %d, want %d", i, got, s.want)
		}
	}
	// Keys count too.
	if got := lb.Balance(Message{Key: make([]byte, 100)}, 0, 1, 2); got != 1 {
		t.Fatalf("got %d", got)
	}
	if got := lb.Balance(msg(0), 0, 1, 2); got != 0 {
		t.Fatalf("got %d", got)
	}
	// A different set of partitions resets the counts.
	if got := lb.Balance(msg(1), 3, 4, 5); got != 3 {
		t.Fatalf("after change: got %d", got)
	}
	if got := lb.Balance(msg(1), 3, 4, 5); got != 4 {
		t.Fatalf("after change: got %d", got)
	}
}

func TestBalancerFunc(t *testing.T) {
	var b Balancer = BalancerFunc(func(m Message, p ...int) int { return p[len(p)-1] + len(m.Key) })
	if got := b.Balance(Message{Key: []byte("ab")}, 1, 2, 3); got != 5 {
		t.Fatalf("got %d", got)
	}
}

func BenchmarkMurmur2Balancer(b *testing.B) {
	key := []byte("a-little-bit-longer-string")
	parts := seq(0, 12)
	var bal Murmur2Balancer
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		bal.Balance(Message{Key: key}, parts...)
	}
}

func BenchmarkHashBalancer(b *testing.B) {
	key := []byte("a-little-bit-longer-string")
	parts := seq(0, 12)
	bal := &Hash{}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		bal.Balance(Message{Key: key}, parts...)
	}
}

// FuzzBalancers checks that every balancer returns one of the partitions it
// was given, and that hashing balancers are deterministic.
func FuzzBalancers(f *testing.F) {
	f.Add([]byte("foobar"), uint8(3), false)
	f.Add([]byte{}, uint8(1), true)
	f.Add([]byte(nil), uint8(16), false)
	f.Fuzz(func(t *testing.T, key []byte, n uint8, consistent bool) {
		count := int(n)%64 + 1
		parts := seq(0, count)
		msg := Message{Key: key}
		for _, b := range []Balancer{
			&RoundRobin{}, &LeastBytes{}, &Hash{}, &ReferenceHash{},
			CRC32Balancer{Consistent: consistent}, Murmur2Balancer{Consistent: consistent},
		} {
			p := b.Balance(msg, parts...)
			if p < 0 || p >= count {
				t.Fatalf("%T returned %d for %d partitions", b, p, count)
			}
		}
		if key != nil {
			// Fresh balancers, so that no state carries over between calls.
			h1, h2 := (&Hash{}).Balance(msg, parts...), (&Hash{}).Balance(msg, parts...)
			m1, m2 := (Murmur2Balancer{}).Balance(msg, parts...), (Murmur2Balancer{}).Balance(msg, parts...)
			if h1 != h2 || m1 != m2 {
				t.Fatal("hashing must be deterministic")
			}
		}
	})
}
