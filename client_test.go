package kafka

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/createpartitions"
	"github.com/segmentio/kafka-go/protocol/createtopics"
	"github.com/segmentio/kafka-go/protocol/deletetopics"
	"github.com/segmentio/kafka-go/protocol/findcoordinator"
	"github.com/segmentio/kafka-go/protocol/initproducerid"
	"github.com/segmentio/kafka-go/protocol/offsetfetch"
	"github.com/segmentio/kafka-go/protocol/produce"
)

func TestClientWithoutAddress(t *testing.T) {
	_, err := (&Client{Transport: &Transport{}}).Metadata(context.Background(), &MetadataRequest{})
	if err == nil || !strings.Contains(err.Error(), "no address") {
		t.Fatalf("got %v, want an error about the missing address", err)
	}
}

func TestClientProduce(t *testing.T) {
	fc := fakebroker.New(t, 1)
	var got *produce.Request
	fc.SetHandler(func(r *fakebroker.Request) {
		req := r.Msg.(*produce.Request)
		got = req
		part := produce.ResponsePartition{Partition: 0, BaseOffset: 7, LogAppendTime: 1700000000123, LogStartOffset: 3}
		if string(req.Topics[0].Topic) == "bad" {
			part = produce.ResponsePartition{
				ErrorCode: int16(InvalidRecord), ErrorMessage: "record 1 is too old",
				RecordErrors: []produce.ResponseError{{BatchIndex: 1, BatchIndexErrorMessage: "timestamp out of range"}},
			}
		}
		r.Reply(&produce.Response{ThrottleTimeMs: 20, Topics: []produce.ResponseTopic{{Topic: req.Topics[0].Topic, Partitions: []produce.ResponsePartition{part}}}})
	})
	fc.AddTopics("bad")
	client := &Client{Addr: fc.Addr(), Transport: tpNewTransport(t), Timeout: 4 * time.Second}
	ctx := context.Background()
	records := func() RecordReader {
		return NewRecordReader(
			Record{Key: NewBytes([]byte("k1")), Value: NewBytes([]byte("v1"))},
			Record{Key: NewBytes([]byte("k2")), Value: NewBytes([]byte("v2"))},
		)
	}

	res, err := client.Produce(ctx, &ProduceRequest{Topic: "t", Partition: 0, RequiredAcks: RequireAll, Records: records(), Compression: Gzip})
	if err != nil {
		t.Fatal(err)
	}
	if res.Error != nil || res.BaseOffset != 7 || res.LogStartOffset != 3 || res.Throttle != 20*time.Millisecond ||
		!res.LogAppendTime.Equal(time.UnixMilli(1700000000123)) || res.RecordErrors != nil {
		t.Fatalf("response %+v", res)
	}
	// The request as the broker decoded it.
	if got.Acks != -1 || got.Timeout != 2000 {
		t.Fatalf("acks %d timeout %d, want -1 and half the client's timeout", got.Acks, got.Timeout)
	}
	rs := got.Topics[0].Partitions[0].RecordSet
	if rs.Attributes.Compression() != Gzip {
		t.Fatalf("records compressed with %v, want gzip", rs.Attributes.Compression())
	}
	for i := 1; i <= 2; i++ {
		r, err := rs.Records.ReadRecord()
		if err != nil {
			t.Fatal(err)
		}
		if k, _ := ReadAll(r.Key); string(k) != "k"+string(rune('0'+i)) {
			t.Fatalf("record %d key %q", i, k)
		}
	}
	if _, err := rs.Records.ReadRecord(); !errors.Is(err, io.EOF) {
		t.Fatalf("more than two records: %v", err)
	}

	res, err = client.Produce(ctx, &ProduceRequest{Topic: "bad", Partition: 0, RequiredAcks: RequireOne, Records: records()})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res.Error, InvalidRecord) || !strings.Contains(res.Error.Error(), "record 1 is too old") {
		t.Fatalf("error %v, want InvalidRecord with the broker's message", res.Error)
	}
	if e := res.RecordErrors[1]; e == nil || e.Error() != "timestamp out of range" || len(res.RecordErrors) != 1 {
		t.Fatalf("record errors %v", res.RecordErrors)
	}

	sent := fc.Count(protocol.Produce, 0)
	res, err = client.Produce(ctx, &ProduceRequest{Topic: "t", RequiredAcks: RequireAll, Records: NewRecordReader()})
	if err != nil || res == nil || res.Error != nil {
		t.Fatalf("empty produce: %+v, %v; want an empty response", res, err)
	}
	if fc.Count(protocol.Produce, 0) != sent {
		t.Fatal("an empty produce request was sent")
	}

	res, err = client.Produce(ctx, &ProduceRequest{Topic: "t", RequiredAcks: RequireNone, Records: records()})
	if err != nil || res != nil {
		t.Fatalf("produce with no acks: %+v, %v; want nil, nil", res, err)
	}
}

