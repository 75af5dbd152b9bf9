package rdmock_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/itest/rdmock"
)

// A group shared by a kafka-go Reader with CooperativeStickyGroupBalancer
// (joining first, so leading) and kcat (librdkafka, cooperative-sticky):
// the coordinator picks cooperative-sticky, librdkafka reads kafka-go's
// assignments and kafka-go reads librdkafka's subscription (owned
// partitions, generation), the partitions are split in two rebalances
// without error, both members read, and every record is read at least
// once. (kcat leading a kafka-go member does not complete on the mock
// yet: the mock never answers the rebalance's JoinGroups.)
func TestMixedCooperativeGroup(t *testing.T) { testMixedCooperativeGroup(t, false) }

func testMixedCooperativeGroup(t *testing.T, kcatFirst bool) {
	const partitions = 4
	c := rdmock.Start(t, 3)
	topic := topicName(t)
	group := topic + "-group"
	c.CreateTopic(topic, partitions)

	var mu sync.Mutex
	var forkRead []kafka.Message
	var kcat *rdmock.KcatMember
	var r *kafka.Reader
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	startFork := func() {
		r = kafka.NewReader(kafka.ReaderConfig{
			Brokers: c.Addrs, GroupID: group, Topic: topic,
			GroupBalancers: []kafka.GroupBalancer{kafka.CooperativeStickyGroupBalancer{}},
			MaxWait:        100 * time.Millisecond, HeartbeatInterval: 300 * time.Millisecond,
			SessionTimeout: 10 * time.Second, RebalanceTimeout: 10 * time.Second,
			JoinGroupBackoff: 200 * time.Millisecond,
		})
		go func() {
			defer close(done)
			for {
				m, err := r.FetchMessage(ctx)
				if err != nil {
					return
				}
				mu.Lock()
				forkRead = append(forkRead, m)
				mu.Unlock()
			}
		}()
	}
	startKcat := func() { kcat = rdmock.KcatJoinWith(t, c.Bootstrap(), group, topic, "cooperative-sticky") }
	if kcatFirst {
		startKcat()
		time.Sleep(4 * time.Second) // the mock waits 3s after the first join
		startFork()
	} else {
		startFork()
		time.Sleep(4 * time.Second)
		startKcat()
	}
	defer func() {
		cancel()
		<-done
		r.Close()
		kcat.Stop()
	}()
	// Records come in rounds until both members have read some: the
	// coordinator splits the partitions in two rebalances.
	var written []rdmock.Record
	both := func() bool {
		mu.Lock()
		n := len(forkRead)
		mu.Unlock()
		return n > 0 && len(kcat.Records()) > 0
	}
	for round := 0; !both(); round++ {
		if round == 60 {
			t.Fatalf("both members never read; kcat's log:\n%s", tail(kcat.Log(), 60))
		}
		var recs []rdmock.Record
		for p := 0; p < partitions; p++ {
			i := round*partitions + p
			recs = append(recs, rdmock.Record{Partition: p, Key: []byte("k" + strconv.Itoa(i)), Value: []byte("v" + strconv.Itoa(i))})
		}
		written = append(written, rdmock.PythonProduce(t, c.Bootstrap(), topic, recs)...)
		time.Sleep(time.Second)
	}
	read := func() map[[2]int64]bool {
		seen := map[[2]int64]bool{}
		mu.Lock()
		for _, m := range fromReader(forkRead) {
			seen[[2]int64{int64(m.Partition), m.Offset}] = true
		}
		mu.Unlock()
		for _, m := range kcat.Records() {
			seen[[2]int64{int64(m.Partition), m.Offset}] = true
		}
		return seen
	}
	deadline := time.Now().Add(60 * time.Second)
	for len(read()) < len(written) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d records read; kcat's log:\n%s", len(read()), len(written), tail(kcat.Log(), 60))
		}
		time.Sleep(50 * time.Millisecond)
	}
	log := kcat.Log()
	if !strings.Contains(log, "cooperative-sticky") {
		t.Errorf("kcat's log does not show cooperative-sticky in use:\n%s", tail(log, 40))
	}
	// (A SyncGroup refused with "Invalid request" is the mock's answer to
	// a follower syncing after the leader; librdkafka rejoins, as it
	// should, and is not counted here.)
	for _, bad := range []string{"Failed to parse", "assignor failed", "Failed to run assignor"} {
		if strings.Contains(log, bad) {
			t.Errorf("kcat logged %q:\n%s", bad, grepLines(log, bad))
		}
	}
	mu.Lock()
	forkParts := ownedBy(fromReader(forkRead))
	mu.Unlock()
	kcatParts := ownedBy(kcat.Records())
	if len(forkParts) == 0 || len(kcatParts) == 0 {
		t.Errorf("partitions read: kafka-go %v, kcat %v; want both to read", forkParts, kcatParts)
	}
}
