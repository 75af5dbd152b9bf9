package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fetchcursor"
	"github.com/segmentio/kafka-go/internal/logshape"
	"github.com/segmentio/kafka-go/protocol"
)

// Every way of reading record batches (the partition Reader, the group
// Reader, Conn's ReadBatch and Client.Fetch) against logs shaped as Apache Kafka shapes them
// (internal/logshape): what they return must be what Kafka's consumer
// returns, in order, field by field, however the reading is cut into
// fetches.

// logConsumer reads partition 0 of "t" from offset from until it returns
// the message at offset stopAt (or fails).
type logConsumer struct {
	name string
	read func(t *testing.T, lb *logBroker, from, stopAt int64, level IsolationLevel, maxBytes int) ([]Message, error)
}

var logConsumers = []logConsumer{
	{"Reader", func(t *testing.T, lb *logBroker, from, stopAt int64, level IsolationLevel, maxBytes int) ([]Message, error) {
		return readLogWithReader(t, lb, "", nil, from, stopAt, level, maxBytes)
	}},
	{"group Reader", func(t *testing.T, lb *logBroker, from, stopAt int64, level IsolationLevel, maxBytes int) ([]Message, error) {
		lb.group.mu.Lock()
		lb.group.committed[0] = from
		lb.group.mu.Unlock()
		return readLogWithReader(t, lb, "g", nil, from, stopAt, level, maxBytes)
	}},
	{"Conn", readLogWithConn},
	{"Client.Fetch", readLogWithClient},
}

func readLogWithReader(t *testing.T, lb *logBroker, group string, transport RoundTripper, from, stopAt int64, level IsolationLevel, maxBytes int) ([]Message, error) {
	cfg := ReaderConfig{
		Brokers:        []string{lb.addr().String()},
		Topic:          "t",
		GroupID:        group,
		MinBytes:       1,
		MaxBytes:       maxBytes,
		MaxWait:        20 * time.Millisecond,
		ReadBackoffMin: time.Millisecond,
		ReadBackoffMax: 10 * time.Millisecond,
		IsolationLevel: level,
		transport:      transport,
	}
	r := NewReader(cfg)
	defer r.Close()
	if group == "" {
		if err := r.SetOffset(from); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var got []Message
	for {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			return got, err
		}
		got = append(got, m)
		if m.Offset >= stopAt {
			return got, nil
		}
	}
}

func readLogWithConn(t *testing.T, lb *logBroker, from, stopAt int64, level IsolationLevel, maxBytes int) ([]Message, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := (&Dialer{}).DialLeader(ctx, "tcp", lb.addr().String(), "t", 0)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := conn.Seek(from, SeekAbsolute|SeekDontCheck); err != nil {
		return nil, err
	}
	var got []Message
	for {
		b := conn.ReadBatchWith(ReadBatchConfig{MinBytes: 1, MaxBytes: maxBytes, IsolationLevel: level, MaxWait: 20 * time.Millisecond})
		for {
			m, err := b.ReadMessage()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Close()
				return got, err
			}
			got = append(got, m)
			if m.Offset >= stopAt {
				return got, b.Close()
			}
		}
		if err := b.Close(); err != nil {
			return got, err
		}
	}
}

// readLogWithClient reads with Client.Fetch as its documentation says a
// caller does: records before the fetch offset skipped, the next fetch
// after the last offset of the last batch (markers and emptied aborted
// batches included).
func readLogWithClient(t *testing.T, lb *logBroker, from, stopAt int64, level IsolationLevel, maxBytes int) ([]Message, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	client := &Client{Addr: lb.addr(), Transport: tr}
	var got []Message
	for offset := from; ; {
		res, err := client.Fetch(ctx, &FetchRequest{
			Topic: "t", Partition: 0, Offset: offset,
			MinBytes: 1, MaxBytes: int64(maxBytes), MaxWait: 20 * time.Millisecond,
			IsolationLevel: level,
		})
		if err != nil {
			return got, err
		}
		if res.Error != nil {
			return got, res.Error
		}
		stream, ok := res.Records.(*protocol.RecordStream)
		if !ok {
			continue // nothing returned
		}
		next := offset
		for _, batch := range stream.Records {
			if last := fetchcursor.LastOffset(batch); last >= next {
				next = last + 1
			}
			if _, ok := batch.(*protocol.ControlBatch); ok {
				continue
			}
			for {
				rec, err := batch.ReadRecord()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return got, err
				}
				if rec.Offset < offset {
					closeRecord(rec)
					continue
				}
				m := Message{Topic: "t", Offset: rec.Offset, HighWaterMark: res.HighWatermark, Time: rec.Time, Headers: rec.Headers}
				m.Key, _ = protocol.ReadAll(rec.Key)
				m.Value, _ = protocol.ReadAll(rec.Value)
				closeRecord(rec)
				got = append(got, m)
				next = max(next, rec.Offset+1)
				if rec.Offset >= stopAt {
					return got, nil
				}
			}
		}
		offset = next
	}
}

