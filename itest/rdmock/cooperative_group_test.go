package rdmock_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/itest/rdmock"
)

// A group shared by a kafka-go Reader with CooperativeStickyGroupBalancer
// and kcat (librdkafka, cooperative-sticky), each leading in turn. The
// leader reads every partition alone; when the other joins, the partitions
// are split in two rebalances (the owner gives up half, then they are
// assigned), and the test checks what users rely on: every record is read,
// each by exactly one member (the owner commits before giving a partition
// up, and the new owner starts there), no member reads a record twice or
// goes back, kafka-go's partition readers are started once for each
// partition it reads (those it keeps are not restarted), and in the end
// the members read two partitions each.
//
// What librdkafka's mock coordinator does differently from a broker, and
// how the test stays within it (see rdkafka_mock_cgrp.c):
//
//   - It ends a join phase only on a timer, never when every member has
//     rejoined: 3s for the first member, else the session timeout minus
//     one second, the session timeout being one for the whole group, that
//     of the latest JoinGroup.
//   - Its session timer expires members by that same group-wide timeout,
//     counting a member whose JoinGroup it holds as silent since the
//     JoinGroup arrived, and drops the held JoinGroup without an answer.
//     With members of different session timeouts (kcat's default is 45s)
//     a join phase timed by the longer one outlives the shorter one, and
//     every member is expired while it waits: kcat is never answered and
//     kafka-go's JoinGroup times out (after Timeout plus RebalanceTimeout)
//     again and again. This is what made this test flaky, and what kept
//     kcat leading from ever completing, before both members were given
//     the same session timeout. Two kcats show it too: with session
//     timeouts of 45s and 10s, the second to join had no partition 60s
//     later (either way round); with 6s each it had two after 13s.
//   - It refuses a follower's SyncGroup that arrives after the leader's
//     (INVALID_REQUEST; librdkafka rejoins, which starts another
//     rebalance and refuses kafka-go's commit of the partitions it is
//     giving up with REBALANCE_IN_PROGRESS). The kafka-go leader's
//     SyncGroup is held back by its probe; a kcat leader asks the
//     coordinator for metadata before its SyncGroup, and every answer of
//     the coordinator is delayed, so the kafka-go follower's comes first.
//     The hold is half a second: the kafka-go leader has been silent
//     since its JoinGroup arrived, up to the join phase (session minus
//     one second) before the hold starts, so a hold of a second left it
//     no margin, and now and then the mock expired it just before its
//     SyncGroup came (kcat then led a generation of its own and read the
//     partitions kafka-go was still reading).
//
// The two cases run side by side (each has a cluster of its own): they
// mostly wait for the mock's timers.
func TestMixedCooperativeGroup(t *testing.T) {
	for _, kcatLeads := range []bool{false, true} {
		name := "kafka-go leads kcat"
		if kcatLeads {
			name = "kcat leads kafka-go"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testMixedCooperativeGroup(t, kcatLeads)
		})
	}
}

