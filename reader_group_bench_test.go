package kafka

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/findcoordinator"
	"github.com/segmentio/kafka-go/protocol/heartbeat"
	"github.com/segmentio/kafka-go/protocol/joingroup"
	"github.com/segmentio/kafka-go/protocol/leavegroup"
	"github.com/segmentio/kafka-go/protocol/offsetcommit"
	"github.com/segmentio/kafka-go/protocol/offsetfetch"
	"github.com/segmentio/kafka-go/protocol/syncgroup"
)

// serveGroupOver is serveOver for a group Reader: the same fetch
// responses, and a coordinator (the same broker) for a group of one member,
// which the Reader leads, that starts at offset 0 and accepts every commit.
// It returns the highest offset committed so far.
func (s *wireFetchStub) serveGroupOver(tb testing.TB) (*fakebroker.Cluster, func() int64) {
	fc := s.serveOver(tb)
	b := fc.Brokers[0]
	// The answers below are shaped for these versions.
	b.SetApiKey(protocol.FindCoordinator, 0, 3)
	b.SetApiKey(protocol.OffsetFetch, 0, 7)
	fetchHandler := fc.Handle
	var mu sync.Mutex
	committed := int64(-1)
	fc.SetHandler(func(r *fakebroker.Request) {
		switch req := r.Msg.(type) {
		case *findcoordinator.Request:
			r.Reply(&findcoordinator.Response{NodeID: b.ID, Host: b.Host, Port: b.Port})
		case *joingroup.Request:
			id := req.MemberID
			if id == "" {
				id = "m-1"
			}
			r.Reply(&joingroup.Response{GenerationID: 1, ProtocolName: req.Protocols[0].Name, LeaderID: id, MemberID: id,
				Members: []joingroup.ResponseMember{{MemberID: id, Metadata: req.Protocols[0].Metadata}}})
		case *syncgroup.Request:
			res := &syncgroup.Response{}
			for _, a := range req.Assignments {
				if a.MemberID == req.MemberID {
					res.Assignments = a.Assignment
				}
			}
			r.Reply(res)
		case *heartbeat.Request:
			r.Reply(&heartbeat.Response{})
		case *leavegroup.Request:
			r.Reply(&leavegroup.Response{})
		case *offsetfetch.Request:
			r.Reply(offsetFetchAnswer(req, nil))
		case *offsetcommit.Request:
			r.Reply(offsetCommitAnswer(req, 0, func(_ int32, off int64) {
				mu.Lock()
				committed = max(committed, off)
				mu.Unlock()
			}))
		default:
			fetchHandler(r)
		}
	})
	return fc, func() int64 {
		mu.Lock()
		defer mu.Unlock()
		return committed
	}
}

// BenchmarkReaderReadMessageGroup is BenchmarkReaderReadMessage for a group
// Reader (one member, one partition), as the bench tool's group rows use
// it: "read" calls ReadMessage with CommitInterval 1s, "commit" calls
// FetchMessage and a synchronous CommitMessages every 1000 messages. The
// group's setup is out of the measure; the commits are in it.
func BenchmarkReaderReadMessageGroup(b *testing.B) {
	for _, mode := range []string{"read", "commit"} {
		for _, size := range []int{100, 1024} {
			for _, codec := range []CompressionCodec{nil, Zstd.Codec()} {
				name := "none"
				if codec != nil {
					name = codec.Name()
				}
				b.Run(fmt.Sprintf("%s/%dB/%s", mode, size, name), func(b *testing.B) {
					benchGroupReader(b, mode, size, codec)
				})
			}
		}
	}
}

func benchGroupReader(b *testing.B, mode string, size int, codec CompressionCodec) {
	stub := newWireFetchStub(b, size, 1000*100/size, 1e6, codec)
	fc, committed := stub.serveGroupOver(b)
	cfg := ReaderConfig{Brokers: []string{fc.Addr().String()}, Topic: "t", GroupID: "g",
		HeartbeatInterval: time.Second, JoinGroupBackoff: 10 * time.Millisecond}
	const commitEvery = 1000
	if mode == "read" {
		cfg.CommitInterval = time.Second
	}
	r := NewReader(cfg)
	ctx := context.Background()
	read := r.ReadMessage
	if mode == "commit" {
		read = r.FetchMessage
	}
	if _, err := read(ctx); err != nil { // the group's setup out of the measure
		b.Fatal(err)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	var last Message
	for i := 0; i < b.N; i++ {
		m, err := read(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if len(m.Value) != size || len(m.Key) != 9 || m.Offset != int64(i+1) {
			b.Fatalf("message %d: offset %d, key %q, %d bytes", i+1, m.Offset, m.Key, len(m.Value))
		}
		if mode == "commit" && (i+1)%commitEvery == 0 {
			if err := r.CommitMessages(ctx, m); err != nil {
				b.Fatal(err)
			}
		}
		last = m
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	b.StopTimer()
	if mode == "commit" {
		if err := r.CommitMessages(ctx, last); err != nil {
			b.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		b.Fatal(err)
	}
	// Close commits what ReadMessage returned: the group resumes after the
	// last message read.
	if got := committed(); got != last.Offset+1 {
		b.Fatalf("committed %d after reading up to %d", got, last.Offset)
	}
}
