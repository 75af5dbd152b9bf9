package kafka

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/listoffsets"
)

func TestTransportLongPollDoesNotBlockOtherRequests(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.SetHandler(func(r *fakebroker.Request) {
		if r.Msg.ApiKey() == protocol.Produce {
			tpProduceReply(r, 0)
		}
		// Fetch requests are held.
	})
	tr := tpNewTransport(t)
	ctx := testContext(t)
	if _, err := tr.RoundTrip(ctx, fc.Addr(), tpProduceRequest(0, -1)); err != nil {
		t.Fatal(err)
	}
	fetchCtx, cancelFetch := context.WithCancel(ctx)
	fetchDone := make(chan error, 1)
	go func() {
		_, err := (&Client{Addr: fc.Addr(), Transport: tr}).Fetch(fetchCtx, &FetchRequest{Topic: "t", Partition: 0, MaxBytes: 1 << 20, MaxWait: time.Hour})
		fetchDone <- err
	}()
	tpWaitFor(t, "the fetch request", func() bool { return fc.Count(protocol.Fetch, 1) == 1 })
	if _, err := tr.RoundTrip(ctx, fc.Addr(), tpProduceRequest(0, -1)); err != nil {
		t.Fatal(err)
	}
	cancelFetch()
	if err := <-fetchDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("fetch: %v", err)
	}
	fetches, produces := fc.Requests(protocol.Fetch), fc.Requests(protocol.Produce)
	if last := produces[len(produces)-1]; last.Conn == fetches[0].Conn {
		t.Fatal("the produce request was sent on the connection of the pending fetch")
	}
}

func TestTransportSplitsRequestsByLeader(t *testing.T) {
	fc := fakebroker.New(t, 2)
	fc.SetLeader(1, 2)
	fc.SetHandler(func(r *fakebroker.Request) {
		req, ok := r.Msg.(*listoffsets.Request)
		if !ok {
			return
		}
		res := &listoffsets.Response{}
		for _, tp := range req.Topics {
			rt := listoffsets.ResponseTopic{Topic: tp.Topic}
			for _, p := range tp.Partitions {
				rt.Partitions = append(rt.Partitions, listoffsets.ResponsePartition{
					Partition: p.Partition, Timestamp: -1, Offset: int64(r.Broker)*100 + int64(p.Partition),
				})
			}
			res.Topics = append(res.Topics, rt)
		}
		r.Reply(res)
	})
	client := &Client{Addr: fc.Addr(), Transport: tpNewTransport(t)}
	res, err := client.ListOffsets(testContext(t), &ListOffsetsRequest{Topics: map[string][]OffsetRequest{
		"t": {LastOffsetOf(0), LastOffsetOf(1)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	parts := res.Topics["t"]
	if len(parts) != 2 || parts[0].LastOffset != 100 || parts[1].LastOffset != 201 {
		t.Fatalf("offsets: %+v, want partition 0 from broker 1 and partition 1 from broker 2", parts)
	}
	if fc.Count(protocol.ListOffsets, 1) != 1 || fc.Count(protocol.ListOffsets, 2) != 1 {
		t.Fatal("each leader should get exactly one ListOffsets request")
	}
}