func testMixedCooperativeGroup(t *testing.T, kcatLeads bool) {
	const (
		partitions = 4
		// The same for both members (see above); a join phase on the mock
		// lasts a second less.
		session   = 3 * time.Second
		heartbeat = 250 * time.Millisecond
	)
	c := rdmock.Start(t, 3)
	topic := topicName(t)
	group := topic + "-group"
	c.CreateTopic(topic, partitions)
	c.Must("coordinator group %s 1", group)
	for p := 0; p < partitions; p++ {
		c.SetLeader(topic, p, 2+p%2)
	}
	if kcatLeads {
		c.SetRTT(1, 200*time.Millisecond)
	}

	var rlog logLines
	probe := newGroupProbe(500 * time.Millisecond)
	var kcat *rdmock.KcatMember
	var r *kafka.Reader
	var mu sync.Mutex
	var forkRead []kafka.Message
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	startFork := func() {
		r = kafka.NewReader(kafka.ReaderConfig{
			Brokers: c.Addrs, GroupID: group, Topic: topic, Dialer: probe.dialer,
			GroupBalancers: []kafka.GroupBalancer{kafka.CooperativeStickyGroupBalancer{}},
			MaxWait:        100 * time.Millisecond, HeartbeatInterval: heartbeat,
			SessionTimeout: session, RebalanceTimeout: 10 * time.Second,
			JoinGroupBackoff: 200 * time.Millisecond, CommitInterval: 100 * time.Millisecond,
			Logger: rlog.logger(""), ErrorLogger: rlog.logger("ERROR "),
		})
		go func() {
			defer close(done)
			for {
				// ReadMessage with CommitInterval: what it returned is
				// committed when the member gives the partition up.
				m, err := r.ReadMessage(ctx)
				if err != nil {
					return
				}
				mu.Lock()
				forkRead = append(forkRead, m)
				mu.Unlock()
			}
		}()
	}
	startKcat := func() {
		kcat = rdmock.KcatJoinWith(t, c.Bootstrap(), group, topic, "cooperative-sticky",
			fmt.Sprintf("session.timeout.ms=%d", session.Milliseconds()),
			fmt.Sprintf("heartbeat.interval.ms=%d", heartbeat.Milliseconds()))
	}
	forkRecords := func() []rdmock.Record {
		mu.Lock()
		defer mu.Unlock()
		return fromReader(forkRead)
	}
	kcatRecords := func() []rdmock.Record {
		if kcat == nil {
			return nil
		}
		return kcat.Records()
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if r != nil {
			<-done
			r.Close()
		}
		if kcat != nil {
			kcat.Stop()
		}
	}
	defer stop()
	defer func() {
		if t.Failed() || os.Getenv("RDMOCK_LOG") != "" {
			t.Logf("kafka-go's log:\n%s", rlog.String())
			if kcat != nil {
				t.Logf("kcat's log:\n%s", kcat.Log())
			}
		}
	}()

	var written []rdmock.Record
	round := 0
	produce := func() {
		var recs []rdmock.Record
		for p := 0; p < partitions; p++ {
			i := round*partitions + p
			recs = append(recs, rdmock.Record{
				Partition: p,
				Key:       []byte("k-" + strconv.Itoa(p) + "-" + strconv.Itoa(i)),
				Value:     []byte("coop-" + strconv.Itoa(i)),
			})
		}
		round++
		written = append(written, rdmock.PythonProduce(t, c.Bootstrap(), topic, recs)...)
	}
	deadline := time.Now().Add(90 * time.Second)
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; kafka-go read %v, kcat read %v",
					what, ownedBy(forkRecords()), ownedBy(kcatRecords()))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// The leader first reads every partition alone.
	produce()
	leaderRecords, followerRecords := forkRecords, kcatRecords
	if kcatLeads {
		leaderRecords, followerRecords = kcatRecords, forkRecords
		startKcat()
	} else {
		startFork()
	}
	waitFor("the leader to read every partition", func() bool { return len(ownedBy(leaderRecords())) == partitions })

	// Then the other joins, and records come until it reads half of them
	// and two more rounds after that.
	if kcatLeads {
		startFork()
	} else {
		startKcat()
	}
	for len(ownedBy(followerRecords())) < partitions/2 {
		if time.Now().After(deadline) {
			t.Fatalf("the follower never read %d partitions; kafka-go read %v, kcat read %v",
				partitions/2, ownedBy(forkRecords()), ownedBy(kcatRecords()))
		}
		produce()
		time.Sleep(200 * time.Millisecond)
	}
	settled := len(written)
	produce()
	produce()
	readAll := func() bool { return len(forkRecords())+len(kcatRecords()) >= len(written) }
	waitFor("every record read", readAll)
	time.Sleep(300 * time.Millisecond) // records read twice would show up here
	stop()

	fork, kc := forkRecords(), kcatRecords()
	log := kcat.Log()
	for _, bad := range []string{"Failed to parse", "assignor failed", "Failed to run assignor"} {
		if strings.Contains(log, bad) {
			t.Errorf("kcat logged %q:\n%s", bad, grepLines(log, bad))
		}
	}
	if !strings.Contains(log, `Protocol cooperative-sticky`) {
		t.Errorf("kcat's log does not show cooperative-sticky chosen:\n%s", grepLines(log, "JOINGROUP"))
	}
	if kcatLed := strings.Contains(log, "I am elected leader"); kcatLed != kcatLeads || probe.led.Load() == kcatLeads {
		t.Errorf("kcat led: %v, kafka-go led: %v; want kcat to lead: %v", kcatLed, probe.led.Load(), kcatLeads)
	}

	// Every record read, by exactly one member, in order.
	readers := map[[2]int64][]string{}
	for who, recs := range map[string][]rdmock.Record{"kafka-go": fork, "kcat": kc} {
		last := map[int]int64{}
		for _, rec := range recs {
			k := [2]int64{int64(rec.Partition), rec.Offset}
			readers[k] = append(readers[k], who)
			if prev, ok := last[rec.Partition]; ok && rec.Offset <= prev {
				t.Errorf("%s read partition %d at offset %d after offset %d", who, rec.Partition, rec.Offset, prev)
			}
			last[rec.Partition] = rec.Offset
		}
	}
	for _, w := range written {
		k := [2]int64{int64(w.Partition), w.Offset}
		if n := len(readers[k]); n != 1 {
			t.Errorf("record %v read %d times (%v), want once", w, n, readers[k])
		}
		delete(readers, k)
	}
	for k, who := range readers {
		t.Errorf("%v read partition %d offset %d, which was not written", who, k[0], k[1])
	}
	both := append(append([]rdmock.Record(nil), fork...), kc...)
	sort.SliceStable(both, func(i, j int) bool { return both[i].Offset < both[j].Offset })
	rdmock.SameRecords(t, "kafka-go and kcat together", both, written, true)

	// In the end, two partitions each: those of the records written once
	// the follower read half of them.
	final := map[string]map[int]bool{"kafka-go": {}, "kcat": {}}
	for who, recs := range map[string][]rdmock.Record{"kafka-go": fork, "kcat": kc} {
		for _, rec := range recs {
			for _, w := range written[settled:] {
				if w.Partition == rec.Partition && w.Offset == rec.Offset {
					final[who][rec.Partition] = true
				}
			}
		}
	}
	if len(final["kafka-go"]) != partitions/2 || len(final["kcat"]) != partitions/2 {
		t.Errorf("partitions read at the end: kafka-go %v, kcat %v; want two each", final["kafka-go"], final["kcat"])
	}

	// kafka-go started one partition reader for each partition it read:
	// none was restarted by a rebalance.
	for p := range ownedBy(fork) {
		line := fmt.Sprintf("initializing kafka reader for partition %d of %s ", p, topic)
		if n := strings.Count(rlog.String(), line); n != 1 {
			t.Errorf("kafka-go started %d readers for partition %d, want 1:\n%s", n, p, grepLines(rlog.String(), "initializing"))
		}
	}
}

// logLines is a kafka.Logger's output, with Unix timestamps like
// librdkafka's debug log, to be read next to kcat's.
type logLines struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logLines) logger(prefix string) kafka.Logger {
	return kafka.LoggerFunc(func(format string, args ...interface{}) {
		now := time.Now()
		l.mu.Lock()
		defer l.mu.Unlock()
		fmt.Fprintf(&l.b, "%d.%03d %s%s\n", now.Unix(), now.Nanosecond()/1e6, prefix, fmt.Sprintf(format, args...))
	})
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
