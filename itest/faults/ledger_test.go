// Package faults_test drives kafka-go's Writer through broken connections
// (internal/faultproxy, reached through Transport.Dial), kfake controls that
// fail requests or drop connections, and partition leader moves, then reads
// the log back with franz-go and checks the promises the Writer makes:
// every accepted message is in the log, no refused message is, each
// producer's messages are in order within their partition, and a message
// appears twice only when the answer to a produce request that the broker
// had already appended was lost.
package faults_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	kafka "github.com/segmentio/kafka-go"
)

// valueSize is the size of every message value: the producer number and
// its sequence number, then padding.
const valueSize = 64

func newValue(producer, seq int) []byte {
	v := make([]byte, valueSize)
	binary.BigEndian.PutUint32(v, uint32(producer))
	binary.BigEndian.PutUint32(v[4:], uint32(seq))
	for i := 8; i < len(v); i++ {
		v[i] = byte(seq + i)
	}
	return v
}

type msgID struct{ producer, seq int }

func idOf(v []byte) (msgID, bool) {
	if len(v) != valueSize {
		return msgID{}, false
	}
	return msgID{int(binary.BigEndian.Uint32(v)), int(binary.BigEndian.Uint32(v[4:]))}, true
}

// outcome is what the Writer told the program about one message.
type outcome int

const (
	unknownOutcome outcome = iota // accepted; the Writer has not said more (async, or sync whose ctx ended)
	delivered                     // a sync call or Completion said it was written
	failed                        // a sync call or Completion said it failed: it may or may not be in the log
	refused                       // not accepted (ErrNotAccepted): it must not be in the log
	abandoned                     // the default Writer's call ended with ctx.Err(): accepted or not, it may or may not be in the log
)

// ledger records what the Writer said about every message.
type ledger struct {
	mu       sync.Mutex
	outcomes map[msgID]outcome
	failures []error // failures reported, for the test log
}

func newLedger() *ledger { return &ledger{outcomes: map[msgID]outcome{}} }

func (l *ledger) set(id msgID, o outcome) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if prev, ok := l.outcomes[id]; ok && (prev == failed || prev == refused || o == abandoned) {
		return // a failure, once reported, stays; so does what Completion said before an abandon
	}
	l.outcomes[id] = o
}

// completion is the Writer's Completion.
func (l *ledger) completion(msgs []kafka.Message, err error) {
	for _, m := range msgs {
		id, ok := idOf(m.Value)
		if !ok {
			continue
		}
		if err != nil {
			l.set(id, failed)
		} else {
			l.set(id, delivered)
		}
	}
	if err != nil {
		l.mu.Lock()
		l.failures = append(l.failures, err)
		l.mu.Unlock()
	}
}

// written records the result of a WriteMessages call of msgs.
func (l *ledger) written(t *testing.T, w *kafka.Writer, msgs []kafka.Message, err error, ctx context.Context) {
	t.Helper()
	ids := make([]msgID, len(msgs))
	for i, m := range msgs {
		ids[i], _ = idOf(m.Value)
	}
	accepted := delivered
	if w.Async {
		accepted = unknownOutcome
	}
	var nae *kafka.NotAcceptedError
	var werrs kafka.WriteErrors
	switch {
	case err == nil:
		for _, id := range ids {
			l.set(id, accepted)
		}
	case errors.As(err, &nae):
		for i, id := range ids {
			switch e := nae.Errors[i]; {
			case e == nil:
				l.set(id, accepted)
			case errors.Is(e, kafka.ErrNotAccepted):
				l.set(id, refused)
			case ctx.Err() != nil && errors.Is(e, ctx.Err()):
				l.set(id, unknownOutcome)
			default:
				l.set(id, failed)
			}
		}
	case !w.Async && errors.As(err, &werrs):
		for i, id := range ids {
			switch e := werrs[i]; {
			case e == nil:
				l.set(id, delivered)
			case ctx.Err() != nil && errors.Is(e, ctx.Err()):
				l.set(id, unknownOutcome)
			default:
				l.set(id, failed)
			}
		}
		l.mu.Lock()
		l.failures = append(l.failures, err)
		l.mu.Unlock()
	case ctx.Err() != nil && errors.Is(err, ctx.Err()) && w.MaxBufferedBatches == 0 && w.MaxBufferedBytes == 0:
		// The default Writer returns ctx.Err() itself, as v0.4.51, both
		// when ctx ended the partition lookup (nothing accepted) and when
		// it ended the wait for the brokers (everything accepted): the
		// messages may or may not be in the log.
		for _, id := range ids {
			l.set(id, abandoned)
		}
	case !w.Async && ctx.Err() != nil && errors.Is(err, ctx.Err()):
		// A bounded Writer refuses with NotAcceptedError: everything was
		// accepted; the outcome is not known yet.
		for _, id := range ids {
			l.set(id, unknownOutcome)
		}
	default:
		// Errorf, not Fatalf: this runs on the producers' goroutines.
		t.Errorf("WriteMessages: unexpected error %v", err)
		for _, id := range ids {
			l.set(id, failed)
		}
	}
}

