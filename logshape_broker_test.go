package kafka

import (
	"context"
	"math/rand"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/internal/logshape"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/fetch"
	"github.com/segmentio/kafka-go/protocol/findcoordinator"
	"github.com/segmentio/kafka-go/protocol/listoffsets"
)

// logBroker is the fake cluster (fakebroker.Cluster, one broker) serving
// partition 0 of topic "t" from a logshape.Log: Fetch answered as Kafka
// answers it (internal/logshape), ListOffsets from the log's offsets, and
// FindCoordinator with the group requests of a stubCoordinator, which is
// enough for a group Reader.
type logBroker struct {
	t     testing.TB
	fc    *fakebroker.Cluster
	log   *logshape.Log
	group *stubCoordinator

	mu      sync.Mutex
	rng     *rand.Rand // the bounds of the aborted-transaction lists
	fetches []int64    // fetch offsets, in order
}

func newLogBroker(t testing.TB, log *logshape.Log, seed int64) *logBroker {
	lb := &logBroker{
		t:     t,
		fc:    fakebroker.New(t, 1),
		log:   log,
		group: &stubCoordinator{committed: map[int32]int64{}, left: make(chan string, 16), alone: true},
		rng:   rand.New(rand.NewSource(seed)),
	}
	// stubCoordinator reads and answers OffsetFetch in the one-group
	// layout of v0-7.
	lb.fc.Brokers[0].SetApiKey(protocol.OffsetFetch, 1, 7)
	lb.fc.SetHandler(lb.handle)
	return lb
}

func (lb *logBroker) addr() net.Addr { return lb.fc.Addr() }

// setFetchVersions limits the Fetch versions the broker accepts.
func (lb *logBroker) setFetchVersions(min, max int16) {
	lb.fc.Brokers[0].SetApiKey(protocol.Fetch, min, max)
}

func (lb *logBroker) fetchOffsets() []int64 {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	return append([]int64(nil), lb.fetches...)
}

func (lb *logBroker) handle(r *fakebroker.Request) {
	switch m := r.Msg.(type) {
	case *fetch.Request:
		lb.fetch(r, m)
	case *listoffsets.Request:
		res := &listoffsets.Response{}
		for _, t := range m.Topics {
			rt := listoffsets.ResponseTopic{Topic: t.Topic}
			for _, p := range t.Partitions {
				rp := listoffsets.ResponsePartition{Partition: p.Partition, Timestamp: -1}
				switch {
				case t.Topic != "t" || p.Partition != 0:
					rp.ErrorCode = int16(UnknownTopicOrPartition)
				case p.Timestamp == FirstOffset:
					rp.Offset = lb.log.StartOffset
				case p.Timestamp == LastOffset && m.IsolationLevel == int8(ReadCommitted):
					rp.Offset = lb.log.LastStable()
				case p.Timestamp == LastOffset:
					rp.Offset = lb.log.End()
				default:
					rp.ErrorCode = int16(InvalidRequest) // no timestamp index
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			res.Topics = append(res.Topics, rt)
		}
		r.Reply(res)
	case *findcoordinator.Request:
		b := lb.fc.Brokers[0]
		r.Reply(&findcoordinator.Response{NodeID: b.ID, Host: b.Host, Port: b.Port})
	default:
		res, err := lb.group.RoundTrip(context.Background(), nil, r.Msg)
		if err != nil {
			lb.t.Errorf("log broker: %v", err)
			r.CloseConn()
			return
		}
		r.Reply(res)
	}
}

// fetch answers a Fetch of partition 0 of "t" from the log; a fetch with
// nothing to return waits a little first, as a broker holds it for
// MaxWait (the log does not grow).
func (lb *logBroker) fetch(r *fakebroker.Request, m *fetch.Request) {
	if len(m.Topics) != 1 || m.Topics[0].Topic != "t" || len(m.Topics[0].Partitions) != 1 || m.Topics[0].Partitions[0].Partition != 0 {
		lb.t.Errorf("log broker: fetch of %+v", m.Topics)
		r.CloseConn()
		return
	}
	p := m.Topics[0].Partitions[0]
	maxBytes := int(p.PartitionMaxBytes)
	if m.MaxBytes > 0 {
		maxBytes = min(maxBytes, int(m.MaxBytes))
	}
	lb.mu.Lock()
	lb.fetches = append(lb.fetches, p.FetchOffset)
	res, err := lb.log.Fetch(logshape.FetchRequest{
		Offset:        p.FetchOffset,
		MaxBytes:      maxBytes,
		ReadCommitted: m.IsolationLevel == int8(ReadCommitted),
		Rand:          lb.rng,
	})
	lb.mu.Unlock()
	if err != nil {
		lb.t.Errorf("log broker: %v", err)
		r.CloseConn()
		return
	}
	frame, err := res.Frame(r.Version, r.ID, "t", 0)
	if err != nil {
		lb.t.Errorf("log broker: %v", err)
		r.CloseConn()
		return
	}
	if len(res.Records) == 0 && res.ErrorCode == 0 {
		wait := min(time.Duration(m.MaxWaitTime)*time.Millisecond, 5*time.Millisecond)
		go func() {
			time.Sleep(wait)
			writeRaw(r, frame)
		}()
		return
	}
	writeRaw(r, frame)
}
