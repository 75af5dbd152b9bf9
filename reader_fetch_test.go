package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/internal/logshape"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/fetch"
	"github.com/segmentio/kafka-go/protocol/listoffsets"
)

// stubPartition plays the leader of partition 0 of topic "t": ListOffsets
// returns [first, last), and each Fetch gets the next scripted answer (or an
// empty one once the script is over).
type stubPartition struct {
	mu          sync.Mutex
	first, last int64
	answers     []func(offset int64) *fetch.ResponsePartition
	fetches     []int64 // fetch offsets, in order
	isolation   []int8
}

func (s *stubPartition) RoundTrip(ctx context.Context, _ net.Addr, req Request) (Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch r := req.(type) {
	case *listoffsets.Request:
		p := r.Topics[0].Partitions[0]
		offset := s.last
		if p.Timestamp == FirstOffset {
			offset = s.first
		}
		return &listoffsets.Response{Topics: []listoffsets.ResponseTopic{{
			Topic:      "t",
			Partitions: []listoffsets.ResponsePartition{{Partition: p.Partition, Offset: offset}},
		}}}, nil
	case *fetch.Request:
		offset := r.Topics[0].Partitions[0].FetchOffset
		s.fetches = append(s.fetches, offset)
		s.isolation = append(s.isolation, r.IsolationLevel)
		part := &fetch.ResponsePartition{HighWatermark: s.last}
		if len(s.answers) > 0 {
			part = s.answers[0](offset)
			s.answers = s.answers[1:]
		} else {
			s.mu.Unlock()
			select { // a broker holds an empty fetch for MaxWait
			case <-time.After(5 * time.Millisecond):
			case <-ctx.Done():
			}
			s.mu.Lock()
		}
		return &fetch.Response{Topics: []fetch.ResponseTopic{{Topic: "t", Partitions: []fetch.ResponsePartition{*part}}}}, nil
	}
	return nil, fmt.Errorf("unexpected %T", req)
}

// serve makes fc play the stub (see serveStub).
func (s *stubPartition) serve(t testing.TB, fc *fakebroker.Cluster) { serveStub(t, fc, s) }

// serveStub makes fc play stub: fetch answers are written as a broker
// serves them (batches with their offsets, producers and markers, encoded
// by internal/logshape), everything else as the stub answers it.
func serveStub(t testing.TB, fc *fakebroker.Cluster, stub RoundTripper) {
	fc.SetHandler(func(r *fakebroker.Request) {
		res, err := stub.RoundTrip(context.Background(), fc.Addr(), r.Msg)
		if err != nil {
			r.CloseConn()
			return
		}
		fr, ok := res.(*fetch.Response)
		if !ok {
			r.Reply(res)
			return
		}
		part := fr.Topics[0].Partitions[0]
		out := logshape.FetchResponse{
			ErrorCode:        part.ErrorCode,
			HighWatermark:    part.HighWatermark,
			LastStableOffset: part.LastStableOffset,
			LogStartOffset:   part.LogStartOffset,
			Aborted:          part.AbortedTransactions,
		}
		if stream, ok := part.RecordSet.Records.(*protocol.RecordStream); ok {
			for _, b := range stream.Records {
				enc, err := logshape.Encode(stubToLogshape(t, b))
				if err != nil {
					t.Error(err)
				}
				out.Records = append(out.Records, enc...)
			}
		}
		frame, err := out.Frame(r.Version, r.ID, "t", part.Partition)
		if err != nil {
			t.Error(err)
			r.CloseConn()
			return
		}
		r.Conn.WMu.Lock()
		defer r.Conn.WMu.Unlock()
		r.Conn.NC.Write(frame)
	})
}

// stubToLogshape is a batch built for the stub as the broker stores it.
func stubToLogshape(t testing.TB, rr protocol.RecordReader) logshape.Batch {
	var lb logshape.Batch
	switch b := rr.(type) {
	case *protocol.RecordBatch:
		lb.ProducerID, lb.Transactional, lb.Base = b.ProducerID, b.Attributes.Transactional(), b.BaseOffset
	case *protocol.ControlBatch:
		lb.ProducerID, lb.Transactional, lb.Marker, lb.Base = b.ProducerID, true, logshape.Abort, b.BaseOffset
	default:
		t.Fatalf("stub batch of type %T", rr)
	}
	lb.Last = lb.Base
	for {
		rec, err := rr.ReadRecord()
		if err != nil {
			break
		}
		if lb.Marker != logshape.NoMarker {
			if cr, err := protocol.ReadControlRecord(rec); err == nil && cr.Type == 1 {
				lb.Marker = logshape.Commit
			}
			lb.Records = append(lb.Records, logshape.Record{Offset: rec.Offset, Time: time.UnixMilli(1000)})
			lb.Last = rec.Offset
			continue
		}
		key, _ := readFetchedBytes(rec.Key)
		value, _ := readFetchedBytes(rec.Value)
		lb.Records = append(lb.Records, logshape.Record{Offset: rec.Offset, Time: rec.Time, Key: key, Value: value, Headers: rec.Headers})
		lb.Last = rec.Offset
	}
	return lb
}

