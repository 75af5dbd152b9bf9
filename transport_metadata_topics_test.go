package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/protocol/fetch"
	"github.com/segmentio/kafka-go/protocol/metadata"
)

// The Transport's metadata refreshes ask for the topics the program uses,
// not for every topic of the cluster (transport_topics.go): a program that
// uses one topic of a large cluster must not pay for the others.

// metaNames returns the topics a Metadata request asked for, and false for
// a request for all topics.
func metaNames(m *metadata.Request) ([]string, bool) {
	if m.Topics != nil {
		names := make([]string, len(m.Topics))
		for i, t := range m.Topics {
			names[i] = t.Name
		}
		return names, true
	}
	return m.TopicNames, m.TopicNames != nil
}

// metaRequests returns the Metadata requests fc received so far.
func metaRequests(fc *fakebroker.Cluster) []*metadata.Request {
	fc.Mu.Lock()
	defer fc.Mu.Unlock()
	return append([]*metadata.Request(nil), fc.MetaReqs...)
}

// checkMetaTopics fails unless every Metadata request fc received named
// topics, all of them in allowed.
func checkMetaTopics(t *testing.T, fc *fakebroker.Cluster, allowed ...string) [][]string {
	t.Helper()
	var all [][]string
	for i, m := range metaRequests(fc) {
		names, ok := metaNames(m)
		if !ok {
			t.Errorf("metadata request %d asked for every topic of the cluster", i)
			continue
		}
		for _, n := range names {
			if !slices.Contains(allowed, n) {
				t.Errorf("metadata request %d asked for %q (topics %q), not in use", i, n, names)
			}
		}
		all = append(all, names)
	}
	return all
}

func clusterWithOtherTopics(t testing.TB, others int) *fakebroker.Cluster {
	fc := fakebroker.New(t, 1)
	var names []string
	for i := 0; i < others; i++ {
		names = append(names, fmt.Sprintf("other-%d", i))
	}
	fc.AddTopics(names...)
	return fc
}

// TestWriterMetadataRefreshNamesTopicInUse: a Writer of topic "t" on a
// cluster of 100 more topics, with a MetadataTTL short enough that the
// Transport refreshes many times while it writes: every refresh asks for
// "t" alone.
func TestWriterMetadataRefreshNamesTopicInUse(t *testing.T) {
	fc := clusterWithOtherTopics(t, 100)
	fc.SetHandler(func(r *fakebroker.Request) { answerProduce(r, func(int32) int16 { return 0 }) })
	tr := &Transport{MetadataTTL: 20 * time.Millisecond}
	defer tr.CloseIdleConnections()
	w := &Writer{Addr: fc.Addr(), Topic: "t", Transport: tr, BatchSize: 1, RequiredAcks: RequireOne}
	defer w.Close()
	ctx := testContext(t)
	for i := 0; len(metaRequests(fc)) < 5; i++ {
		if err := w.WriteMessages(ctx, Message{Value: []byte("v")}); err != nil {
			t.Fatal(err)
		}
		if i > 100000 {
			t.Fatal("the Transport never refreshed its metadata")
		}
	}
	names := checkMetaTopics(t, fc, "t")
	t.Logf("metadata requests: %q", names)
}

// TestWriterWithoutTopicMetadataNamesItsTopics: a Writer without Topic,
// whose messages name "other-1" then also "other-2": the refreshes ask for
// the topics written to so far, and both once both are in use.
func TestWriterWithoutTopicMetadataNamesItsTopics(t *testing.T) {
	fc := clusterWithOtherTopics(t, 100)
	fc.SetHandler(func(r *fakebroker.Request) { answerProduce(r, func(int32) int16 { return 0 }) })
	tr := &Transport{MetadataTTL: 20 * time.Millisecond}
	defer tr.CloseIdleConnections()
	w := &Writer{Addr: fc.Addr(), Transport: tr, BatchSize: 1, RequiredAcks: RequireOne}
	defer w.Close()
	ctx := testContext(t)
	write := func(topic string) {
		if err := w.WriteMessages(ctx, Message{Topic: topic, Value: []byte("v")}); err != nil {
			t.Fatal(err)
		}
	}
	write("other-1")
	checkMetaTopics(t, fc, "other-1")
	seen := len(metaRequests(fc))
	for i := 0; ; i++ {
		write("other-1")
		write("other-2")
		reqs := metaRequests(fc)
		if len(reqs) > seen+3 {
			last, _ := metaNames(reqs[len(reqs)-1])
			if !slices.Contains(last, "other-1") || !slices.Contains(last, "other-2") {
				t.Errorf("the last refresh asked for %q, want other-1 and other-2", last)
			}
			break
		}
		if i > 100000 {
			t.Fatal("the Transport never refreshed its metadata")
		}
	}
	checkMetaTopics(t, fc, "other-1", "other-2")
}