// checkLogMessages compares what a consumer returned with what Kafka's
// consumer returns, field by field (null and empty keys, values and
// header values are told apart).
func checkLogMessages(got []Message, want []logshape.Record, hwm int64) error {
	for i := 0; i < len(got) || i < len(want); i++ {
		switch {
		case i >= len(got):
			return fmt.Errorf("missing from offset %d on (%d of %d returned)", want[i].Offset, len(got), len(want))
		case i >= len(want):
			return fmt.Errorf("offset %d returned after the last one", got[i].Offset)
		}
		g, w := got[i], want[i]
		switch {
		case g.Offset != w.Offset:
			return fmt.Errorf("message %d: offset %d, want %d (returned %v, want %v)", i, g.Offset, w.Offset, messageOffsets(got), recordOffsets(want))
		case g.Topic != "t" || g.Partition != 0:
			return fmt.Errorf("offset %d: topic %q partition %d", g.Offset, g.Topic, g.Partition)
		case !sameNullable(g.Key, w.Key) || !sameNullable(g.Value, w.Value):
			return fmt.Errorf("offset %d: %q=%q (nil %v %v), want %q=%q (nil %v %v)", g.Offset, g.Key, g.Value, g.Key == nil, g.Value == nil, w.Key, w.Value, w.Key == nil, w.Value == nil)
		case g.Time.UnixMilli() != w.Time.UnixMilli():
			return fmt.Errorf("offset %d: time %v, want %v", g.Offset, g.Time, w.Time)
		case g.HighWaterMark != hwm:
			return fmt.Errorf("offset %d: high watermark %d, want %d", g.Offset, g.HighWaterMark, hwm)
		case len(g.Headers) != len(w.Headers):
			return fmt.Errorf("offset %d: headers %v, want %v", g.Offset, g.Headers, w.Headers)
		}
		for j, h := range g.Headers {
			if h.Key != w.Headers[j].Key || !sameNullable(h.Value, w.Headers[j].Value) {
				return fmt.Errorf("offset %d: headers %v, want %v", g.Offset, g.Headers, w.Headers)
			}
		}
	}
	return nil
}

// summarizeOffsets prints the first offsets of a list that may be long.
func summarizeOffsets(offsets []int64) string {
	if len(offsets) <= 12 {
		return fmt.Sprint(offsets)
	}
	return fmt.Sprintf("%v... (%d in all)", offsets[:12], len(offsets))
}

