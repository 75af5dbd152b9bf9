package kafka

import (
	"context"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"testing"
	"time"
)

// Keyed messages must land where Hash sends them, so that switching from
// Hash to Sticky moves no key.
func TestStickyKeyedLikeHash(t *testing.T) {
	for _, hasher := range []struct {
		name   string
		sticky *Sticky
		hash   *Hash
	}{
		{"fnv1a", &Sticky{}, &Hash{}},
		{"crc32", &Sticky{Hasher: crc32.NewIEEE()}, &Hash{Hasher: crc32.NewIEEE()}},
	} {
		t.Run(hasher.name, func(t *testing.T) {
			for _, n := range []int{1, 2, 3, 7, 100, 1000} {
				parts := partitionList(n)
				for k := 0; k < 500; k++ {
					msg := Message{Key: []byte("key-" + strconv.Itoa(k))}
					got := hasher.sticky.Balance(msg, parts...)
					want := hasher.hash.Balance(msg, parts...)
					if got != want {
						t.Fatalf("%d partitions, key %q: sticky %d, hash %d", n, msg.Key, got, want)
					}
				}
			}
		})
	}
}

// Unkeyed messages go in runs of BatchSize to one partition, and each run
// goes to a partition other than the previous run's.
func TestStickyRunsOfBatchSize(t *testing.T) {
	s := &Sticky{BatchSize: 7}
	parts := partitionList(5)
	seen := map[int]bool{}
	prev := -1
	for run := 0; run < 200; run++ {
		first := s.Balance(Message{Value: []byte("v")}, parts...)
		if first == prev {
			t.Fatalf("run %d stayed on partition %d", run, prev)
		}
		for i := 1; i < 7; i++ {
			if p := s.Balance(Message{Value: []byte("v")}, parts...); p != first {
				t.Fatalf("run %d message %d went to %d, the run started on %d", run, i, p, first)
			}
		}
		seen[first] = true
		prev = first
	}
	if len(seen) != len(parts) {
		t.Errorf("200 runs used partitions %v, want all %d", seen, len(parts))
	}
}

// The run also ends once BatchBytes bytes went to the partition.
func TestStickyMovesOnAtBatchBytes(t *testing.T) {
	msg := Message{Value: make([]byte, 100)}
	size := msg.totalSize()
	s := &Sticky{BatchBytes: 3 * size}
	parts := partitionList(4)
	first := s.Balance(msg, parts...)
	for i := 1; i < 3; i++ {
		if p := s.Balance(msg, parts...); p != first {
			t.Fatalf("message %d moved to %d before BatchBytes", i, p)
		}
	}
	if p := s.Balance(msg, parts...); p == first {
		t.Fatalf("fourth message stayed on %d after BatchBytes were reached", p)
	}
}

// Each topic keeps its own partition: interleaving two topics does not cut
// either run short.
func TestStickyPerTopic(t *testing.T) {
	s := &Sticky{BatchSize: 4}
	parts := partitionList(8)
	a := s.Balance(Message{Topic: "a"}, parts...)
	b := s.Balance(Message{Topic: "b"}, parts...)
	for i := 1; i < 4; i++ {
		if p := s.Balance(Message{Topic: "a"}, parts...); p != a {
			t.Fatalf("topic a message %d went to %d, run started on %d", i, p, a)
		}
		if p := s.Balance(Message{Topic: "b"}, parts...); p != b {
			t.Fatalf("topic b message %d went to %d, run started on %d", i, p, b)
		}
	}
}

// A partition that disappears from the list is left at once.
func TestStickyLeavesVanishedPartition(t *testing.T) {
	s := &Sticky{BatchSize: 1000}
	for i := 0; i < 100; i++ {
		p := s.Balance(Message{}, partitionList(8)...)
		if p >= 8 {
			t.Fatalf("partition %d out of range", p)
		}
		q := s.Balance(Message{}, 0, 1)
		if q != 0 && q != 1 {
			t.Fatalf("picked %d from [0 1]", q)
		}
	}
}

// A list that is not 0..n-1 (a program's own Balance call) is searched:
// a partition whose number is another's index there is not taken for
// present, and one that is present is kept.
func TestStickyOtherPartitionLists(t *testing.T) {
	s := &Sticky{BatchSize: 1000}
	first := s.Balance(Message{}, 3, 5, 7)
	for i := 0; i < 50; i++ {
		if p := s.Balance(Message{}, 3, 5, 7); p != first {
			t.Fatalf("moved from %d to %d within a batch", first, p)
		}
	}
	// 1 is index 1 in [7 1]: found without a scan. 3 and 5 are not in
	// [0 3 9 5 2 4]'s places 3 and 5: found by the scan.
	for _, list := range [][]int{{7, 1}, {0, 3, 9, 5, 2, 4}, {2, 0}} {
		was := s.Balance(Message{}, list...)
		if !slices.Contains(list, was) {
			t.Fatalf("picked %d from %v", was, list)
		}
		if p := s.Balance(Message{}, list...); p != was {
			t.Fatalf("moved from %d to %d in %v within a batch", was, p, list)
		}
	}
	if hasPartition([]int{2, 0}, 1) || hasPartition([]int{5, 1, 3}, 0) || !hasPartition([]int{5, 1, 3}, 3) || !hasPartition([]int{5, 1, 3}, 1) {
		t.Fatal("hasPartition wrong")
	}
}