// TestReaderMetadataRefreshNamesItsTopic: a Reader of partition 0 of "t"
// on a cluster of 100 more topics, told by its broker that the leader
// moved (which makes its Transport refresh) on every fetch: every refresh
// asks for "t" alone.
func TestReaderMetadataRefreshNamesItsTopic(t *testing.T) {
	fc := clusterWithOtherTopics(t, 100)
	stub := &stubPartition{first: 0, last: 0}
	for i := 0; i < 1000; i++ {
		stub.answers = append(stub.answers, func(int64) *fetch.ResponsePartition {
			return &fetch.ResponsePartition{ErrorCode: int16(NotLeaderForPartition)}
		})
	}
	stub.serve(t, fc)
	r := NewReader(ReaderConfig{
		Brokers: []string{fc.Addr().String()}, Topic: "t",
		MaxWait: 10 * time.Millisecond, ReadBackoffMin: time.Millisecond, ReadBackoffMax: 5 * time.Millisecond,
	})
	defer r.Close()
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	go r.FetchMessage(ctx) //nolint:errcheck // it only has to keep fetching
	eventually(t, "five metadata requests", func() bool { return len(metaRequests(fc)) >= 5 })
	cancel()
	names := checkMetaTopics(t, fc, "t")
	t.Logf("metadata requests: %q", names)
}