func sameNullable(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func messageOffsets(ms []Message) []int64 {
	out := make([]int64, len(ms))
	for i, m := range ms {
		out[i] = m.Offset
	}
	return out
}

func recordOffsets(rs []logshape.Record) []int64 {
	out := make([]int64, len(rs))
	for i, r := range rs {
		out[i] = r.Offset
	}
	return out
}

// A producer's committed transaction after its aborted one, another
// producer's records in between: reading committed records from the abort
// marker (where a group member that committed after "p1" resumes) returns
// the committed transaction, with every reader, and with a limit so small
// that each fetch returns one batch (a response that begins with the
// marker).
func TestLogShapesCommittedAfterAbortMarker(t *testing.T) {
	log := logshape.AbortThenCommit()
	lb := newLogBroker(t, log, 1)
	for _, c := range logConsumers {
		for _, from := range []int64{0, 1, 2} {
			for _, maxBytes := range []int{1, 1 << 20} {
				want := log.Consume(from, true)
				if from == 2 && fmt.Sprint(recordOffsets(want)) != "[3 4 6]" {
					t.Fatalf("the log model returns %v from 2", recordOffsets(want))
				}
				got, err := c.read(t, lb, from, 6, ReadCommitted, maxBytes)
				if err == nil {
					err = checkLogMessages(got, want, log.End())
				}
				if err != nil {
					t.Errorf("%s from %d, MaxBytes %d: %v", c.name, from, maxBytes, err)
				}
			}
		}
	}
}

// A batch whose last records compaction removed (its header keeps its last
// offset), then a batch it emptied: a fetch from inside the removed tail,
// or at the empty batch, moves on past them instead of fetching the same
// offset again.
func TestLogShapesCompactedTail(t *testing.T) {
	log := logshape.CompactedTail()
	for _, c := range logConsumers {
		for _, from := range []int64{7, 10, 5} {
			for _, level := range []IsolationLevel{ReadUncommitted, ReadCommitted} {
				lb := newLogBroker(t, log, 1)
				want := log.Consume(from, level == ReadCommitted)
				got, err := c.read(t, lb, from, 14, level, 1)
				if err == nil {
					err = checkLogMessages(got, want, log.End())
				}
				if err != nil {
					t.Errorf("%s from %d (isolation %d): %v (fetches %s)", c.name, from, level, err, summarizeOffsets(lb.fetchOffsets()))
					continue
				}
				// Each fetch starts after the batches of the one before.
				fetches := lb.fetchOffsets()
				for i := 1; i < len(fetches); i++ {
					if fetches[i] <= fetches[i-1] {
						t.Errorf("%s from %d: fetched %s", c.name, from, summarizeOffsets(fetches))
						break
					}
				}
			}
		}
	}
}

// logShapeSeeds is how many random logs TestLogShapesRandom reads
// (LOGSHAPE_SEEDS, 8 by default); LOGSHAPE_SEED runs that one seed.
func logShapeSeeds(t *testing.T) (first, n int64) {
	if s := os.Getenv("LOGSHAPE_SEED"); s != "" {
		seed, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return seed, 1
	}
	n = 8
	if s := os.Getenv("LOGSHAPE_SEEDS"); s != "" {
		var err error
		if n, err = strconv.ParseInt(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	return 1, n
}

// Random logs (logshape.Random: several producers, committed and aborted
// transactions, compaction holes, emptied and removed batches, compressed
// and LogAppendTime batches, segments) read by every consumer with both
// isolation levels, from a random offset, with a random MaxBytes: each
// returns what Kafka's consumer returns.
func TestLogShapesRandom(t *testing.T) {
	first, n := logShapeSeeds(t)
	for seed := first; seed < first+n; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			log := logshape.Random(rng, 20+rng.Intn(40))
			all, err := log.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			lb := newLogBroker(t, log, seed)
			// Fetch v4 (the lowest), v11, or v12 (flexible).
			lb.setFetchVersions(4, []int16{4, 11, 12}[rng.Intn(3)])
			end := log.End() - 1 // the record keyed "end"
			for _, c := range logConsumers {
				for _, level := range []IsolationLevel{ReadUncommitted, ReadCommitted} {
					from := rng.Int63n(log.End())
					maxBytes := []int{1, 1 + rng.Intn(512), 1 + rng.Intn(4096), 16 << 10, len(all)}[rng.Intn(5)]
					want := log.Consume(from, level == ReadCommitted)
					if len(want) == 0 || want[len(want)-1].Offset != end {
						t.Fatalf("the log model does not end with the last record: %v", recordOffsets(want))
					}
					got, err := c.read(t, lb, from, end, level, maxBytes)
					if err == nil {
						err = checkLogMessages(got, want, log.End())
					}
					if err != nil {
						t.Errorf("%s from %d, isolation %d, MaxBytes %d: %v", c.name, from, level, maxBytes, err)
					}
				}
			}
		})
	}
}

// Client.Fetch with ReadCommitted leaves the records of aborted
// transactions out but every batch in its place: the aborted batch with
// its header and no records, the markers with their records, so that a
// caller can step from batch to batch.
func TestLogShapesClientFetchKeepsBatches(t *testing.T) {
	log := logshape.AbortThenCommit()
	lb := newLogBroker(t, log, 1)
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	client := &Client{Addr: lb.addr(), Transport: tr}
	for _, level := range []IsolationLevel{ReadCommitted, ReadUncommitted} {
		res, err := client.Fetch(context.Background(), &FetchRequest{Topic: "t", Offset: 0, MinBytes: 1, MaxBytes: 1 << 20, MaxWait: 10 * time.Millisecond, IsolationLevel: level})
		if err != nil || res.Error != nil {
			t.Fatal(err, res.Error)
		}
		stream := res.Records.(*protocol.RecordStream)
		var shape []string
		for _, b := range stream.Records {
			switch b := b.(type) {
			case *protocol.RecordBatch:
				n := 0
				for {
					rec, err := b.ReadRecord()
					if err != nil {
						break
					}
					closeRecord(rec)
					n++
				}
				shape = append(shape, fmt.Sprintf("%d-%d:%d", b.BaseOffset, b.LastOffset(), n))
			case *protocol.ControlBatch:
				cr, err := b.ReadControlRecord()
				if err != nil {
					t.Fatal(err)
				}
				shape = append(shape, fmt.Sprintf("%d:marker%d", b.BaseOffset, cr.Type))
			}
		}
		want := "[0-0:0 1-1:1 2:marker0 3-4:2 5:marker1 6-6:1]"
		if level == ReadUncommitted {
			want = "[0-0:1 1-1:1 2:marker0 3-4:2 5:marker1 6-6:1]"
		}
		if got := fmt.Sprint(shape); got != want {
			t.Errorf("isolation %d: batches %s, want %s", level, got, want)
		}
	}
}
