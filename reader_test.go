package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/fetch"
	"github.com/segmentio/kafka-go/sasl/plain"
)

// An address nothing listens on: connections are refused at once.
var unreachableBrokers = []string{"127.0.0.1:1"}

func TestReaderConfigValidate(t *testing.T) {
	valid := ReaderConfig{Brokers: unreachableBrokers, Topic: "t"}
	tests := []struct {
		name   string
		modify func(*ReaderConfig)
		err    string
	}{
		{"no brokers", func(c *ReaderConfig) { c.Brokers = nil }, "cannot create a new kafka reader with an empty list of broker addresses"},
		{"negative partition", func(c *ReaderConfig) { c.Partition = -1 }, "partition number out of bounds: -1"},
		{"huge partition", func(c *ReaderConfig) { c.Partition = 1 << 31 }, "partition number out of bounds: 2147483648"},
		{"negative min bytes", func(c *ReaderConfig) { c.MinBytes = -1 }, "invalid negative minimum batch size (min = -1)"},
		{"negative max bytes", func(c *ReaderConfig) { c.MaxBytes = -1 }, "invalid negative maximum batch size (max = -1)"},
		{"group and partition", func(c *ReaderConfig) { c.GroupID, c.Partition = "g", 1 }, "either Partition or GroupID may be specified, but not both"},
		{"group without topic", func(c *ReaderConfig) { c.GroupID, c.Topic = "g", "" }, "either Topic or GroupTopics must be specified with GroupID"},
		{"no topic", func(c *ReaderConfig) { c.Topic = "" }, "cannot create a new kafka reader with an empty topic"},
		{"min above max", func(c *ReaderConfig) { c.MinBytes, c.MaxBytes = 10, 5 }, "minimum batch size greater than the maximum (min = 10, max = 5)"},
		{"negative backoff max", func(c *ReaderConfig) { c.ReadBackoffMax = -1 }, "ReadBackoffMax out of bounds: -1"},
		{"negative backoff min", func(c *ReaderConfig) { c.ReadBackoffMin = -1 }, "ReadBackoffMin out of bounds: -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid
			tt.modify(&c)
			err := c.Validate()
			if err == nil || err.Error() != tt.err {
				t.Fatalf("got %v, want %q", err, tt.err)
			}
			defer func() {
				if p := recover(); p == nil || fmt.Sprint(p) != tt.err {
					t.Fatalf("NewReader panicked with %v", p)
				}
			}()
			NewReader(c)
		})
	}
	if err := valid.Validate(); err != nil {
		t.Fatal(err)
	}
	group := ReaderConfig{Brokers: unreachableBrokers, GroupID: "g", GroupTopics: []string{"a", "b"}}
	if err := group.Validate(); err != nil {
		t.Fatal(err)
	}
	// MinBytes is compared before defaults apply: a MinBytes alone is
	// rejected, as by the original.
	if err := (&ReaderConfig{Brokers: unreachableBrokers, Topic: "t", MinBytes: 10}).Validate(); err == nil {
		t.Fatal("MinBytes above unset MaxBytes accepted")
	}
}

func TestNewReaderPanicsOnInvertedBackoff(t *testing.T) {
	defer func() {
		p := recover()
		if p == nil || !strings.Contains(fmt.Sprint(p), "ReadBackoffMax 1000000 smaller than ReadBackoffMin 2000000") {
			t.Fatalf("panic: %v", p)
		}
	}()
	NewReader(ReaderConfig{Brokers: unreachableBrokers, Topic: "t", ReadBackoffMin: 2 * time.Millisecond, ReadBackoffMax: time.Millisecond})
}

func TestNewReaderDefaults(t *testing.T) {
	r := NewReader(ReaderConfig{Brokers: unreachableBrokers, Topic: "t", Partition: 2})
	defer r.Close()
	c := r.Config()
	if c.Dialer != DefaultDialer || c.MaxBytes != 1e6 || c.MinBytes != 1 || c.MaxWait != 10*time.Second ||
		c.ReadBatchTimeout != 10*time.Second || c.ReadLagInterval != time.Minute || c.ReadBackoffMin != 100*time.Millisecond ||
		c.ReadBackoffMax != time.Second || c.QueueCapacity != 100 || c.MaxAttempts != 3 || c.GroupBalancers != nil {
		t.Fatalf("defaults: %+v", c)
	}
	st := r.Stats()
	if st.Partition != "2" || st.Topic != "t" || st.QueueCapacity != 100 || st.MaxBytes != 1e6 || st.MinBytes != 1 || st.MaxWait != 10*time.Second {
		t.Fatalf("stats: %+v", st)
	}
	if r.Offset() != FirstOffset || r.Lag() != 0 {
		t.Fatalf("offset %d lag %d", r.Offset(), r.Lag())
	}
	if err := r.CommitMessages(context.Background(), Message{}); err == nil || err.Error() != "unavailable when GroupID is not set" {
		t.Fatalf("CommitMessages: %v", err)
	}

	g := NewReader(ReaderConfig{Brokers: unreachableBrokers, GroupID: "g", Topic: "t"})
	defer g.Close()
	gc := g.Config()
	if len(gc.GroupBalancers) != 2 || gc.GroupBalancers[0].ProtocolName() != "range" || gc.GroupBalancers[1].ProtocolName() != "roundrobin" {
		t.Fatalf("group balancers: %+v", gc.GroupBalancers)
	}
	if g.Stats().Partition != "-1" || g.Offset() != -1 || g.Lag() != -1 {
		t.Fatal("group reader offsets")
	}
	if err := g.SetOffset(1); err == nil || err.Error() != "unavailable when GroupID is set" {
		t.Fatalf("SetOffset: %v", err)
	}
	if _, err := g.ReadLag(context.Background()); err == nil {
		t.Fatal("ReadLag on a group reader")
	}
}