// TestClientMetadataOfAllTopics: a Metadata request for every topic (no
// names) through a Transport whose cache holds the topics in use still
// lists every topic of the cluster, as with upstream's Transport.
func TestClientMetadataOfAllTopics(t *testing.T) {
	fc := clusterWithOtherTopics(t, 20)
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	c := &Client{Addr: fc.Addr(), Transport: tr}
	ctx := testContext(t)
	one, err := c.Metadata(ctx, &MetadataRequest{Topics: []string{"other-3"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Topics) != 1 || one.Topics[0].Name != "other-3" {
		t.Fatalf("metadata of other-3: %+v", one.Topics)
	}
	all, err := c.Metadata(ctx, &MetadataRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Topics) != 21 {
		t.Fatalf("metadata of all topics lists %d topics, want 21", len(all.Topics))
	}
}

// TestWriterManyTopicsMetadataGrowsLinearly: a Writer without Topic takes
// 300 topics into use one after another. Each new topic must cost a
// Metadata request for the new topic, not one for every topic in use so
// far (300 × 300 / 2 names asked in all).
func TestWriterManyTopicsMetadataGrowsLinearly(t *testing.T) {
	const topics = 300
	fc := clusterWithOtherTopics(t, topics)
	fc.SetHandler(func(r *fakebroker.Request) { answerProduce(r, func(int32) int16 { return 0 }) })
	answerNamedMetadata(fc)
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	w := &Writer{Addr: fc.Addr(), Transport: tr, BatchSize: 1, RequiredAcks: RequireOne}
	defer w.Close()
	ctx := testContext(t)
	for i := 0; i < topics; i++ {
		if err := w.WriteMessages(ctx, Message{Topic: fmt.Sprintf("other-%d", i), Value: []byte("v")}); err != nil {
			t.Fatal(err)
		}
	}
	asked := 0
	for _, names := range checkMetaTopics(t, fc, otherTopics(topics)...) {
		asked += len(names)
	}
	t.Logf("%d metadata requests, %d topic names asked in all", len(metaRequests(fc)), asked)
	if asked > 4*topics {
		t.Errorf("%d topic names asked for %d topics taken into use one by one, want at most %d", asked, topics, 4*topics)
	}
}

// answerNamedMetadata makes fc's first broker answer Metadata requests with
// the topics asked for (all for a request of every topic), as a broker does,
// recording each request.
func answerNamedMetadata(fc *fakebroker.Cluster) {
	fc.Brokers[0].Intercept = func(_ *fakebroker.Conn, r *fakebroker.Request) bool {
		m, ok := r.Msg.(*metadata.Request)
		if !ok {
			return false
		}
		fc.Mu.Lock()
		fc.MetaReqs = append(fc.MetaReqs, m)
		fc.Mu.Unlock()
		res := fc.MetadataResponse()
		if names, ok := metaNames(m); ok {
			kept := res.Topics[:0]
			for _, t := range res.Topics {
				if slices.Contains(names, t.Name) {
					kept = append(kept, t)
				}
			}
			res.Topics = kept
		}
		r.Reply(res)
		return true
	}
}

// TestWriterNewTopicLookupsGoAside: an asynchronous Writer takes 60 topics
// into use one message at a time. Its lookup of each new topic is one
// Metadata request naming that topic, sent as it is rather than as a
// refresh of the Transport's cache (which would copy the cached state once
// per topic); the Produce request carrying the first messages takes all 60
// into use in one refresh; and once the Writer's own counts go stale, its
// lookups are answered from that cache, without a request per topic.
func TestWriterNewTopicLookupsGoAside(t *testing.T) {
	const topics = 60
	fc := clusterWithOtherTopics(t, topics)
	fc.SetHandler(func(r *fakebroker.Request) { answerProduce(r, func(int32) int16 { return 0 }) })
	answerNamedMetadata(fc)
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	w := &Writer{Addr: fc.Addr(), Transport: tr, Async: true, BatchTimeout: time.Hour, RequiredAcks: RequireOne}
	defer w.Close()
	ctx := testContext(t)
	write := func() {
		for i := 0; i < topics; i++ {
			if err := w.WriteMessages(ctx, Message{Topic: fmt.Sprintf("other-%d", i), Value: []byte("v")}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	write()
	// The first lookup finds no cached state at all and fills it; each
	// later one is a request of its own for its topic.
	single := map[string]int{}
	var wide [][]string
	for _, names := range checkMetaTopics(t, fc, otherTopics(topics)...) {
		if len(names) == 1 {
			single[names[0]]++
		} else {
			wide = append(wide, names)
		}
	}
	if len(single) != topics {
		t.Errorf("%d topics looked up by a request of their own, want %d", len(single), topics)
	}
	for name, n := range single {
		if n > 2 {
			t.Errorf("topic %s looked up %d times", name, n)
		}
	}
	// The Produce requests took the topics into use, many at a time (how
	// many requests carry the 60 first batches is up to the sink; a
	// lookup racing with the first refresh may take its topic in alone).
	// A lookup that took its topic into use would have left no topic for
	// these refreshes.
	inUse, asked := map[string]bool{}, 0
	for _, names := range wide {
		asked += len(names)
		for _, n := range names {
			inUse[n] = true
		}
	}
	if len(inUse) < topics/2 || len(wide) > topics/4 || asked > 2*topics {
		t.Errorf("refreshes took %d of %d topics into use, in %d requests naming %d topics in all: %q", len(inUse), topics, len(wide), asked, wide)
	}
	if n := len(metaRequests(fc)); n > topics+topics/4 {
		t.Errorf("%d metadata requests for %d topics", n, topics)
	}
	t.Logf("%d metadata requests: %d single-topic, %d wider", len(metaRequests(fc)), len(single), len(wide))

	// Once the Writer's counts are stale, it asks the Transport again:
	// the cache answers.
	before := len(metaRequests(fc))
	time.Sleep(writerMetadataTTL + 100*time.Millisecond)
	write()
	for i, m := range metaRequests(fc)[before:] {
		if names, _ := metaNames(m); len(names) < topics {
			t.Errorf("lookup after the counts went stale: request %d asked for %q, want the cache to answer", i, names)
		}
	}
}

func otherTopics(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("other-%d", i)
	}
	return names
}

// TestWriterCallToNewTopicsLooksThemUpTogether: one WriteMessages call
// whose messages go to 50 topics the Writer has not seen looks them up in
// one Metadata request, not in 50 one after the other; a topic of the call
// that does not exist still fails the call with UnknownTopicOrPartition.
func TestWriterCallToNewTopicsLooksThemUpTogether(t *testing.T) {
	const topics = 50
	fc := clusterWithOtherTopics(t, topics)
	fc.SetHandler(func(r *fakebroker.Request) { answerProduce(r, func(int32) int16 { return 0 }) })
	answerNamedMetadata(fc)
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	w := &Writer{Addr: fc.Addr(), Transport: tr, RequiredAcks: RequireOne}
	defer w.Close()
	ctx := testContext(t)
	var msgs []Message
	for i := 0; i < 2*topics; i++ {
		msgs = append(msgs, Message{Topic: fmt.Sprintf("other-%d", i%topics), Value: []byte("v")})
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	lookups := 0
	for _, names := range checkMetaTopics(t, fc, otherTopics(topics)...) {
		if len(names) == topics {
			lookups++
		}
	}
	if lookups == 0 || len(metaRequests(fc)) > 4 {
		t.Errorf("%d metadata requests, %d naming all %d topics: want the call's topics looked up together", len(metaRequests(fc)), lookups, topics)
	}

	err := w.WriteMessages(ctx, Message{Topic: "other-1", Value: []byte("v")}, Message{Topic: "missing", Value: []byte("v")})
	if !errors.Is(err, UnknownTopicOrPartition) {
		t.Errorf("call with a missing topic: %v, want UnknownTopicOrPartition", err)
	}
}

// BenchmarkWriterNewTopics: an asynchronous Writer, with a Transport of its
// own (nothing cached), writes one message to each of 200 topics, one call
// per message, then closes: the cost of taking topics into use one after
// another (per op: all 200).
func BenchmarkWriterNewTopics(b *testing.B) {
	const topics = 200
	fc := clusterWithOtherTopics(b, topics)
	fc.SetHandler(func(r *fakebroker.Request) { answerProduce(r, func(int32) int16 { return 0 }) })
	names := otherTopics(topics)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		tr := &Transport{}
		w := &Writer{Addr: fc.Addr(), Transport: tr, Async: true, RequiredAcks: RequireOne}
		for _, name := range names {
			if err := w.WriteMessages(ctx, Message{Topic: name, Value: []byte("v")}); err != nil {
				b.Fatal(err)
			}
		}
		w.Close()
		tr.CloseIdleConnections()
	}
}
