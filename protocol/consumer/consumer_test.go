package consumer_test

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/consumer"
)

func TestSubscriptionRoundTrip(t *testing.T) {
	for v := int16(0); v <= 3; v++ {
		s := consumer.Subscription{Version: v, Topics: []string{"a", "b"}, UserData: []byte("u")}
		if v >= 1 {
			s.OwnedPartitions = []consumer.TopicPartition{{Topic: "a", Partitions: []int32{0, 2}}}
		}
		if v >= 2 {
			s.GenerationID = 7
		}
		if v >= 3 {
			s.RackID = "rack"
		}
		b, err := protocol.Marshal(v, s)
		if err != nil {
			t.Fatal(err)
		}
		var got consumer.Subscription
		if err := protocol.Unmarshal(b, v, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Errorf("v%d: got %+v, want %+v", v, got, s)
		}
	}
}

// The bytes other clients (the Java client's ConsumerProtocol) write and
// read: a version, the topics, nullable user data, then (v1) the owned
// partitions.
func TestSubscriptionGoldenV1(t *testing.T) {
	s := consumer.Subscription{
		Version:         1,
		Topics:          []string{"t"},
		OwnedPartitions: []consumer.TopicPartition{{Topic: "t", Partitions: []int32{3}}},
	}
	var want []byte
	want = binary.BigEndian.AppendUint16(want, 1)
	want = binary.BigEndian.AppendUint32(want, 1)
	want = append(binary.BigEndian.AppendUint16(want, 1), 't')
	want = binary.BigEndian.AppendUint32(want, 0xffffffff) // null user data
	want = binary.BigEndian.AppendUint32(want, 1)
	want = append(binary.BigEndian.AppendUint16(want, 1), 't')
	want = binary.BigEndian.AppendUint32(want, 1)
	want = binary.BigEndian.AppendUint32(want, 3)
	got, err := protocol.Marshal(consumer.MaxVersionSupported, s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("got  % x\nwant % x", got, want)
	}

	// A v3 subscription read as v1 keeps the fields v1 knows.
	s3 := consumer.Subscription{Version: 3, Topics: []string{"t"}, OwnedPartitions: s.OwnedPartitions, GenerationID: 4, RackID: "r"}
	b, err := protocol.Marshal(3, s3)
	if err != nil {
		t.Fatal(err)
	}
	var old consumer.Subscription
	if err := protocol.Unmarshal(b, consumer.MaxVersionSupported, &old); err != nil {
		t.Fatal(err)
	}
	if old.Version != 3 || !reflect.DeepEqual(old.Topics, s3.Topics) || !reflect.DeepEqual(old.OwnedPartitions, s3.OwnedPartitions) {
		t.Errorf("v3 read as v1: %+v", old)
	}
}

func TestAssignmentRoundTrip(t *testing.T) {
	a := consumer.Assignment{
		Version:            consumer.MaxVersionSupported,
		AssignedPartitions: []consumer.TopicPartition{{Topic: "a", Partitions: []int32{0, 1}}, {Topic: "b", Partitions: []int32{2}}},
		UserData:           []byte{1, 2},
	}
	for v := int16(0); v <= 3; v++ {
		b, err := protocol.Marshal(v, a)
		if err != nil {
			t.Fatal(err)
		}
		var got consumer.Assignment
		if err := protocol.Unmarshal(b, v, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, a) {
			t.Errorf("v%d: got %+v", v, got)
		}
	}
}
