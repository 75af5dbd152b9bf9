package kafka

import (
	"context"
	"errors"
	"net"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/listpartitionreassignments"
)

// adminFakeRoundTripper records the requests of a Client and answers them
// with reply, without any broker: the unit tests below check what the
// Client methods send and how they map the answers.
type adminFakeRoundTripper struct {
	mu    sync.Mutex
	sent  []protocol.Message
	addrs []net.Addr
	reply func(req protocol.Message) (protocol.Message, error)
}

func (f *adminFakeRoundTripper) RoundTrip(ctx context.Context, addr net.Addr, req Request) (Response, error) {
	f.mu.Lock()
	f.sent = append(f.sent, req)
	f.addrs = append(f.addrs, addr)
	f.mu.Unlock()
	return f.reply(req)
}

// adminFakeClient returns a Client whose requests are answered by reply.
func adminFakeClient(reply func(req protocol.Message) (protocol.Message, error)) (*Client, *adminFakeRoundTripper) {
	rt := &adminFakeRoundTripper{reply: reply}
	return &Client{Addr: TCP("fake:9092"), Transport: rt}, rt
}

// kfake answers ListPartitionReassignments with nothing in progress, so
// the mapping of an answer that lists reassignments is checked here,
// against a fake RoundTripper.
func TestClientListPartitionReassignmentsMapping(t *testing.T) {
	client, rt := adminFakeClient(func(req protocol.Message) (protocol.Message, error) {
		return &listpartitionreassignments.Response{
			Topics: []listpartitionreassignments.ResponseTopic{{
				Name: "t",
				Partitions: []listpartitionreassignments.ResponsePartition{
					{PartitionIndex: 3, Replicas: []int32{1, 2, 4}, AddingReplicas: []int32{4}, RemovingReplicas: []int32{1}},
					{PartitionIndex: 5, Replicas: []int32{2}},
				},
			}},
		}, nil
	})
	res, err := client.ListPartitionReassignments(context.Background(), &ListPartitionReassignmentsRequest{
		Topics:  map[string]ListPartitionReassignmentsRequestTopic{"t": {PartitionIndexes: []int{3, 5}}, "u": {}},
		Timeout: 1500 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	sent := rt.sent[0].(*listpartitionreassignments.Request)
	sort.Slice(sent.Topics, func(i, j int) bool { return sent.Topics[i].Name < sent.Topics[j].Name })
	wantReq := &listpartitionreassignments.Request{TimeoutMs: 1500, Topics: []listpartitionreassignments.RequestTopic{
		{Name: "t", PartitionIndexes: []int32{3, 5}},
		{Name: "u", PartitionIndexes: []int32{}},
	}}
	if !reflect.DeepEqual(sent, wantReq) {
		t.Errorf("sent %+v, want %+v", sent, wantReq)
	}
	if rt.addrs[0].String() != "fake:9092" {
		t.Errorf("sent to %v, not the client's address", rt.addrs[0])
	}
	want := &ListPartitionReassignmentsResponse{Topics: map[string]ListPartitionReassignmentsResponseTopic{"t": {Partitions: []ListPartitionReassignmentsResponsePartition{
		{PartitionIndex: 3, Replicas: []int{1, 2, 4}, AddingReplicas: []int{4}, RemovingReplicas: []int{1}},
		{PartitionIndex: 5, Replicas: []int{2}},
	}}}}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("mapped %+v, want %+v", res, want)
	}

	// No topics lists every reassignment: Topics stays nil (null).
	client, rt = adminFakeClient(func(req protocol.Message) (protocol.Message, error) {
		return &listpartitionreassignments.Response{ErrorCode: int16(NotController), ErrorMessage: "ask the controller"}, nil
	})
	res, err = client.ListPartitionReassignments(context.Background(), &ListPartitionReassignmentsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if sent := rt.sent[0].(*listpartitionreassignments.Request); sent.Topics != nil {
		t.Errorf("no topics sent as %#v, want nil", sent.Topics)
	}
	if !errors.Is(res.Error, NotController) || !strings.Contains(res.Error.Error(), "ask the controller") || len(res.Topics) != 0 {
		t.Errorf("error answer mapped to %+v", res)
	}

	// Transport errors are returned as they are.
	boom := errors.New("boom")
	client, _ = adminFakeClient(func(protocol.Message) (protocol.Message, error) { return nil, boom })
	if _, err := client.ListPartitionReassignments(context.Background(), &ListPartitionReassignmentsRequest{}); !errors.Is(err, boom) {
		t.Errorf("transport error: %v", err)
	}
}
