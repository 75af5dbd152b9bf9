package kafka

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	a := newAppendLog(t, fc, "", 300*time.Microsecond)
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
	a.checkOrder(total)
}

func orderWindow(l []int, i int) string {
	return fmt.Sprint(l[max(i-4, 0):min(i+4, len(l))])
}

// appendLog is a fake broker's log of the messages of topic "t" it
// appended, per partition, for the order checks of acks=0: values of the
// form prefix+number are logged, others ignored. Each request takes a
// random while (up to maxDelay), as a busy broker's do; with leadersOnly a
// broker appends only the partitions it leads, as a real one does (the
// others are dropped: with acks=0 nobody hears of the error).
type appendLog struct {
	t           *testing.T
	fc          *fakebroker.Cluster
	prefix      string
	maxDelay    time.Duration
	leadersOnly bool
	// dropEvery, when set, makes every dropEvery-th request close its
	// connection instead (that request and those behind it are lost, as
	// acks=0 allows).
	dropEvery int64
	reqs      atomic.Int64

	rngMu sync.Mutex
	rng   *rand.Rand

	mu    sync.Mutex
	log   map[int32][]int
	where map[int32][]string // broker/connection of each entry, for the failure message
}

func newAppendLog(t *testing.T, fc *fakebroker.Cluster, prefix string, maxDelay time.Duration) *appendLog {
	a := &appendLog{t: t, fc: fc, prefix: prefix, maxDelay: maxDelay, rng: rand.New(rand.NewSource(1)), log: map[int32][]int{}, where: map[int32][]string{}}
	fc.SetHandler(a.handle)
	return a
}

func (a *appendLog) handle(r *fakebroker.Request) {
	req, ok := r.Msg.(*produceAPI.Request)
	if !ok {
		a.t.Errorf("unexpected request %T", r.Msg)
		return
	}
	a.rngMu.Lock()
	d := time.Duration(a.rng.Int63n(int64(a.maxDelay) + 1))
	a.rngMu.Unlock()
	time.Sleep(d)
	if n := a.reqs.Add(1); a.dropEvery > 0 && n%a.dropEvery == 0 {
		r.CloseConn()
		return
	}
	if req.Acks != 0 {
		// Another Writer's traffic: answered, not logged.
		res := &produceAPI.Response{}
		for _, tp := range req.Topics {
			rt := produceAPI.ResponseTopic{Topic: tp.Topic}
			for _, p := range tp.Partitions {
				rt.Partitions = append(rt.Partitions, produceAPI.ResponsePartition{Partition: p.Partition})
			}
			res.Topics = append(res.Topics, rt)
		}
		r.Reply(res)
		return
	}
	a.fc.Mu.Lock()
	leaders := make(map[int32]int32, len(a.fc.Leaders))
	for p, l := range a.fc.Leaders {
		leaders[p] = l
	}
	a.fc.Mu.Unlock()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, tp := range req.Topics {
		for _, p := range tp.Partitions {
			if tp.Topic != "t" || (a.leadersOnly && leaders[p.Partition] != r.Broker) {
				continue
			}
			for {
				rec, err := p.RecordSet.Records.ReadRecord()
				if err != nil {
					break
				}
				v, _ := protocol.ReadAll(rec.Value)
				s, ok := strings.CutPrefix(string(v), a.prefix)
				if !ok {
					continue
				}
				n, err := strconv.Atoi(s)
				if err != nil {
					a.t.Errorf("partition %d: value %q", p.Partition, v)
				}
				a.log[p.Partition] = append(a.log[p.Partition], n)
				a.where[p.Partition] = append(a.where[p.Partition], fmt.Sprintf("b%d/c%d", r.Broker, r.Conn.Num))
			}
		}
	}
}

func (a *appendLog) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, l := range a.log {
		n += len(l)
	}
	return n
}

