package protocol

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestBrokerFormat(t *testing.T) {
	b := Broker{ID: 3, Host: "::1", Port: 9092, Rack: "r"}
	if s := b.String(); s != "[::1]:9092" {
		t.Fatalf("String() = %q", s)
	}
	for verb, want := range map[string]string{"%d": "3", "%s": "[::1]:9092", "%v": "3 [::1]:9092 r"} {
		if got := fmt.Sprintf(verb, b); got != want {
			t.Errorf("%s: %q, want %q", verb, got, want)
		}
	}
}

func TestClusterHelpers(t *testing.T) {
	var zero Cluster
	if !zero.IsZero() {
		t.Fatal("zero cluster not IsZero")
	}
	c := Cluster{
		ClusterID:  "id",
		Controller: 2,
		Brokers:    map[int32]Broker{2: {ID: 2}, 1: {ID: 1}, 3: {ID: 3}},
		Topics: map[string]Topic{"b": {Name: "b"}, "a": {Name: "a", Partitions: map[int32]Partition{
			0: {ID: 0, Leader: 1, Replicas: []int32{1, 2}},
		}}},
	}
	if c.IsZero() {
		t.Fatal("cluster IsZero")
	}
	if ids := c.BrokerIDs(); !reflect.DeepEqual(ids, []int32{1, 2, 3}) {
		t.Fatalf("BrokerIDs() = %v", ids)
	}
	if names := c.TopicNames(); !reflect.DeepEqual(names, []string{"a", "b"}) {
		t.Fatalf("TopicNames() = %v", names)
	}
	if s := fmt.Sprint(c); !strings.Contains(s, `"id"`) || !strings.Contains(s, "leader=1") {
		t.Fatalf("Format: %s", s)
	}
}

func TestErrors(t *testing.T) {
	err := error(NewErrNoPartition("t", 4))
	if !errors.Is(err, ErrNoPartition) || err.Error() != `topic partition not found (topic="t" partition=4)` {
		t.Fatalf("%v", err)
	}
	err = NewErrNoTopic("t")
	if !errors.Is(err, ErrNoTopic) || err.Error() != `topic not found (topic="t")` {
		t.Fatalf("%v", err)
	}
	if !errors.Is(NewErrNoLeader("t", 1), ErrNoLeader) {
		t.Fatal("ErrNoLeader not wrapped")
	}
	if e := Errorf("x=%d", 1); e != Error("x=1") {
		t.Fatalf("Errorf: %q", e)
	}
}

func TestResult(t *testing.T) {
	m := &testResponse{}
	if got, err := Result(m); got != m || err != nil {
		t.Fatal("message not returned")
	}
	if got, err := Result(ErrNoTopic); got != nil || err != ErrNoTopic {
		t.Fatal("error not returned")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for an int")
		}
	}()
	Result(1)
}
