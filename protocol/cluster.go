package protocol

import (
	"cmp"
	"fmt"
	"maps"
	"net"
	"slices"
	"sort"
	"strconv"
)

// Broker is one member of a cluster, as Metadata describes it.
type Broker struct {
	Rack string
	Host string
	Port int32
	ID   int32
}

// String returns the broker's host:port address.
func (b Broker) String() string {
	return net.JoinHostPort(b.Host, strconv.FormatInt(int64(b.Port), 10))
}

// Format prints the ID for %d, the address for %s, and both (and the rack)
// for %v.
func (b Broker) Format(w fmt.State, v rune) {
	switch v {
	case 'd':
		fmt.Fprint(w, b.ID)
	case 's':
		fmt.Fprint(w, b.String())
	case 'v':
		fmt.Fprintf(w, "%d %s", b.ID, b.String())
		if b.Rack != "" {
			fmt.Fprintf(w, " %s", b.Rack)
		}
	}
}

// Topic is a topic of a cluster layout.
type Topic struct {
	Name       string
	Error      int16
	Partitions map[int32]Partition
}

// Partition is a partition of a topic, with its leader and replicas.
type Partition struct {
	ID       int32
	Error    int16
	Leader   int32
	Replicas []int32
	ISR      []int32
	Offline  []int32
}

// Cluster is a snapshot of a cluster's layout, built from a Metadata response.
type Cluster struct {
	ClusterID  string
	Controller int32
	Brokers    map[int32]Broker
	Topics     map[string]Topic
}

// BrokerIDs returns the IDs of the cluster's brokers, in increasing order.
func (c Cluster) BrokerIDs() []int32 { return sortedKeys(c.Brokers) }

// TopicNames returns the names of the cluster's topics, sorted.
func (c Cluster) TopicNames() []string { return sortedKeys(c.Topics) }

// sortedKeys returns m's keys in increasing order, in a non-nil slice.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	keys := slices.AppendSeq(make([]K, 0, len(m)), maps.Keys(m))
	slices.Sort(keys)
	return keys
}

// IsZero reports whether c holds no layout at all.
func (c Cluster) IsZero() bool {
	return c.ClusterID == "" && c.Controller == 0 && len(c.Brokers) == 0 && len(c.Topics) == 0
}

// Format prints a readable table of the cluster's brokers and topics.
func (c Cluster) Format(w fmt.State, _ rune) {
	fmt.Fprintf(w, "CLUSTER %q (controller %d)\n", c.ClusterID, c.Controller)
	for _, id := range c.BrokerIDs() {
		fmt.Fprintf(w, "  broker %v\n", c.Brokers[id])
	}
	for _, name := range c.TopicNames() {
		t := c.Topics[name]
		fmt.Fprintf(w, "  topic %s (error %d)\n", name, t.Error)
		ids := make([]int32, 0, len(t.Partitions))
		for id := range t.Partitions {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		for _, id := range ids {
			p := t.Partitions[id]
			fmt.Fprintf(w, "    partition %d leader=%d replicas=%v isr=%v offline=%v error=%d\n",
				p.ID, p.Leader, p.Replicas, p.ISR, p.Offline, p.Error)
		}
	}
}
