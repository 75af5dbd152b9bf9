package metadata_test

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/metadata"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

// wire builds expected bytes by hand, following the Kafka spec's primitive
// types, independently of the codec under test.
type wire []byte

func (w wire) i16(v int16) wire { return binary.BigEndian.AppendUint16(w, uint16(v)) }
func (w wire) i32(v int32) wire { return binary.BigEndian.AppendUint32(w, uint32(v)) }
func (w wire) uv(v uint64) wire { return binary.AppendUvarint(w, v) }
func (w wire) boolean(b bool) wire {
	if b {
		return append(w, 1)
	}
	return append(w, 0)
}

// str is STRING (int16 length), cstr COMPACT_STRING (uvarint length+1).
func (w wire) str(s string) wire  { return append(w.i16(int16(len(s))), s...) }
func (w wire) cstr(s string) wire { return append(w.uv(uint64(len(s))+1), s...) }

// raw appends bytes as they are (tagged-field sections, UUIDs, ...).
func (w wire) raw(b ...byte) wire { return append(w, b...) }

// requestBody encodes req at version v and strips the request header
// (client ID "c"; header v2 adds an empty tagged-field section).
func requestBody(t *testing.T, v int16, flexible bool, req protocol.Message) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := protocol.WriteRequest(&buf, v, 7, "c", req); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if got := int(binary.BigEndian.Uint32(b)); got != len(b)-4 {
		t.Fatalf("frame size %d, frame has %d bytes", got, len(b)-4)
	}
	hdr := 4 + 2 + 2 + 4 + 2 + 1
	if flexible {
		if b[hdr] != 0 {
			t.Fatalf("request header tagged fields: got %#x", b[hdr])
		}
		hdr++
	}
	return b[hdr:]
}

// responseBody encodes res at version v and strips the response header
// (header v1 adds an empty tagged-field section).
func responseBody(t *testing.T, v int16, taggedHeader bool, res protocol.Message) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := protocol.WriteResponse(&buf, v, 7, res); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if got := int(binary.BigEndian.Uint32(b)); got != len(b)-4 {
		t.Fatalf("frame size %d, frame has %d bytes", got, len(b)-4)
	}
	hdr := 8
	if taggedHeader {
		if b[hdr] != 0 {
			t.Fatalf("response header tagged fields: got %#x", b[hdr])
		}
		hdr++
	}
	return b[hdr:]
}

// readResponse frames body as a response of version v and decodes it.
func readResponse(t *testing.T, key protocol.ApiKey, v int16, taggedHeader bool, body []byte) protocol.Message {
	t.Helper()
	frame := wire{}.i32(0).i32(7)
	if taggedHeader {
		frame = frame.uv(0)
	}
	frame = append(frame, body...)
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	id, msg, err := protocol.ReadResponse(bytes.NewReader(frame), key, v)
	if err != nil {
		t.Fatal(err)
	}
	if id != 7 {
		t.Fatalf("correlation ID %d", id)
	}
	return msg
}

// readRequestBody frames body as a request of version v and decodes it.
func readRequestBody(t *testing.T, key protocol.ApiKey, v int16, flexible bool, body []byte) protocol.Message {
	t.Helper()
	frame := wire{}.i32(0).i16(int16(key)).i16(v).i32(7).str("c")
	if flexible {
		frame = frame.uv(0)
	}
	frame = append(frame, body...)
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	gotV, _, _, msg, err := protocol.ReadRequest(bytes.NewReader(frame))
	if err != nil {
		t.Fatal(err)
	}
	if gotV != v {
		t.Fatalf("version %d", gotV)
	}
	return msg
}

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
	want := wire{}.i32(1).str("t")
	if got := requestBody(t, 1, false, req); !bytes.Equal(got, want) {
		t.Errorf("v1 request:\ngot  % x\nwant % x", got, want)
	}
	// From v1 a null topic list asks for every topic.
	want = wire{}.i32(-1)
	if got := requestBody(t, 1, false, &metadata.Request{}); !bytes.Equal(got, want) {
		t.Errorf("v1 request for all topics:\ngot  % x\nwant % x", got, want)
	}

	res := &metadata.Response{
		Brokers:      []metadata.ResponseBroker{{NodeID: 1, Host: "h", Port: 9092}},
		ControllerID: 1,
		Topics: []metadata.ResponseTopic{{Name: "t", Partitions: []metadata.ResponsePartition{
			{PartitionIndex: 0, LeaderID: 1, ReplicaNodes: []int32{1}, IsrNodes: []int32{1}},
		}}},
	}
	want = wire{}.
		i32(1).i32(1).str("h").i32(9092).i16(-1). // brokers; rack null
		i32(1).                                   // controller
		i32(1).i16(0).str("t").boolean(false).    // topic
		i32(1).i16(0).i32(0).i32(1).i32(1).i32(1).i32(1).i32(1)
	if got := responseBody(t, 1, false, res); !bytes.Equal(got, want) {
		t.Errorf("v1 response:\ngot  % x\nwant % x", got, want)
	}
	if got := readResponse(t, protocol.Metadata, 1, false, want); !reflect.DeepEqual(got, res) {
		t.Errorf("v1 response decoded as %+v", got)
	}
}

func TestMetadataGoldenV12(t *testing.T) {
	req := &metadata.Request{
		Topics:                           []metadata.RequestTopic{{Name: "t"}, {TopicID: topicID}},
		AllowAutoTopicCreation:           true,
		IncludeTopicAuthorizedOperations: true,
	}
	want := wire{}.uv(3).
		raw(make([]byte, 16)...).cstr("t").uv(0).
		raw(topicID[:]...).uv(0).uv(0). // null name
		boolean(true).boolean(true).uv(0)
	if got := requestBody(t, 12, true, req); !bytes.Equal(got, want) {
		t.Errorf("v12 request:\ngot  % x\nwant % x", got, want)
	}
	if got := readRequestBody(t, protocol.Metadata, 12, true, want); !reflect.DeepEqual(got, req) {
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
	want = wire{}.i32(2).
		uv(2).i32(1).cstr("h").i32(9092).cstr("r").uv(0).
		cstr("c").i32(1).
		uv(2).i16(0).cstr("t").raw(topicID[:]...).boolean(false).
		uv(2).i16(0).i32(0).i32(1).i32(4).uv(2).i32(1).uv(2).i32(1).uv(1).uv(0).
		i32(-2147483648).uv(0).
		uv(0)
	if got := responseBody(t, 12, true, res); !bytes.Equal(got, want) {
		t.Errorf("v12 response:\ngot  % x\nwant % x", got, want)
	}
	got := readResponse(t, protocol.Metadata, 12, true, want).(*metadata.Response)
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
	if a, b := requestBody(t, 12, true, r), requestBody(t, 12, true, direct); !bytes.Equal(a, b) {
		t.Errorf("prepared request:\n% x\ndirect request:\n% x", a, b)
	}
}
