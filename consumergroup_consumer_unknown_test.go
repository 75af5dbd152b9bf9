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

	"github.com/segmentio/kafka-go/protocol/listoffsets"
	"github.com/segmentio/kafka-go/protocol/offsetcommit"
	"github.com/segmentio/kafka-go/protocol/offsetfetch"
)

// unknownCommit848 is stub848 whose commits are answered UNKNOWN_MEMBER_ID
// once unknown is set, with offsets to list and fetch.
type unknownCommit848 struct {
	*stub848
	mu      sync.Mutex
	unknown bool
}

func (s *unknownCommit848) RoundTrip(ctx context.Context, addr net.Addr, req Request) (Response, error) {
	switch r := req.(type) {
	case *listoffsets.Request:
		p := r.Topics[0].Partitions[0]
		off := int64(1000)
		if p.Timestamp == FirstOffset {
			off = 0
		}
		return &listoffsets.Response{Topics: []listoffsets.ResponseTopic{{Topic: "t", Partitions: []listoffsets.ResponsePartition{{Partition: p.Partition, Offset: off}}}}}, nil
	case *offsetfetch.Request:
		return offsetFetchAnswer(r, map[int32]int64{0: 500, 1: 500, 2: 500, 3: 500}), nil
	case *offsetcommit.Request:
		s.mu.Lock()
		u := s.unknown
		s.mu.Unlock()
		if u {
			return offsetCommitAnswer(r, int16(UnknownMemberId), nil), nil
		}
	}
	return s.stub848.RoundTrip(ctx, addr, req)
}

// In a group of the "consumer" protocol a commit answered UNKNOWN_MEMBER_ID
// is only reported: the member learns it was dropped from its heartbeats,
// which reassign it, so its partition readers are not restarted (from the
// offsets of the assignment, long past) in the meantime.
func TestConsumerProtocolUnknownMemberCommitRestartsNothing(t *testing.T) {
	inner := &stub848{}
	inner.set(1, 0)
	stub := &unknownCommit848{stub848: inner}
	var lmu sync.Mutex
	var logs []string
	r := newStub848Reader(inner, func(c *ReaderConfig) {
		c.transport = stub
		c.CommitInterval = 0
		c.Logger = LoggerFunc(func(f string, a ...interface{}) {
			lmu.Lock()
			logs = append(logs, fmt.Sprintf(f, a...))
			lmu.Unlock()
		})
	})
	defer r.Close()
	inner.waitFor(t, "ack 0", 0, owning(1, 0))
	inner.set(2, 0, 1)
	inner.waitFor(t, "ack 0 1", 0, owning(2, 0, 1))
	time.Sleep(100 * time.Millisecond)
	stub.mu.Lock()
	stub.unknown = true
	stub.mu.Unlock()
	lmu.Lock()
	mark := len(logs)
	lmu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := r.CommitMessages(ctx, Message{Topic: "t", Partition: 0, Offset: 700})
	if !errors.Is(err, UnknownMemberId) {
		t.Fatalf("commit: %v", err)
	}
	time.Sleep(300 * time.Millisecond) // what would restart, would by then
	lmu.Lock()
	defer lmu.Unlock()
	for _, l := range logs[mark:] {
		if strings.Contains(l, "reading map") { // a reconcile: partition readers replaced
			t.Errorf("after the refused commit: %s", l)
		}
	}
}
