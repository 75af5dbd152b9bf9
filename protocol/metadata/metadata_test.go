package metadata_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/metadata"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

var topicID = [16]byte{0: 0x11, 7: 0x77, 15: 0xFF}

func TestMetadataRoundTrip(t *testing.T) {
	prototest.TestRequest(t, 0, &metadata.Request{TopicNames: []string{"a", "b"}})
	prototest.TestRequest(t, 4, &metadata.Request{TopicNames: []string{"a"}, AllowAutoTopicCreation: true})
	prototest.TestRequest(t, 8, &metadata.Request{
		TopicNames:                         []string{"a"},
		IncludeClusterAuthorizedOperations: true,
		IncludeTopicAuthorizedOperations:   true,
	})
	prototest.TestRequest(t, 9, &metadata.Request{Topics: []metadata.RequestTopic{{Name: "a"}}, AllowAutoTopicCreation: true})
	prototest.TestRequest(t, 12, &metadata.Request{
		Topics:                           []metadata.RequestTopic{{TopicID: topicID}, {Name: "b"}},
		IncludeTopicAuthorizedOperations: true,
	})

	brokers := []metadata.ResponseBroker{{NodeID: 1, Host: "h1", Port: 9092}, {NodeID: 2, Host: "h2", Port: 9093}}
	prototest.TestResponse(t, 0, &metadata.Response{
		Brokers: brokers,
		Topics: []metadata.ResponseTopic{{Name: "a", Partitions: []metadata.ResponsePartition{
			{PartitionIndex: 0, LeaderID: 1, ReplicaNodes: []int32{1, 2}, IsrNodes: []int32{1}},
		}}},
	})
	brokers[0].Rack = "r1"
	prototest.TestResponse(t, 7, &metadata.Response{
		ThrottleTimeMs: 3,
		Brokers:        brokers,
		ClusterID:      "cluster",
		ControllerID:   2,
		Topics: []metadata.ResponseTopic{{ErrorCode: 3, Name: "a", IsInternal: true, Partitions: []metadata.ResponsePartition{
			{ErrorCode: 5, PartitionIndex: 1, LeaderID: 2, LeaderEpoch: 9, ReplicaNodes: []int32{1, 2}, IsrNodes: []int32{2}, OfflineReplicas: []int32{1}},
		}}},
	})
	prototest.TestResponse(t, 10, &metadata.Response{
		Brokers:                     brokers,
		ControllerID:                1,
		ClusterAuthorizedOperations: 7,
		Topics: []metadata.ResponseTopic{{Name: "a", TopicID: topicID, TopicAuthorizedOperations: 8, Partitions: []metadata.ResponsePartition{
			{PartitionIndex: 1, LeaderID: 2, LeaderEpoch: 9, ReplicaNodes: []int32{2}, IsrNodes: []int32{2}},
		}}},
	})
	prototest.TestResponse(t, 12, &metadata.Response{
		Brokers:      brokers,
		ControllerID: 1,
		Topics:       []metadata.ResponseTopic{{TopicID: topicID, ErrorCode: 3}},
	})
}

func TestMetadataGoldenV1(t *testing.T) {
	req := &metadata.Request{TopicNames: []string{"t"}}
	want := prototest.Wire{}.I32(1).String("t")
	if got := prototest.RequestBody(t, 1, false, req); !bytes.Equal(got, want) {
		t.Errorf("v1 request:\ngot  % x\nwant % x", got, want)
	}
	// From v1 a null topic list asks for every topic.
	want = prototest.Wire{}.I32(-1)
	if got := prototest.RequestBody(t, 1, false, &metadata.Request{}); !bytes.Equal(got, want) {
		t.Errorf("v1 request for all topics:\ngot  % x\nwant % x", got, want)
	}

	res := &metadata.Response{
		Brokers:      []metadata.ResponseBroker{{NodeID: 1, Host: "h", Port: 9092}},
		ControllerID: 1,
		Topics: []metadata.ResponseTopic{{Name: "t", Partitions: []metadata.ResponsePartition{
			{PartitionIndex: 0, LeaderID: 1, ReplicaNodes: []int32{1}, IsrNodes: []int32{1}},
		}}},
	}
	want = prototest.Wire{}.
		I32(1).I32(1).String("h").I32(9092).I16(-1). // brokers; rack null
		I32(1).                                      // controller
		I32(1).I16(0).String("t").Bool(false).       // topic
		I32(1).I16(0).I32(0).I32(1).I32(1).I32(1).I32(1).I32(1)
	if got := prototest.ResponseBody(t, 1, false, res); !bytes.Equal(got, want) {
		t.Errorf("v1 response:\ngot  % x\nwant % x", got, want)
	}
	if got := prototest.ReadResponse(t, protocol.Metadata, 1, false, want); !reflect.DeepEqual(got, res) {
		t.Errorf("v1 response decoded as %+v", got)
	}
}