func stubRecords(from, to int64) []protocol.Record {
	var recs []protocol.Record
	for o := from; o < to; o++ {
		recs = append(recs, protocol.Record{
			Offset: o,
			Time:   time.UnixMilli(1000 + o),
			Key:    protocol.NewBytes([]byte(fmt.Sprintf("k%d", o))),
			Value:  protocol.NewBytes([]byte(fmt.Sprintf("v%d", o))),
		})
	}
	return recs
}

func stubBatch(pid int64, txn bool, from, to int64) *protocol.RecordBatch {
	b := &protocol.RecordBatch{BaseOffset: from, ProducerID: pid, Records: protocol.NewRecordReader(stubRecords(from, to)...)}
	if txn {
		b.Attributes = protocol.Transactional
	}
	return b
}

func stubMarker(pid int64, offset int64, commit bool) *protocol.ControlBatch {
	typ := int16(0)
	if commit {
		typ = 1
	}
	b := protocol.NewControlBatch(protocol.ControlRecord{Offset: offset, Type: typ})
	b.Attributes, b.ProducerID, b.BaseOffset = protocol.Control|protocol.Transactional, pid, offset
	return b
}

func stubSet(batches ...protocol.RecordReader) protocol.RecordSet {
	return protocol.RecordSet{Version: 2, Records: &protocol.RecordStream{Records: batches}}
}

func newStubReader(t *testing.T, stub *stubPartition, modify func(*ReaderConfig)) *Reader {
	fc := fakebroker.New(t, 1)
	stub.serve(t, fc)
	cfg := ReaderConfig{
		Brokers:        []string{fc.Addr().String()},
		Topic:          "t",
		MaxWait:        10 * time.Millisecond,
		ReadBackoffMin: time.Millisecond,
		ReadBackoffMax: 5 * time.Millisecond,
	}
	if modify != nil {
		modify(&cfg)
	}
	r := NewReader(cfg)
	t.Cleanup(func() { r.Close() })
	return r
}

func fetchOffsets(t *testing.T, r *Reader, n int) []int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var offsets []int64
	for i := 0; i < n; i++ {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			t.Fatalf("after %v: %v", offsets, err)
		}
		if string(m.Value) != fmt.Sprintf("v%d", m.Offset) || string(m.Key) != fmt.Sprintf("k%d", m.Offset) || m.Topic != "t" {
			t.Fatalf("message %+v", m)
		}
		offsets = append(offsets, m.Offset)
	}
	return offsets
}