func TestClientRawProduce(t *testing.T) {
	fc := fakebroker.New(t, 1)
	var values []string
	fc.SetHandler(func(r *fakebroker.Request) {
		req := r.Msg.(*produce.Request)
		rs := req.Topics[0].Partitions[0].RecordSet
		for {
			rec, err := rs.Records.ReadRecord()
			if err != nil {
				break
			}
			v, _ := ReadAll(rec.Value)
			values = append(values, string(v))
		}
		tpProduceReply(r, 0)
	})
	var buf bytes.Buffer
	set := protocol.RecordSet{Version: 2, Records: NewRecordReader(Record{Value: NewBytes([]byte("a"))}, Record{Value: NewBytes([]byte("b"))})}
	if _, err := set.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	client := &Client{Addr: fc.Addr(), Transport: tpNewTransport(t)}
	res, err := client.RawProduce(context.Background(), &RawProduceRequest{
		Topic: "t", RequiredAcks: RequireAll, RawRecords: protocol.RawRecordSet{Reader: &buf},
	})
	if err != nil || res.Error != nil || res.BaseOffset != 42 {
		t.Fatalf("raw produce: %+v, %v", res, err)
	}
	if strings.Join(values, ",") != "a,b" {
		t.Fatalf("broker got values %v", values)
	}
	res, err = client.RawProduce(context.Background(), &RawProduceRequest{Topic: "t", RequiredAcks: RequireAll})
	if err != nil || res == nil {
		t.Fatalf("empty raw produce: %+v, %v", res, err)
	}
}