func (l *ledger) count(o outcome) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, x := range l.outcomes {
		if x == o {
			n++
		}
	}
	return n
}

// logRecord is one record read back.
type logRecord struct {
	id     msgID
	offset int64
}

// readLog reads every partition of topic to its end with franz-go.
func readLog(t *testing.T, addrs []string, topic string, opts ...kgo.Opt) map[int32][]logRecord {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(addrs...),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	partitions := metadataPartitions(t, cl, topic)
	logs := map[int32][]logRecord{}
	hwm := map[int32]int64{}
	next := map[int32]int64{}
	done := func() bool {
		for p := int32(0); p < int32(partitions); p++ {
			h, ok := hwm[p]
			if !ok || next[p] < h {
				return false
			}
		}
		return true
	}
	for !done() {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s back: %v (high watermarks %v, read up to %v)", topic, ctx.Err(), hwm, next)
		}
		fetches.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
			hwm[fp.Partition] = fp.HighWatermark
			for _, r := range fp.Records {
				id, ok := idOf(r.Value)
				if !ok {
					t.Fatalf("partition %d offset %d: foreign record of %d bytes", r.Partition, r.Offset, len(r.Value))
				}
				logs[r.Partition] = append(logs[r.Partition], logRecord{id, r.Offset})
				next[r.Partition] = r.Offset + 1
			}
		})
	}
	return logs
}

func metadataPartitions(t *testing.T, cl *kgo.Client, topic string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		m, err := cl.Request(ctx, metadataRequest(topic))
		if err != nil {
			t.Fatalf("metadata: %v", err)
		}
		if n := partitionsOf(m, topic); n > 0 {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// verdict is what check found.
type verdict struct {
	records, dupRecords, dupRuns int
}

func (v verdict) String() string {
	return fmt.Sprintf("%d records, %d duplicates in %d runs", v.records, v.dupRecords, v.dupRuns)
}

// check compares the log with the ledger and fails t for each problem.
func check(t *testing.T, l *ledger, logs map[int32][]logRecord, maxDupRuns int) verdict {
	t.Helper()
	v, problems := findProblems(l, logs, maxDupRuns)
	for _, p := range problems {
		t.Error(p)
	}
	return v
}

// findProblems compares the log with the ledger. maxDupRuns bounds the
// runs of duplicated records: each lost answer to an appended produce
// request may put one batch (a contiguous run) in the log a second time.
func findProblems(l *ledger, logs map[int32][]logRecord, maxDupRuns int) (verdict, []string) {
	var v verdict
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	seen := map[msgID]bool{}
	l.mu.Lock()
	defer l.mu.Unlock()
	for p, recs := range logs {
		last := map[int]int{}       // producer -> last new sequence number
		firstPos := map[msgID]int{} // position of each message's first copy
		runStart := -1              // start of the current run of duplicates
		// endRun checks the run recs[runStart:end]: a resent batch comes
		// right after its first copy, so the new messages from the first
		// copy of the run's earliest message up to the run must be the
		// run's messages (a b a b, or a a a), nothing else (not a b a).
		endRun := func(end int) {
			if runStart < 0 {
				return
			}
			run := map[msgID]bool{}
			from := runStart
			for _, r := range recs[runStart:end] {
				run[r.id] = true
				from = min(from, firstPos[r.id])
			}
			between := map[msgID]bool{}
			for _, r := range recs[from:runStart] {
				if firstPos[r.id] >= from {
					between[r.id] = true
				}
			}
			if len(between) != len(run) {
				fail("partition %d offsets %d-%d: duplicates that do not repeat the batch right before them", p, recs[runStart].offset, recs[end-1].offset)
			} else {
				for id := range run {
					if !between[id] {
						fail("partition %d offsets %d-%d: duplicates that do not repeat the batch right before them", p, recs[runStart].offset, recs[end-1].offset)
						break
					}
				}
			}
			runStart = -1
		}
		for i, r := range recs {
			v.records++
			if seen[r.id] {
				v.dupRecords++
				if runStart < 0 {
					v.dupRuns++
					runStart = i
				}
				continue
			}
			endRun(i)
			firstPos[r.id] = i
			seen[r.id] = true
			if prev, ok := last[r.id.producer]; ok && r.id.seq <= prev {
				fail("partition %d offset %d: producer %d message %d after %d (order broken)", p, r.offset, r.id.producer, r.id.seq, prev)
			}
			last[r.id.producer] = r.id.seq
			switch o, known := l.outcomes[r.id]; {
			case !known:
				fail("partition %d offset %d: message %v was never written", p, r.offset, r.id)
			case o == refused:
				fail("partition %d offset %d: message %v is in the log, but the Writer refused it (ErrNotAccepted)", p, r.offset, r.id)
			}
		}
		endRun(len(recs))
	}
	for id, o := range l.outcomes {
		if (o == delivered || o == unknownOutcome) && !seen[id] {
			fail("message %v accepted (outcome %d) and not in the log", id, o)
		}
	}
	if v.dupRuns > maxDupRuns {
		fail("%d runs of duplicates (%d records), but the lost produce answers carried only %d batches", v.dupRuns, v.dupRecords, maxDupRuns)
	}
	return v, problems
}