// ReadCommitted drops the batches of aborted transactions (from their first
// offset to the abort marker, per producer) and all markers; the next fetch
// starts after the last batch, markers included.
func TestReaderReadCommittedFiltersAbortedBatches(t *testing.T) {
	stub := &stubPartition{first: 0, last: 12}
	stub.answers = append(stub.answers, func(offset int64) *fetch.ResponsePartition {
		return &fetch.ResponsePartition{
			HighWatermark:    12,
			LastStableOffset: 12,
			AbortedTransactions: []fetch.ResponseTransaction{
				{ProducerID: 2, FirstOffset: 2},
				{ProducerID: 1, FirstOffset: 8},
			},
			RecordSet: stubSet(
				stubBatch(1, true, 0, 2),  // committed below
				stubBatch(2, true, 2, 4),  // aborted
				stubBatch(3, false, 4, 5), // not transactional
				stubMarker(2, 5, false),   // abort of producer 2
				stubMarker(1, 6, true),    // commit of producer 1
				stubBatch(2, true, 7, 8),  // a new transaction of producer 2, not aborted
				stubBatch(1, true, 8, 10), // aborted
				stubMarker(1, 10, false),
				stubMarker(2, 11, true),
			),
		}
	})
	r := newStubReader(t, stub, func(c *ReaderConfig) { c.IsolationLevel = ReadCommitted })
	if got := fmt.Sprint(fetchOffsets(t, r, 4)); got != "[0 1 4 7]" {
		t.Fatalf("read committed offsets %s", got)
	}
	// The next fetch starts past the trailing markers.
	deadline := time.Now().Add(10 * time.Second)
	for {
		stub.mu.Lock()
		fetches, levels := append([]int64(nil), stub.fetches...), append([]int8(nil), stub.isolation...)
		stub.mu.Unlock()
		if len(fetches) >= 2 {
			if fetches[0] != 0 || fetches[1] != 12 || levels[0] != 1 {
				t.Fatalf("fetch offsets %v, isolation %v", fetches, levels)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no second fetch")
		}
		time.Sleep(time.Millisecond)
	}
	if r.Offset() != 8 || r.Lag() != 4 {
		t.Fatalf("offset %d lag %d", r.Offset(), r.Lag())
	}
}

// With ReadUncommitted every data record is returned, markers are not.
func TestReaderReadUncommittedKeepsAbortedRecords(t *testing.T) {
	stub := &stubPartition{first: 0, last: 6}
	stub.answers = append(stub.answers, func(int64) *fetch.ResponsePartition {
		return &fetch.ResponsePartition{
			HighWatermark:       6,
			AbortedTransactions: []fetch.ResponseTransaction{{ProducerID: 2, FirstOffset: 2}},
			RecordSet:           stubSet(stubBatch(1, false, 0, 2), stubBatch(2, true, 2, 4), stubMarker(2, 4, false), stubBatch(1, false, 5, 6)),
		}
	})
	r := newStubReader(t, stub, nil)
	if got := fmt.Sprint(fetchOffsets(t, r, 5)); got != "[0 1 2 3 5]" {
		t.Fatalf("offsets %s", got)
	}
}

// A batch may start before the fetch offset (compressed batches come
// whole): the records before it are not returned again.
func TestReaderSkipsRecordsBeforeFetchOffset(t *testing.T) {
	stub := &stubPartition{first: 0, last: 10}
	stub.answers = append(stub.answers,
		func(int64) *fetch.ResponsePartition {
			return &fetch.ResponsePartition{HighWatermark: 10, RecordSet: stubSet(stubBatch(1, false, 0, 5))}
		},
		func(int64) *fetch.ResponsePartition {
			// Overlaps what was already returned.
			return &fetch.ResponsePartition{HighWatermark: 10, RecordSet: stubSet(stubBatch(1, false, 3, 10))}
		},
	)
	r := newStubReader(t, stub, nil)
	if err := r.SetOffset(2); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(fetchOffsets(t, r, 8)); got != "[2 3 4 5 6 7 8 9]" {
		t.Fatalf("offsets %s", got)
	}
}

// Partition errors: OFFSET_OUT_OF_RANGE before the log start skips ahead;
// NOT_LEADER sets the reader up again; other Kafka errors reach
// FetchMessage and reading goes on.
func TestReaderFetchErrors(t *testing.T) {
	stub := &stubPartition{first: 3, last: 6}
	fail := func(code Error) func(int64) *fetch.ResponsePartition {
		return func(int64) *fetch.ResponsePartition { return &fetch.ResponsePartition{ErrorCode: int16(code)} }
	}
	data := func(offset int64) *fetch.ResponsePartition {
		return &fetch.ResponsePartition{HighWatermark: 6, RecordSet: stubSet(stubBatch(1, false, offset, offset+1))}
	}
	stub.answers = append(stub.answers, fail(NotLeaderForPartition), data, fail(OffsetOutOfRange), data, fail(InvalidMessage), data)
	r := newStubReader(t, stub, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []string
	for len(got) < 4 {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			if !errors.Is(err, InvalidMessage) {
				t.Fatal(err)
			}
			got = append(got, "corrupt")
			continue
		}
		got = append(got, fmt.Sprint(m.Offset))
	}
	if fmt.Sprint(got) != "[3 4 corrupt 5]" {
		t.Fatalf("got %v", got)
	}
	stub.mu.Lock()
	defer stub.mu.Unlock()
	if fmt.Sprint(stub.fetches[:6]) != "[3 3 4 4 5 5]" {
		t.Fatalf("fetch offsets %v", stub.fetches)
	}
}

// A reader nobody reads from holds QueueCapacity messages and the one fetch
// response being delivered: it sends no further fetch.
func TestReaderMemoryIsBounded(t *testing.T) {
	stub := &stubPartition{first: 0, last: 1000}
	for i := 0; i < 10; i++ {
		stub.answers = append(stub.answers, func(offset int64) *fetch.ResponsePartition {
			return &fetch.ResponsePartition{HighWatermark: 1000, RecordSet: stubSet(stubBatch(1, false, offset, offset+100))}
		})
	}
	r := newStubReader(t, stub, func(c *ReaderConfig) { c.QueueCapacity = 5 })
	fetchOffsets(t, r, 1) // starts the partition reader

	deadline := time.Now().Add(10 * time.Second)
	for r.Stats().QueueLength < 5 {
		if time.Now().After(deadline) {
			t.Fatal("queue never filled")
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // time for a fetch that should not happen
	stub.mu.Lock()
	n := len(stub.fetches)
	stub.mu.Unlock()
	if st := r.Stats(); n != 1 || st.QueueLength != 5 || st.QueueCapacity != 5 {
		t.Fatalf("%d fetches, queue %d/%d", n, st.QueueLength, st.QueueCapacity)
	}
	// Reading resumes the flow, in order.
	if got := fetchOffsets(t, r, 150); got[0] != 1 || got[149] != 150 {
		t.Fatalf("offsets %d..%d", got[0], got[149])
	}
}

// BenchmarkReaderFetchMessage measures the cost per message of the reader
// on batches of 500 small records served by a scripted leader.
func BenchmarkReaderFetchMessage(b *testing.B) {
	stub := &stubPartition{first: 0, last: 1 << 40}
	const perFetch = 500
	for i := 0; i < b.N/perFetch+2; i++ {
		stub.answers = append(stub.answers, func(offset int64) *fetch.ResponsePartition {
			return &fetch.ResponsePartition{HighWatermark: 1 << 40, RecordSet: stubSet(stubBatch(1, false, offset, offset+perFetch))}
		})
	}
	fc := fakebroker.New(b, 1)
	stub.serve(b, fc)
	r := NewReader(ReaderConfig{Brokers: []string{fc.Addr().String()}, Topic: "t", MaxWait: 10 * time.Millisecond})
	defer r.Close()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.FetchMessage(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// Batches that end before the fetch offset (their tail compacted away) are
// fetched again after a backoff, not in a tight loop, and reading goes on
// once the partition has more.
func TestReaderFetchWithoutProgress(t *testing.T) {
	stub := &stubPartition{first: 0, last: 10}
	stale := func(int64) *fetch.ResponsePartition {
		return &fetch.ResponsePartition{HighWatermark: 10, RecordSet: stubSet(stubBatch(1, false, 0, 5))}
	}
	stub.answers = append(stub.answers, stale, stale, stale, func(int64) *fetch.ResponsePartition {
		return &fetch.ResponsePartition{HighWatermark: 10, RecordSet: stubSet(stubBatch(1, false, 5, 10))}
	})
	r := newStubReader(t, stub, func(c *ReaderConfig) { c.ReadBackoffMin, c.ReadBackoffMax = 5*time.Millisecond, 20*time.Millisecond })
	if err := r.SetOffset(5); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if got := fmt.Sprint(fetchOffsets(t, r, 5)); got != "[5 6 7 8 9]" {
		t.Fatalf("offsets %s", got)
	}
	// Three paced retries: 5ms, 20ms and 20ms at least.
	if elapsed := time.Since(start); elapsed < 45*time.Millisecond {
		t.Fatalf("retried without backoff (%v)", elapsed)
	}
	stub.mu.Lock()
	defer stub.mu.Unlock()
	if fmt.Sprint(stub.fetches[:4]) != "[5 5 5 5]" {
		t.Fatalf("fetches %v", stub.fetches)
	}
}

// ReadLagInterval keeps the lag gauge of Stats up to date, even before any
// message is read; Close stops the loop.
func TestReaderLagLoop(t *testing.T) {
	stub := &stubPartition{first: 0, last: 1000}
	r := newStubReader(t, stub, func(c *ReaderConfig) { c.ReadLagInterval = 5 * time.Millisecond })
	if err := r.SetOffset(10); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for r.Stats().Lag != 990 {
		if time.Now().After(deadline) {
			t.Fatal("lag never reported")
		}
		time.Sleep(time.Millisecond)
	}
	r.Close()
}

// Logger receives what the reader does, ErrorLogger its errors.
func TestReaderLoggers(t *testing.T) {
	var mu sync.Mutex
	var infos, errs []string
	logTo := func(dst *[]string) LoggerFunc {
		return func(format string, args ...interface{}) {
			mu.Lock()
			defer mu.Unlock()
			*dst = append(*dst, fmt.Sprintf(format, args...))
		}
	}
	stub := &stubPartition{first: 0, last: 2}
	stub.answers = append(stub.answers,
		func(int64) *fetch.ResponsePartition {
			return &fetch.ResponsePartition{ErrorCode: int16(NotLeaderForPartition)}
		},
		func(offset int64) *fetch.ResponsePartition {
			return &fetch.ResponsePartition{HighWatermark: 2, RecordSet: stubSet(stubBatch(1, false, offset, 2))}
		},
	)
	r := newStubReader(t, stub, func(c *ReaderConfig) {
		c.Logger, c.ErrorLogger = logTo(&infos), logTo(&errs)
	})
	fetchOffsets(t, r, 2)
	r.Close()
	mu.Lock()
	defer mu.Unlock()
	has := func(list []string, part string) bool {
		for _, s := range list {
			if strings.Contains(s, part) {
				return true
			}
		}
		return false
	}
	if !has(infos, "initializing kafka reader for partition 0 of t starting at offset first offset") {
		t.Errorf("info messages: %q", infos)
	}
	if !has(errs, "Not Leader For Partition") || has(infos, "Not Leader For Partition") {
		t.Errorf("error messages: %q; info: %q", errs, infos)
	}
}