func TestClientAdminRequests(t *testing.T) {
	fc := fakebroker.New(t, 1)
	fc.SetHandler(func(r *fakebroker.Request) {
		switch m := r.Msg.(type) {
		case *findcoordinator.Request:
			code := int16(0)
			if tpCoordKey(m) == "missing" {
				code = int16(GroupCoordinatorNotAvailable)
			}
			tpCoordinatorReply(r, 1, "coord-host", code)
		case *initproducerid.Request:
			r.Reply(&initproducerid.Response{ThrottleTimeMs: 5, ProducerID: 1234, ProducerEpoch: 3})
		case *createtopics.Request:
			res := &createtopics.Response{}
			for _, topic := range m.Topics {
				if topic.Name == "t" {
					res.Topics = append(res.Topics, createtopics.ResponseTopic{Name: topic.Name, ErrorCode: int16(TopicAlreadyExists), ErrorMessage: "topic t exists"})
					continue
				}
				if len(topic.Configs) != 1 || topic.Configs[0].Name != "retention.ms" || topic.NumPartitions != 3 {
					res.Topics = append(res.Topics, createtopics.ResponseTopic{Name: topic.Name, ErrorCode: int16(InvalidRequest)})
					continue
				}
				fc.AddTopics(topic.Name)
				res.Topics = append(res.Topics, createtopics.ResponseTopic{Name: topic.Name})
			}
			r.Reply(res)
		case *deletetopics.Request:
			res := &deletetopics.Response{}
			names := m.TopicNames
			for _, topic := range m.Topics {
				names = append(names, topic.Name)
			}
			for _, name := range names {
				code := int16(0)
				if name == "nope" {
					code = int16(UnknownTopicOrPartition)
				}
				res.Responses = append(res.Responses, deletetopics.ResponseTopic{Name: name, ErrorCode: code})
			}
			r.Reply(res)
		case *createpartitions.Request:
			res := &createpartitions.Response{}
			for _, topic := range m.Topics {
				code, msg := int16(0), ""
				if topic.Count < 2 {
					code, msg = int16(InvalidPartitionNumber), "cannot shrink"
				}
				res.Results = append(res.Results, createpartitions.ResponseResult{Name: topic.Name, ErrorCode: code, ErrorMessage: msg})
			}
			r.Reply(res)
		}
	})
	client := &Client{Addr: fc.Addr(), Transport: tpNewTransport(t)}
	ctx := testContext(t)

	fcr, err := client.FindCoordinator(ctx, &FindCoordinatorRequest{Key: "g", KeyType: CoordinatorKeyTypeConsumer})
	if err != nil || fcr.Error != nil || fcr.Coordinator.NodeID != 1 || fcr.Coordinator.Host != "coord-host" || fcr.Coordinator.Port != 1 {
		t.Fatalf("FindCoordinator: %+v %+v, %v", fcr, fcr.Coordinator, err)
	}
	fcr, err = client.FindCoordinator(ctx, &FindCoordinatorRequest{Key: "missing"})
	if err != nil || !errors.Is(fcr.Error, GroupCoordinatorNotAvailable) {
		t.Fatalf("FindCoordinator error: %+v, %v", fcr, err)
	}

	ipr, err := client.InitProducerID(ctx, &InitProducerIDRequest{TransactionTimeoutMs: 1000})
	if err != nil || ipr.Error != nil || ipr.Producer.ProducerID != 1234 || ipr.Producer.ProducerEpoch != 3 || ipr.Throttle != 5*time.Millisecond {
		t.Fatalf("InitProducerID: %+v, %v", ipr, err)
	}

	ctr, err := client.CreateTopics(ctx, &CreateTopicsRequest{Topics: []TopicConfig{
		{Topic: "t", NumPartitions: 1, ReplicationFactor: 1},
		{Topic: "new", NumPartitions: 3, ReplicationFactor: 1, ConfigEntries: []ConfigEntry{{ConfigName: "retention.ms", ConfigValue: "1000"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if e := ctr.Errors["t"]; !errors.Is(e, TopicAlreadyExists) || !strings.Contains(e.Error(), "topic t exists") {
		t.Fatalf("existing topic: %v", e)
	}
	if e, ok := ctr.Errors["new"]; !ok || e != nil {
		t.Fatalf("new topic: %v (listed %v)", e, ok)
	}

	dtr, err := client.DeleteTopics(ctx, &DeleteTopicsRequest{Topics: []string{"new", "nope"}})
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := dtr.Errors["new"]; !ok || e != nil {
		t.Fatalf("deleting new: %v (listed %v)", e, ok)
	}
	if !errors.Is(dtr.Errors["nope"], UnknownTopicOrPartition) {
		t.Fatalf("deleting nope: %v", dtr.Errors["nope"])
	}

	cpr, err := client.CreatePartitions(ctx, &CreatePartitionsRequest{Topics: []TopicPartitionsConfig{
		{Name: "t", Count: 4}, {Name: "u", Count: 1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if cpr.Errors["t"] != nil || !errors.Is(cpr.Errors["u"], InvalidPartitionNumber) || !strings.Contains(cpr.Errors["u"].Error(), "cannot shrink") {
		t.Fatalf("CreatePartitions errors %v", cpr.Errors)
	}

	avr, err := client.ApiVersions(ctx, &ApiVersionsRequest{})
	if err != nil || avr.Error != nil {
		t.Fatalf("ApiVersions: %+v, %v", avr, err)
	}
	found := false
	for _, k := range avr.ApiKeys {
		found = found || (k.ApiKey == 3 && k.ApiName == "Metadata" && k.MaxVersion == int(protocol.Metadata.MaxVersion()))
	}
	if !found {
		t.Fatalf("ApiVersions: no Metadata entry in %+v", avr.ApiKeys)
	}
}

func TestClientConsumerOffsets(t *testing.T) {
	fc := fakebroker.New(t, 2)
	fc.SetLeader(1, 2)
	fc.SetHandler(func(r *fakebroker.Request) {
		switch m := r.Msg.(type) {
		case *findcoordinator.Request:
			tpCoordinatorReply(r, 2, fc.Brokers[1].Host, 0)
		case *offsetfetch.Request:
			if r.Broker != 2 {
				t.Errorf("OffsetFetch sent to broker %d, not the coordinator", r.Broker)
			}
			var parts []offsetfetch.ResponsePartition
			topics, group := m.Topics, m.GroupID
			if len(m.Groups) > 0 {
				topics, group = m.Groups[0].Topics, m.Groups[0].GroupID
			}
			for _, p := range topics[0].PartitionIndexes {
				parts = append(parts, offsetfetch.ResponsePartition{PartitionIndex: p, CommittedOffset: int64(100 + p)})
			}
			rt := []offsetfetch.ResponseTopic{{Name: topics[0].Name, Partitions: parts}}
			if r.Version >= 8 {
				r.Reply(&offsetfetch.Response{Groups: []offsetfetch.ResponseGroup{{GroupID: group, Topics: rt}}})
			} else {
				r.Reply(&offsetfetch.Response{Topics: rt})
			}
		}
	})
	client := &Client{Addr: fc.Addr(), Transport: tpNewTransport(t)}
	offsets, err := client.ConsumerOffsets(testContext(t), TopicAndGroup{Topic: "t", GroupId: "g"})
	if err != nil {
		t.Fatal(err)
	}
	if len(offsets) != 2 || offsets[0] != 100 || offsets[1] != 101 {
		t.Fatalf("offsets %v, want map[0:100 1:101]", offsets)
	}
}

func TestRequiredAcksText(t *testing.T) {
	for _, acks := range []RequiredAcks{RequireNone, RequireOne, RequireAll} {
		text, err := acks.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var got RequiredAcks
		if err := got.UnmarshalText(text); err != nil || got != acks {
			t.Fatalf("%q decoded as %v, %v", text, got, err)
		}
	}
	if RequiredAcks(5).String() != "unknown" {
		t.Fatalf("RequiredAcks(5) = %q", RequiredAcks(5).String())
	}
	for in, want := range map[string]RequiredAcks{"0": RequireNone, "1": RequireOne, "-1": RequireAll} {
		var got RequiredAcks
		if err := got.UnmarshalText([]byte(in)); err != nil || got != want {
			t.Fatalf("%q decoded as %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"2", "some", ""} {
		var got RequiredAcks
		if err := got.UnmarshalText([]byte(in)); err == nil {
			t.Fatalf("%q was accepted as %v", in, got)
		}
	}
}