// With queue lengths, partitions with longer queues are picked less often,
// and the current partition is never picked again when there is a choice.
func TestStickyPickWeighsQueues(t *testing.T) {
	parts := partitionList(4)
	queued := func(p int) int {
		if p == 1 {
			return 9 // a slow broker's partition
		}
		return 0
	}
	counts := make([]int, 4)
	const draws = 20000
	for i := 0; i < draws; i++ {
		counts[pickPartition(parts, 0, queued)]++
	}
	if counts[0] != 0 {
		t.Fatalf("current partition picked %d times", counts[0])
	}
	// Weights: partition 1 gets 1, partitions 2 and 3 get 10 each, so 1 in
	// 21 draws; a tenth is far beyond any chance deviation at 20000 draws.
	if counts[1] > draws/10 {
		t.Errorf("slow partition picked %d of %d times (counts %v)", counts[1], draws, counts)
	}
	if counts[2] < draws/3 || counts[3] < draws/3 {
		t.Errorf("fast partitions picked unevenly: %v", counts)
	}

	// Equal queues: uniform over the others.
	counts = make([]int, 4)
	for i := 0; i < draws; i++ {
		counts[pickPartition(parts, 2, func(int) int { return 3 })]++
	}
	if counts[2] != 0 {
		t.Fatalf("current partition picked %d times", counts[2])
	}
	for _, p := range []int{0, 1, 3} {
		if counts[p] < draws/4 {
			t.Errorf("equal queues, partition %d picked %d of %d times (%v)", p, counts[p], draws, counts)
		}
	}
}

// A Writer hands its BatchSize to a Sticky with zero limits: ten unkeyed
// messages with BatchSize 5 over eight partitions fill two full batches,
// where RoundRobin would have sent eight small ones.
func TestWriterStickyFillsBatches(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 8})
	w := &Writer{
		Addr:         TCP("stub"),
		Topic:        "t",
		Transport:    stub,
		Balancer:     &Sticky{},
		BatchSize:    5,
		BatchTimeout: time.Hour, // only full batches leave before Close
		RequiredAcks: RequireAll,
	}
	defer shutdown(w, stub)

	msgs := make([]Message, 10)
	for i := range msgs {
		msgs[i] = Message{Value: []byte(fmt.Sprint(i))}
	}
	if err := w.WriteMessages(context.Background(), msgs...); err != nil {
		t.Fatal(err)
	}
	var used []int
	for p := 0; p < 8; p++ {
		sizes := stub.batchSizes(topicPartition{"t", int32(p)})
		if len(sizes) == 0 {
			continue
		}
		used = append(used, p)
		if len(sizes) != 1 || sizes[0] != 5 {
			t.Errorf("partition %d got batches %v, want one of 5", p, sizes)
		}
	}
	if len(used) != 2 {
		t.Errorf("messages went to partitions %v, want two", used)
	}
}

// The Writer tells the Sticky balancer how many batches wait in each
// partition: with partition 0's requests held, its complete batches queue
// up and queuedBatches counts them (one is being sent, the rest wait).
func TestWriterQueuedBatchesForSticky(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 3})
	tp := topicPartition{"t", 0}
	stub.block(tp)
	w := &Writer{
		Addr:         TCP("stub"),
		Topic:        "t",
		Transport:    stub,
		Balancer:     keyBalancer,
		BatchSize:    1,
		Async:        true,
		RequiredAcks: RequireAll,
	}
	defer shutdown(w, stub)

	for i := 0; i < 5; i++ {
		if err := w.WriteMessages(context.Background(), Message{Key: []byte("p0"), Value: []byte(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "four batches queued behind the held one", func() bool { return w.queuedBatches(tp) == 4 })
	if n := w.queuedBatches(topicPartition{"t", 1}); n != 0 {
		t.Errorf("idle partition reports %d queued batches", n)
	}
	stub.release()
}

// The cost of placing one unkeyed message, with few and many partitions
// (the Writer's list, 0..n-1).
func BenchmarkStickyBalance(b *testing.B) {
	for _, n := range []int{3, 1000} {
		b.Run(fmt.Sprintf("partitions=%d", n), func(b *testing.B) {
			s := &Sticky{BatchSize: 1000}
			list := partitionList(n)
			msg := Message{Value: make([]byte, 100)}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				s.balance("t", &msg, list, stickyLimits{}, nil)
			}
		})
	}
}
