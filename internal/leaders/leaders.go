// Package leaders finds the one broker that leads every partition of a
// request (Produce, Fetch): the requests whose Broker method routes them
// by partition use it, so that they agree on the errors.
package leaders

import (
	"errors"
	"fmt"

	"github.com/segmentio/kafka-go/protocol"
)

// ErrMismatching is the error of a request whose partitions are not all
// led by one broker, as far as the cluster's metadata says.
var ErrMismatching = errors.New("mismatching leaders")

// unknownTopic is UNKNOWN_TOPIC_OR_PARTITION, the code a topic the
// cluster does not have is listed with.
const unknownTopic = 3

// Common gathers the leaders of a request's partitions; the zero value
// has none yet.
type Common struct {
	leader protocol.Broker
	found  bool
}

// Add looks up the leader of partition of topic in cluster and checks it
// is the one of the partitions added before. A topic the metadata lists
// with UNKNOWN_TOPIC_OR_PARTITION and no partitions is a topic the cluster
// does not have.
func (c *Common) Add(cluster protocol.Cluster, topic string, partition int32) error {
	t, ok := cluster.Topics[topic]
	if !ok || (len(t.Partitions) == 0 && t.Error == unknownTopic) {
		return protocol.NewErrNoTopic(topic)
	}
	p, ok := t.Partitions[partition]
	if !ok {
		return protocol.NewErrNoPartition(topic, partition)
	}
	b, ok := cluster.Brokers[p.Leader]
	if !ok {
		return protocol.NewErrNoLeader(topic, partition)
	}
	if c.found && c.leader.ID != b.ID {
		return fmt.Errorf("%w (%d!=%d)", ErrMismatching, b.ID, c.leader.ID)
	}
	c.leader, c.found = b, true
	return nil
}

// Broker returns the common leader, or a broker of ID -1 when no
// partition was added.
func (c *Common) Broker() protocol.Broker {
	if !c.found {
		return protocol.Broker{ID: -1}
	}
	return c.leader
}
