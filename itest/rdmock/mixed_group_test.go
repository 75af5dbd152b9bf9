package rdmock_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/itest/rdmock"
)

// A consumer group shared by a kafka-go Reader and kcat (librdkafka), in
// both directions: whichever leads, it must read the other's subscription
// and give it half of the partitions (range over 4 partitions, 2 members),
// and together they read every record exactly once. A leader that cannot
// parse a member's subscription drops it from the assignment (librdkafka
// logs "Failed to parse MemberMetadata"), and on the mock the group then
// stalls: the dropped member never gets an assignment.
func TestMixedGroup(t *testing.T) {
	for _, leader := range []string{"kafka-go", "kcat"} {
		t.Run(leader+" leads", func(t *testing.T) { testMixedGroup(t, leader) })
	}
}

func testMixedGroup(t *testing.T, leader string) {
	const partitions, perPartition = 4, 10
	c := rdmock.Start(t, 3)
	topic := topicName(t)
	group := topic + "-group"
	c.CreateTopic(topic, partitions)
	var recs []rdmock.Record
	for i := 0; i < partitions*perPartition; i++ {
		p := i % partitions
		recs = append(recs, rdmock.Record{
			Partition: p,
			Key:       []byte("k-" + strconv.Itoa(p) + "-" + strconv.Itoa(i)),
			Value:     []byte("mixed-" + strconv.Itoa(i)),
			Headers:   []rdmock.Header{{Key: "i", Value: []byte(strconv.Itoa(i))}},
		})
	}
	written := rdmock.PythonProduce(t, c.Bootstrap(), topic, recs)

	// The mock elects the first member to join. The follower joins while
	// the mock waits for more members (3s after the first join).
	probe := newGroupProbe(300 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var (
		mu     sync.Mutex
		goRead []kafka.Message
		r      *kafka.Reader
		kc     *rdmock.KcatMember
		done   = make(chan error, 1)
	)
	startReader := func() {
		r = kafka.NewReader(kafka.ReaderConfig{
			Brokers: c.Addrs, GroupID: group, Topic: topic, Dialer: probe.dialer,
			MaxWait: 100 * time.Millisecond, HeartbeatInterval: 500 * time.Millisecond,
			SessionTimeout: 10 * time.Second, RebalanceTimeout: 10 * time.Second,
			JoinGroupBackoff: 200 * time.Millisecond,
		})
		go func() {
			for {
				m, err := r.FetchMessage(ctx)
				if err != nil {
					done <- err
					return
				}
				mu.Lock()
				goRead = append(goRead, m)
				mu.Unlock()
			}
		}()
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				kcLog := ""
				if kc != nil {
					kcLog = kc.Log()
				}
				t.Fatalf("timed out waiting for %s; kcat's log:\n%s", what, tail(kcLog, 40))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// The mock refuses a follower's SyncGroup that arrives after the
	// leader's (see groupDialer). A kafka-go leader is held back by the
	// probe; a kcat leader asks for metadata between its JoinGroup answer
	// and its SyncGroup, so delaying every answer of the coordinator makes
	// the kafka-go follower's SyncGroup, sent as soon as its JoinGroup
	// answer arrives, come first.
	c.Must("coordinator group %s 1", group)
	if leader == "kcat" {
		c.SetRTT(1, 200*time.Millisecond)
	}
	if leader == "kafka-go" {
		startReader()
		waitFor("kafka-go's JoinGroup", probe.joined.Load)
		kc = rdmock.KcatJoin(t, c.Bootstrap(), group, topic)
	} else {
		kc = rdmock.KcatJoin(t, c.Bootstrap(), group, topic)
		waitFor("kcat's JoinGroup", kc.Joined)
		startReader()
	}
	defer r.Close()
	defer kc.Stop()

	total := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(goRead) + len(kc.Records())
	}
	waitFor("every record read by one member or the other", func() bool { return total() >= len(written) })
	// Records read twice would show up here, a little later.
	time.Sleep(300 * time.Millisecond)
	cancel()
	<-done

	kcLog := kc.Log()
	if strings.Contains(kcLog, "Failed to parse MemberMetadata") {
		t.Errorf("librdkafka could not parse a member's subscription:\n%s", grepLines(kcLog, "MEMBERMETA"))
	}
	if led := probe.led.Load(); led != (leader == "kafka-go") {
		t.Fatalf("kafka-go led: %v, want the %s member to lead", led, leader)
	}
	if iLed := strings.Contains(kcLog, "I am elected leader"); iLed != (leader == "kcat") {
		t.Fatalf("kcat led: %v, want the %s member to lead", iLed, leader)
	}

	// kafka-go's subscription, as Java's schema reads it (franz-go's kmsg
	// is generated from Kafka's ConsumerProtocolSubscription definition).
	subs := probe.subscriptions()
	if len(subs) == 0 {
		t.Fatal("no JoinGroup subscription seen")
	}
	for _, sub := range subs {
		m := kmsg.NewConsumerMemberMetadata()
		if err := m.ReadFrom(sub); err != nil || len(m.Topics) != 1 || m.Topics[0] != topic {
			t.Errorf("subscription %x read with Kafka's schema: %+v, %v", sub, m, err)
		}
	}

	mu.Lock()
	fromGo := fromReader(goRead)
	mu.Unlock()
	fromKcat := kc.Records()
	goParts, kcParts := ownedBy(fromGo), ownedBy(fromKcat)
	if len(goParts) != partitions/2 || len(kcParts) != partitions/2 {
		t.Errorf("partitions read: kafka-go %v, kcat %v; want two each", goParts, kcParts)
	}
	for p := range goParts {
		if kcParts[p] {
			t.Errorf("partition %d read by both members", p)
		}
	}
	rdmock.SameRecords(t, "kafka-go and kcat together", append(fromGo, fromKcat...), written, true)
	if t.Failed() {
		t.Logf("kafka-go read %v; kcat read %v; kcat log:\n%s", goParts, kcParts, grepLines(kcLog, "JOINGROUP"))
	}
}

func ownedBy(recs []rdmock.Record) map[int]bool {
	m := map[int]bool{}
	for _, r := range recs {
		m[r.Partition] = true
	}
	return m
}

func grepLines(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
