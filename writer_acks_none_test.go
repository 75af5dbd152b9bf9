package kafka

import (
	"context"
	"fmt"
	"math/rand"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/protocol"
	produceAPI "github.com/segmentio/kafka-go/protocol/produce"
)

// With RequireNone a batch is done once written, and the partition's next
// batch may follow at once. The brokers here take a random while over
// each request, as a busy broker does, working on a connection's requests
// in order and on different connections' side by side: the messages of a
// partition must still be appended in the order they were written.
func TestWriterRequireNoneKeepsOrder(t *testing.T) {
	const parts, total = 4, 3000
	fc := fakebroker.New(t, 2)
	for p := int32(0); p < parts; p++ {
		fc.SetLeader(p, 1+p%2)
	}
	var mu sync.Mutex
	log := map[int32][]int{}
	var rngMu sync.Mutex
	rng := rand.New(rand.NewSource(1))
	fc.SetHandler(func(r *fakebroker.Request) {
		req, ok := r.Msg.(*produceAPI.Request)
		if !ok || req.Acks != 0 {
			t.Errorf("unexpected request %T", r.Msg)
			return
		}
		rngMu.Lock()
		d := time.Duration(rng.Intn(300)) * time.Microsecond
		rngMu.Unlock()
		time.Sleep(d)
		mu.Lock()
		defer mu.Unlock()
		for _, tp := range req.Topics {
			for _, p := range tp.Partitions {
				for {
					rec, err := p.RecordSet.Records.ReadRecord()
					if err != nil {
						break
					}
					v, _ := protocol.ReadAll(rec.Value)
					n, err := strconv.Atoi(string(v))
					if err != nil {
						t.Errorf("partition %d: value %q", p.Partition, v)
					}
					log[p.Partition] = append(log[p.Partition], n)
				}
			}
		}
	})

	w := &Writer{
		Addr: fc.Addr(), Topic: "t", Transport: tpNewTransport(t), Async: true,
		RequiredAcks: RequireNone, BatchSize: 3, BatchTimeout: time.Millisecond,
		Balancer: BalancerFunc(func(m Message, partitions ...int) int {
			n, _ := strconv.Atoi(string(m.Value))
			return (n / 2) % len(partitions)
		}),
	}
	for n := 0; n < total; n++ {
		if err := w.WriteMessages(context.Background(), Message{Value: []byte(strconv.Itoa(n))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	// Written is not yet appended: wait for the brokers to get through
	// their requests.
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		got := 0
		for _, l := range log {
			got += len(l)
		}
		mu.Unlock()
		if got == total {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d messages appended", got, total)
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for p, l := range log {
		for i := 1; i < len(l); i++ {
			if l[i] < l[i-1] {
				t.Fatalf("partition %d: %d appended after %d (%s)", p, l[i], l[i-1], orderWindow(l, i))
			}
		}
	}
}

func orderWindow(l []int, i int) string {
	return fmt.Sprint(l[max(i-4, 0):min(i+4, len(l))])
}