func TestMetadataGoldenV12(t *testing.T) {
	req := &metadata.Request{
		Topics:                           []metadata.RequestTopic{{Name: "t"}, {TopicID: topicID}},
		AllowAutoTopicCreation:           true,
		IncludeTopicAuthorizedOperations: true,
	}
	want := prototest.Wire{}.Uvarint(3).
		Raw(make([]byte, 16)...).CompactString("t").Uvarint(0).
		Raw(topicID[:]...).Uvarint(0).Uvarint(0). // null name
		Bool(true).Bool(true).Uvarint(0)
	if got := prototest.RequestBody(t, 12, true, req); !bytes.Equal(got, want) {
		t.Errorf("v12 request:\ngot  % x\nwant % x", got, want)
	}
	if got := prototest.ReadRequestBody(t, protocol.Metadata, 12, true, want); !reflect.DeepEqual(got, req) {
		t.Errorf("v12 request decoded as %+v", got)
	}

	res := &metadata.Response{
		ThrottleTimeMs: 2,
		Brokers:        []metadata.ResponseBroker{{NodeID: 1, Host: "h", Port: 9092, Rack: "r"}},
		ClusterID:      "c",
		ControllerID:   1,
		Topics: []metadata.ResponseTopic{{
			Name:                      "t",
			TopicID:                   topicID,
			Partitions:                []metadata.ResponsePartition{{LeaderID: 1, LeaderEpoch: 4, ReplicaNodes: []int32{1}, IsrNodes: []int32{1}, OfflineReplicas: []int32{}}},
			TopicAuthorizedOperations: -2147483648,
		}},
	}
	want = prototest.Wire{}.I32(2).
		Uvarint(2).I32(1).CompactString("h").I32(9092).CompactString("r").Uvarint(0).
		CompactString("c").I32(1).
		Uvarint(2).I16(0).CompactString("t").Raw(topicID[:]...).Bool(false).
		Uvarint(2).I16(0).I32(0).I32(1).I32(4).Uvarint(2).I32(1).Uvarint(2).I32(1).Uvarint(1).Uvarint(0).
		I32(-2147483648).Uvarint(0).
		Uvarint(0)
	if got := prototest.ResponseBody(t, 12, true, res); !bytes.Equal(got, want) {
		t.Errorf("v12 response:\ngot  % x\nwant % x", got, want)
	}
	got := prototest.ReadResponse(t, protocol.Metadata, 12, true, want).(*metadata.Response)
	if len(got.Topics) != 1 || got.Topics[0].TopicID != topicID || got.Topics[0].Partitions[0].LeaderEpoch != 4 || got.Brokers[0].Rack != "r" || got.ClusterID != "c" {
		t.Errorf("v12 response decoded as %+v", got)
	}
}

func TestMetadataPrepare(t *testing.T) {
	r := &metadata.Request{TopicNames: []string{"a", "b"}}
	r.Prepare(12)
	if want := []metadata.RequestTopic{{Name: "a"}, {Name: "b"}}; !reflect.DeepEqual(r.Topics, want) {
		t.Errorf("v12: Topics = %+v", r.Topics)
	}

	all := &metadata.Request{}
	all.Prepare(12)
	if all.Topics != nil {
		t.Errorf("nil TopicNames must stay a null (all topics) list, got %+v", all.Topics)
	}
	none := &metadata.Request{TopicNames: []string{}}
	none.Prepare(12)
	if none.Topics == nil || len(none.Topics) != 0 {
		t.Errorf("empty TopicNames must give an empty list, got %#v", none.Topics)
	}

	old := &metadata.Request{Topics: []metadata.RequestTopic{{Name: "x"}}}
	old.Prepare(8)
	if !reflect.DeepEqual(old.TopicNames, []string{"x"}) {
		t.Errorf("v8: TopicNames = %v", old.TopicNames)
	}

	// After Prepare the request encodes the same topics as a request built
	// directly in the v12 form.
	direct := &metadata.Request{Topics: []metadata.RequestTopic{{Name: "a"}, {Name: "b"}}}
	if a, b := prototest.RequestBody(t, 12, true, r), prototest.RequestBody(t, 12, true, direct); !bytes.Equal(a, b) {
		t.Errorf("prepared request:\n% x\ndirect request:\n% x", a, b)
	}
}