// A reader whose brokers cannot be reached reports errors to FetchMessage
// after MaxAttempts, keeps retrying, and Close stops everything.
func TestReaderUnreachableBrokers(t *testing.T) {
	r := NewReader(ReaderConfig{
		Brokers:        unreachableBrokers,
		Topic:          "t",
		MaxAttempts:    1,
		ReadBackoffMin: time.Millisecond,
		ReadBackoffMax: 5 * time.Millisecond,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < 2; i++ {
		if _, err := r.FetchMessage(ctx); err == nil || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("FetchMessage: %v", err)
		}
	}
	if st := r.Stats(); st.Dials == 0 {
		t.Fatalf("no dial counted: %+v", st)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.FetchMessage(ctx); err != io.EOF {
		t.Fatalf("FetchMessage after Close: %v", err)
	}
	if err := r.SetOffsetAt(ctx, time.Now()); err != io.ErrClosedPipe {
		t.Fatalf("SetOffsetAt after Close: %v", err)
	}
}

// A group reader whose brokers cannot be reached reports the join error to
// FetchMessage and closes cleanly; commits after Close are refused.
func TestGroupReaderUnreachableBrokers(t *testing.T) {
	r := NewReader(ReaderConfig{
		Brokers:          unreachableBrokers,
		GroupID:          "g",
		Topic:            "t",
		MaxAttempts:      1,
		JoinGroupBackoff: time.Millisecond,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := r.FetchMessage(ctx); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("FetchMessage: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.CommitMessages(ctx, Message{Topic: "t"}); err != io.ErrClosedPipe {
		t.Fatalf("CommitMessages after Close: %v", err)
	}
}

func TestOffsetStashKeepsHighest(t *testing.T) {
	o := offsetStash{}
	o.merge(makeCommits(Message{Topic: "a", Partition: 1, Offset: 5}, Message{Topic: "a", Partition: 1, Offset: 3}))
	o.merge(makeCommits(Message{Topic: "a", Partition: 2, Offset: 0}, Message{Topic: "b", Partition: 1, Offset: 9}))
	want := offsetStash{"a": {1: 6, 2: 1}, "b": {1: 10}}
	if fmt.Sprint(o) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", o, want)
	}
	o.reset()
	if len(o) != 0 {
		t.Fatal("reset")
	}
}

func TestHumanOffset(t *testing.T) {
	got := fmt.Sprintf("%d %d %d", toHumanOffset(FirstOffset), toHumanOffset(LastOffset), toHumanOffset(42))
	if got != "first offset last offset 42" {
		t.Fatal(got)
	}
}

func TestBackoff(t *testing.T) {
	for attempt, want := range []time.Duration{0, 100 * time.Millisecond, 400 * time.Millisecond, 900 * time.Millisecond, time.Second, time.Second} {
		if got := backoff(attempt, 100*time.Millisecond, time.Second); got != want {
			t.Errorf("attempt %d: %v, want %v", attempt, got, want)
		}
	}
	if got := backoff(1<<30, time.Second, time.Minute); got != time.Minute {
		t.Errorf("overflow: %v", got)
	}
}

// Messages decoded from the wire keep what their records say: a null key
// or value is nil, an empty one empty, headers come along, and appending
// to a key leaves the value alone (key and value share an allocation).
func TestReaderWireRecordFields(t *testing.T) {
	for _, codec := range []CompressionCodec{nil, Zstd.Codec()} {
		stub := newWireFetchStubOf(t, func() []protocol.Record {
			b := func(s string) protocol.Bytes { return protocol.NewBytes([]byte(s)) }
			return []protocol.Record{
				{Value: b("a")},
				{Key: b("")},
				{Key: b("k"), Value: b(""), Headers: []protocol.Header{{Key: "h", Value: []byte("hv")}}},
				{Key: b("k3"), Value: b("v3")},
			}
		}, 300, codec)
		fc := stub.serveOver(t)
		r := NewReader(ReaderConfig{Brokers: []string{fc.Addr().String()}, Topic: "t"})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		for i := 0; i < 8; i++ {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if m.Offset != int64(i) {
				t.Fatalf("message %d has offset %d", i, m.Offset)
			}
			var ok bool
			switch i % 4 {
			case 0:
				ok = m.Key == nil && string(m.Value) == "a" && m.Headers == nil
			case 1:
				ok = m.Key != nil && len(m.Key) == 0 && m.Value == nil
			case 2:
				ok = string(m.Key) == "k" && m.Value != nil && len(m.Value) == 0 &&
					len(m.Headers) == 1 && m.Headers[0].Key == "h" && string(m.Headers[0].Value) == "hv"
			case 3:
				_ = append(m.Key, "XXXX"...)
				ok = string(m.Key) == "k3" && string(m.Value) == "v3"
			}
			if !ok {
				t.Errorf("codec %v, message %d: key %#v value %#v headers %v", codec, i, m.Key, m.Value, m.Headers)
			}
		}
		cancel()
		r.Close()
	}
}

// A login the broker refuses reaches ReadMessage (after MaxAttempts
// setups), whether the broker says so or hangs up: a lost connection in
// the middle of a SASL exchange is retried, a refusal is not hidden.
func TestReaderReportsRefusedLogin(t *testing.T) {
	fc := fakebroker.New(t, 1)
	tpPlainV0Auth(fc.Brokers[0], "u", "p")
	r := NewReader(ReaderConfig{
		Brokers:        []string{fc.Addr().String()},
		Topic:          "t",
		Dialer:         &Dialer{SASLMechanism: plain.Mechanism{Username: "u", Password: "wrong"}},
		MaxAttempts:    2,
		ReadBackoffMin: time.Millisecond,
		ReadBackoffMax: 5 * time.Millisecond,
	})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := r.ReadMessage(ctx); !errors.Is(err, SASLAuthenticationFailed) {
		t.Fatalf("ReadMessage: %v, want SASLAuthenticationFailed", err)
	}
}

// A Reader whose Dialer has no ClientID names itself DefaultClientID in
// every request, partition and group readers alike, as v0.4.51's
// connections do (brokers apply quotas and ACLs, and log, by client ID);
// a Dialer's ClientID is used as given.
func TestReaderClientID(t *testing.T) {
	for _, tc := range []struct {
		name   string
		dialer *Dialer
		want   string
	}{
		{"default dialer", nil, DefaultClientID},
		{"dialer without client ID", &Dialer{Timeout: time.Second}, DefaultClientID},
		{"dialer with client ID", &Dialer{ClientID: "mine"}, "mine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			check := func(t *testing.T, fc *fakebroker.Cluster) {
				t.Helper()
				fc.Mu.Lock()
				defer fc.Mu.Unlock()
				if len(fc.Seen) == 0 {
					t.Fatal("no request seen")
				}
				for _, s := range fc.Seen {
					if s.ClientID != tc.want {
						t.Errorf("%v v%d sent with client ID %q, want %q", s.Key, s.Version, s.ClientID, tc.want)
					}
				}
			}
			t.Run("partition", func(t *testing.T) {
				stub := &stubPartition{first: 0, last: 3}
				stub.answers = append(stub.answers, func(int64) *fetch.ResponsePartition {
					return &fetch.ResponsePartition{HighWatermark: 3, LastStableOffset: 3, RecordSet: stubSet(stubBatch(-1, false, 0, 3))}
				})
				fc := fakebroker.New(t, 1)
				stub.serve(t, fc)
				r := NewReader(ReaderConfig{Brokers: []string{fc.Addr().String()}, Topic: "t", MaxWait: 10 * time.Millisecond, Dialer: tc.dialer})
				defer r.Close()
				fetchOffsets(t, r, 3)
				check(t, fc)
			})
			t.Run("group", func(t *testing.T) {
				stub := newCoopGroupStub(func(int) []int { return []int{0} }, map[int32]int64{0: 3})
				r := stubGroupReader(serveCoopGroupStub(t, stub), RangeGroupBalancer{}, func(c *ReaderConfig) { c.Dialer = tc.dialer })
				defer r.Close()
				fetchOffsets(t, r, 3)
				check(t, stub.coord.Cluster)
			})
		})
	}
}

// A fetch the broker holds for MaxWait and answers with no records counts
// in ReaderStats.Timeouts, as in v0.4.51: a reader at the end of its
// partition shows its idle polls there; one still reading shows none.
func TestReaderStatsTimeoutsCountEmptyFetches(t *testing.T) {
	stub := &stubPartition{first: 0, last: 3}
	stub.answers = append(stub.answers, func(int64) *fetch.ResponsePartition {
		return &fetch.ResponsePartition{HighWatermark: 3, LastStableOffset: 3, RecordSet: stubSet(stubBatch(-1, false, 0, 3))}
	})
	r := newStubReader(t, stub, nil)
	fetchOffsets(t, r, 3)
	var timeouts, fetches int64
	deadline := time.Now().Add(10 * time.Second)
	for timeouts < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d timeouts after %d fetches at the end of the partition", timeouts, fetches)
		}
		s := r.Stats()
		timeouts, fetches = timeouts+s.Timeouts, fetches+s.Fetches
		time.Sleep(5 * time.Millisecond)
	}
	if timeouts >= fetches {
		t.Fatalf("%d timeouts for %d fetches: the fetch that returned messages counted too", timeouts, fetches)
	}
}
