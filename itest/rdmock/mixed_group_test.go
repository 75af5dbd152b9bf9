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

// A consumer group shared by kafka-go and another client, each leading in
// turn: kcat (librdkafka) and upstream kafka-go v0.4.51. Whichever leads
// must read the other's subscription and give it half of the partitions
// (range over 4 partitions, 2 members), and together they read every
// record exactly once. A leader that cannot parse a member's subscription
// drops it (librdkafka logs "Failed to parse MemberMetadata") or fails the
// generation (v0.4.51: "unable to read metadata for member"), and on the
// mock the group then stalls.
func TestMixedGroup(t *testing.T) {
	for _, pair := range [][2]string{
		{"kafka-go", "kcat"},
		{"kcat", "kafka-go"},
		{"upstream", "kafka-go"},
		{"kafka-go", "upstream"},
	} {
		t.Run(pair[0]+" leads "+pair[1], func(t *testing.T) { testMixedGroup(t, pair[0], pair[1]) })
	}
}

// groupMember is one member of a mixed group.
type groupMember interface {
	records() []rdmock.Record
	led() bool
	log() string
	stop()
}

type forkMember struct {
	probe  *groupProbe
	r      *kafka.Reader
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
	mu     sync.Mutex
	read   []kafka.Message
}

func startFork(c *rdmock.Cluster, group, topic string) *forkMember {
	m := &forkMember{probe: newGroupProbe(300 * time.Millisecond), done: make(chan struct{})}
	m.r = kafka.NewReader(kafka.ReaderConfig{
		Brokers: c.Addrs, GroupID: group, Topic: topic, Dialer: m.probe.dialer,
		MaxWait: 100 * time.Millisecond, HeartbeatInterval: 500 * time.Millisecond,
		SessionTimeout: 10 * time.Second, RebalanceTimeout: 10 * time.Second,
		JoinGroupBackoff: 200 * time.Millisecond,
	})
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	go func() {
		defer close(m.done)
		for {
			msg, err := m.r.FetchMessage(ctx)
			if err != nil {
				return
			}
			m.mu.Lock()
			m.read = append(m.read, msg)
			m.mu.Unlock()
		}
	}()
	return m
}

func (m *forkMember) records() []rdmock.Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	return fromReader(m.read)
}
func (m *forkMember) led() bool   { return m.probe.led.Load() }
func (m *forkMember) log() string { return "" }
func (m *forkMember) stop() {
	m.once.Do(func() {
		m.cancel()
		<-m.done
		m.r.Close()
	})
}

type kcatMember struct{ *rdmock.KcatMember }

func (m kcatMember) records() []rdmock.Record { return m.Records() }
func (m kcatMember) led() bool                { return strings.Contains(m.Log(), "I am elected leader") }
func (m kcatMember) log() string              { return m.Log() }
func (m kcatMember) stop()                    { m.Stop() }

type upstreamMember struct{ *rdmock.UpstreamMember }

func (m upstreamMember) records() []rdmock.Record { return m.Records() }
func (m upstreamMember) led() bool                { return strings.Contains(m.Log(), "selected as leader for group") }
func (m upstreamMember) log() string              { return m.Log() }
func (m upstreamMember) stop()                    { m.Stop() }

func testMixedGroup(t *testing.T, leaderKind, followerKind string) {
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

	// The mock elects the first member to join, and waits 3s after the
	// first join for others. Broker 1 coordinates the group; a queued
	// "no error" answer to JoinGroup there is used up by the leader's
	// JoinGroup, which tells when it has joined, whatever the client.
	c.Must("coordinator group %s 1", group)
	c.Must("broker_errors 1 11 0")
	// The mock refuses a follower's SyncGroup that arrives after the
	// leader's (see groupDialer). A kafka-go leader is held back by its
	// probe; kcat and v0.4.51 leaders ask the coordinator for metadata
	// between their JoinGroup answer and their SyncGroup, so delaying
	// every answer of the coordinator makes the follower's SyncGroup, sent
	// as soon as its JoinGroup answer arrives, come first.
	// Data stays on brokers 2 and 3, away from that delay (a v0.4.51
	// Reader gives up on a fetch that takes longer than its MaxWait).
	if leaderKind != "kafka-go" {
		for p := 0; p < partitions; p++ {
			c.SetLeader(topic, p, 2+p%2)
		}
		c.SetRTT(1, 200*time.Millisecond)
	}
	start := func(kind string) groupMember {
		switch kind {
		case "kcat":
			return kcatMember{rdmock.KcatJoin(t, c.Bootstrap(), group, topic)}
		case "upstream":
			return upstreamMember{rdmock.UpstreamJoin(t, c.Bootstrap(), group, topic)}
		}
		return startFork(c, group, topic)
	}
	var members [2]groupMember
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				for i, m := range members {
					if m != nil {
						t.Logf("member %d's log:\n%s", i, tail(m.log(), 40))
					}
				}
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	members[0] = start(leaderKind)
	defer members[0].stop()
	waitFor(leaderKind+"'s JoinGroup", func() bool { return c.BrokerErrorsLeft(1, 11) == 0 })
	members[1] = start(followerKind)
	defer members[1].stop()

	total := func() int { return len(members[0].records()) + len(members[1].records()) }
	waitFor("every record read by one member or the other", func() bool { return total() >= len(written) })
	// Records read twice would show up here, a little later.
	time.Sleep(300 * time.Millisecond)
	members[0].stop()
	members[1].stop()

	for i, m := range members {
		if l := m.log(); strings.Contains(l, "Failed to parse MemberMetadata") || strings.Contains(l, "unable to read metadata for member") {
			t.Errorf("member %d could not read a subscription:\n%s", i, grepLines(l, "etadata"))
		}
	}
	if !members[0].led() || members[1].led() {
		t.Fatalf("%s led: %v, %s led: %v; want the first to lead", leaderKind, members[0].led(), followerKind, members[1].led())
	}

	// kafka-go's subscription, as Java's schema reads it (franz-go's kmsg
	// is generated from Kafka's ConsumerProtocolSubscription definition).
	for _, m := range members {
		fm, ok := m.(*forkMember)
		if !ok {
			continue
		}
		subs := fm.probe.subscriptions()
		if len(subs) == 0 {
			t.Fatal("no JoinGroup subscription seen")
		}
		for _, sub := range subs {
			meta := kmsg.NewConsumerMemberMetadata()
			if err := meta.ReadFrom(sub); err != nil || len(meta.Topics) != 1 || meta.Topics[0] != topic {
				t.Errorf("subscription %x read with Kafka's schema: %+v, %v", sub, meta, err)
			}
		}
	}

	lead, follow := members[0].records(), members[1].records()
	leadParts, followParts := ownedBy(lead), ownedBy(follow)
	if len(leadParts) != partitions/2 || len(followParts) != partitions/2 {
		t.Errorf("partitions read: %s %v, %s %v; want two each", leaderKind, leadParts, followerKind, followParts)
	}
	for p := range leadParts {
		if followParts[p] {
			t.Errorf("partition %d read by both members", p)
		}
	}
	rdmock.SameRecords(t, leaderKind+" and "+followerKind+" together", append(lead, follow...), written, true)
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
