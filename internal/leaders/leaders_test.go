package leaders

import (
	"errors"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
)

func TestCommon(t *testing.T) {
	cluster := protocol.Cluster{
		Brokers: map[int32]protocol.Broker{1: {ID: 1}, 2: {ID: 2}},
		Topics: map[string]protocol.Topic{
			"t":       {Name: "t", Partitions: map[int32]protocol.Partition{0: {Leader: 1}, 1: {Leader: 1}, 2: {Leader: 2}, 3: {Leader: 9}}},
			"missing": {Name: "missing", Error: unknownTopic}, // listed by the broker as unknown
		},
	}
	type add struct {
		topic     string
		partition int32
	}
	for _, tc := range []struct {
		name   string
		adds   []add
		err    error
		leader int32
	}{
		{"none", nil, nil, -1},
		{"one leader", []add{{"t", 0}, {"t", 1}}, nil, 1},
		{"two leaders", []add{{"t", 0}, {"t", 2}}, ErrMismatching, 0},
		{"topic not in the metadata", []add{{"other", 0}}, protocol.ErrNoTopic, 0},
		{"topic the broker does not have", []add{{"missing", 0}}, protocol.ErrNoTopic, 0},
		{"partition not in the topic", []add{{"t", 7}}, protocol.ErrNoPartition, 0},
		{"leader not in the metadata", []add{{"t", 3}}, protocol.ErrNoLeader, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c Common
			var err error
			for _, a := range tc.adds {
				if err = c.Add(cluster, a.topic, a.partition); err != nil {
					break
				}
			}
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("error %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil || c.Broker().ID != tc.leader {
				t.Fatalf("leader %d, %v; want %d", c.Broker().ID, err, tc.leader)
			}
		})
	}
}