// checkOrder waits for the brokers to append want messages (with acks=0,
// written is not yet appended; want < 0: whatever they get to within a
// while) and fails the test if a partition's messages were appended out
// of order.
func (a *appendLog) checkOrder(want int) {
	a.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	last, stable := -1, 0
	for {
		got := a.count()
		if got == want {
			break
		}
		if want < 0 {
			if got == last {
				stable++
			} else {
				last, stable = got, 0
			}
			if stable >= 20 {
				break
			}
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("%d of %d messages appended", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for p, l := range a.log {
		for i := 1; i < len(l); i++ {
			if l[i] <= l[i-1] {
				w := a.where[p]
				a.t.Fatalf("partition %d: %d appended after %d (%s, on %s)", p, l[i], l[i-1], orderWindow(l, i), w[max(i-4, 0):min(i+4, len(w))])
			}
		}
	}
}

// A sink that goes idle gives its connection back; the next request must
// not overtake, on another connection, the ones written before. Here a
// second Writer on the same Transport keeps other connections of the
// broker's pool in use and idle by turns, and the first one writes one
// message per call (a call returns once its batch is written, and its
// sink goes idle between calls).
func TestWriterRequireNoneKeepsOrderAcrossIdle(t *testing.T) {
	const total = 600
	fc := fakebroker.New(t, 1)
	a := newAppendLog(t, fc, "a", time.Millisecond)
	tr := tpNewTransport(t)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		other := &Writer{Addr: fc.Addr(), Topic: "t", Transport: tr, RequiredAcks: RequireNone, BatchTimeout: time.Millisecond}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer other.Close()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := other.WriteMessages(context.Background(), Message{Value: []byte("b")}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}

	w := &Writer{Addr: fc.Addr(), Topic: "t", Transport: tr, RequiredAcks: RequireNone, BatchTimeout: time.Millisecond}
	for n := 0; n < total; n++ {
		if err := w.WriteMessages(context.Background(), Message{Value: []byte("a" + strconv.Itoa(n))}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	a.checkOrder(total)
}

// Leaders move while a Writer with RequireNone writes. The Writer's view
// of the leaders and the Transport's are refreshed apart, so for a while a
// partition's batches may go through the sink of its old leader, routed to
// the new one, and then through the new leader's sink: its messages that
// reach the leader must still be appended in order. (Those sent to a
// broker that no longer leads are dropped, as Kafka drops them with
// acks=0.)
func TestWriterRequireNoneKeepsOrderWhileLeadersMove(t *testing.T) {
	const parts, total = 4, 4000
	fc := fakebroker.New(t, 3)
	for p := int32(0); p < parts; p++ {
		fc.SetLeader(p, 1+p%3)
	}
	a := newAppendLog(t, fc, "", 300*time.Microsecond)
	a.leadersOnly = true
	tr := &Transport{MetadataTTL: 20 * time.Millisecond, ClientID: "test"}
	t.Cleanup(tr.CloseIdleConnections)

	stop := make(chan struct{})
	moved := make(chan struct{})
	go func() {
		defer close(moved)
		rng := rand.New(rand.NewSource(2))
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(rng.Intn(30)) * time.Millisecond):
			}
			fc.SetLeader(int32(rng.Intn(parts)), int32(1+rng.Intn(3)))
		}
	}()

	w := &Writer{
		Addr: fc.Addr(), Topic: "t", Transport: tr, Async: true,
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
		if n%50 == 0 {
			time.Sleep(time.Millisecond) // let the leaders move meanwhile
		}
	}
	close(stop)
	<-moved
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	a.checkOrder(-1)
}

// Brokers drop connections now and then while a Writer with RequireNone
// writes, from concurrent callers, some of them waiting for each call and
// some not: what is appended of a partition is in order (what was on a
// dropped connection is lost, as acks=0 allows).
func TestWriterRequireNoneKeepsOrderWhenConnectionsDrop(t *testing.T) {
	const parts, callers, each = 6, 4, 400
	fc := fakebroker.New(t, 3)
	for p := int32(0); p < parts; p++ {
		fc.SetLeader(p, 1+p%3)
	}
	a := newAppendLog(t, fc, "", 200*time.Microsecond)
	a.dropEvery = 29
	tr := tpNewTransport(t)
	newWriter := func(async bool) *Writer {
		return &Writer{
			Addr: fc.Addr(), Topic: "t", Transport: tr, RequiredAcks: RequireNone, Async: async,
			BatchSize: 2, BatchTimeout: time.Millisecond, WriteBackoffMin: time.Millisecond, WriteBackoffMax: 5 * time.Millisecond,
			// The caller's number picks the partition: each caller's
			// messages are in order, and a partition's come from one
			// caller.
			Balancer: BalancerFunc(func(m Message, partitions ...int) int {
				n, _ := strconv.Atoi(string(m.Value))
				return (n / each) % len(partitions)
			}),
		}
	}
	sw, aw := newWriter(false), newWriter(true)
	var wg sync.WaitGroup
	for c := 0; c < callers; c++ {
		w := sw
		if c%2 == 1 {
			w = aw
		}
		wg.Add(1)
		go func(c int, w *Writer) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := w.WriteMessages(context.Background(), Message{Value: []byte(strconv.Itoa(c*each + i))}); err != nil {
					var we WriteErrors
					if !errors.As(err, &we) {
						t.Error(err)
						return
					}
				}
			}
		}(c, w)
	}
	wg.Wait()
	for _, w := range []*Writer{sw, aw} {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	a.checkOrder(-1)
	if a.count() == 0 {
		t.Fatal("nothing appended")
	}
}
