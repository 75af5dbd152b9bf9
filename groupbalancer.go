package kafka

import (
	"sort"
)

// GroupMember is one member of a consumer group, as the group leader sees
// it when assigning partitions.
type GroupMember struct {
	// ID is the member ID the coordinator gave the member (JoinGroup).
	ID string

	// Topics are the topics the member subscribed to.
	Topics []string

	// UserData is what the member's GroupBalancer put in its subscription
	// metadata (see GroupBalancer.UserData).
	UserData []byte
}

// GroupMemberAssignments maps a member ID to the partitions it is assigned,
// by topic.
type GroupMemberAssignments map[string]map[string][]int

// GroupBalancer is the client side logic that splits the partitions of the
// subscribed topics between the members of a consumer group. The group
// leader runs it during each rebalance.
type GroupBalancer interface {
	// ProtocolName is the assignor name the balancer advertises in JoinGroup;
	// all members of a group must agree on one.
	ProtocolName() string

	// UserData returns the bytes the member attaches to its subscription,
	// which the leader then sees in GroupMember.UserData.
	UserData() ([]byte, error)

	// AssignGroups returns which partitions each member consumes. partitions
	// are the partitions of all the topics the members subscribed to.
	AssignGroups(members []GroupMember, partitions []Partition) GroupMemberAssignments
}

// RangeGroupBalancer is the "range" assignor of the Java client: topic by
// topic, the members subscribed to the topic (sorted by member ID) each get
// a contiguous range of its partitions, the first members getting one more
// when the division is not even.
//
// With 5 partitions and 2 consumers:
//
//	C0: [0, 1, 2]
//	C1: [3, 4]
//
// With 6 partitions and 3 consumers:
//
//	C0: [0, 1]
//	C1: [2, 3]
//	C2: [4, 5]
type RangeGroupBalancer struct{}

func (r RangeGroupBalancer) ProtocolName() string { return "range" }

func (r RangeGroupBalancer) UserData() ([]byte, error) { return nil, nil }

func (r RangeGroupBalancer) AssignGroups(members []GroupMember, topicPartitions []Partition) GroupMemberAssignments {
	assignments := newAssignments(members)
	partitionsByTopic := partitionIDsByTopic(topicPartitions)

	for topic, subscribers := range subscribersByTopic(members) {
		ids := partitionIDsOf(partitionsByTopic[topic])
		per, extra := len(ids)/len(subscribers), len(ids)%len(subscribers)
		next := 0
		for i, id := range subscribers {
			n := per
			if i < extra {
				n++
			}
			if n > 0 {
				assignments[id][topic] = append(assignments[id][topic], ids[next:next+n]...)
			}
			next += n
		}
	}
	return assignments
}

// RoundRobinGroupBalancer is the "roundrobin" assignor of the Java client:
// all partitions of all subscribed topics, sorted by topic then partition,
// are dealt in turn to the members sorted by member ID, skipping members not
// subscribed to the partition's topic. The turn carries over from one topic
// to the next.
//
// With 5 partitions and 2 consumers:
//
//	C0: [0, 2, 4]
//	C1: [1, 3]
//
// With 6 partitions and 3 consumers:
//
//	C0: [0, 3]
//	C1: [1, 4]
//	C2: [2, 5]
type RoundRobinGroupBalancer struct{}

func (r RoundRobinGroupBalancer) ProtocolName() string { return "roundrobin" }

func (r RoundRobinGroupBalancer) UserData() ([]byte, error) { return nil, nil }

func (r RoundRobinGroupBalancer) AssignGroups(members []GroupMember, topicPartitions []Partition) GroupMemberAssignments {
	assignments := newAssignments(members)
	subscribers := subscribersByTopic(members)
	partitionsByTopic := partitionIDsByTopic(topicPartitions)

	// Every member, sorted by ID, with the set of its topics.
	type memberTopics struct {
		id     string
		topics map[string]bool
	}
	ring := make([]memberTopics, 0, len(assignments))
	for id := range assignments {
		ring = append(ring, memberTopics{id: id, topics: map[string]bool{}})
	}
	sort.Slice(ring, func(i, j int) bool { return ring[i].id < ring[j].id })
	index := make(map[string]int, len(ring))
	for i, m := range ring {
		index[m.id] = i
	}
	for topic, ids := range subscribers {
		for _, id := range ids {
			ring[index[id]].topics[topic] = true
		}
	}

	topics := make([]string, 0, len(subscribers))
	for topic := range subscribers {
		topics = append(topics, topic)
	}
	sort.Strings(topics)

	turn := 0
	for _, topic := range topics {
		for _, p := range partitionIDsOf(partitionsByTopic[topic]) {
			// The topic has at least one subscriber, so this terminates.
			for !ring[turn].topics[topic] {
				turn = (turn + 1) % len(ring)
			}
			id := ring[turn].id
			assignments[id][topic] = append(assignments[id][topic], p)
			turn = (turn + 1) % len(ring)
		}
	}
	return assignments
}

// RackAffinityGroupBalancer ("rack-affinity") assigns partitions to the
// consumers that run in the same rack (availability zone) as the partition
// leader whenever it can. Reading from a broker in the same rack is faster,
// and where cross-zone traffic is billed (cloud providers), cheaper.
//
// The first objective is an even spread: for each topic, every subscribed
// member gets the same number of partitions, give or take one. Within that
// constraint, as many partitions as possible go to a member of the rack of
// their leader. Affinity is best when consumers and leaders are spread
// evenly over the racks.
//
// Members tell the leader their rack through the UserData of their
// subscriptions; partition racks come from the brokers' metadata, which
// carries racks since Kafka 0.10.0.
type RackAffinityGroupBalancer struct {
	// Rack is the rack this consumer runs in, sent to the group leader (as
	// UserData) so that it can match the consumer with partition leaders.
	Rack string
}

func (r RackAffinityGroupBalancer) ProtocolName() string { return "rack-affinity" }

func (r RackAffinityGroupBalancer) UserData() ([]byte, error) { return []byte(r.Rack), nil }

func (r RackAffinityGroupBalancer) AssignGroups(members []GroupMember, partitions []Partition) GroupMemberAssignments {
	assignments := newAssignments(members)
	rackOf := make(map[string]string, len(members))
	for _, m := range members {
		rackOf[m.ID] = string(m.UserData)
	}
	partitionsByTopic := partitionIDsByTopic(partitions)

	for topic, subscribers := range subscribersByTopic(members) {
		for id, ids := range assignRacks(subscribers, rackOf, partitionsByTopic[topic]) {
			assignments[id][topic] = ids
		}
	}
	return assignments
}

// assignRacks splits the partitions of one topic between members (sorted by
// ID); each member gets len(parts)/len(members) partitions and the first
// len(parts)%len(members) that can take one more get one more.
func assignRacks(members []string, rackOf map[string]string, parts map[int]Partition) map[string][]int {
	ids := partitionIDsOf(parts)
	target, extra := len(ids)/len(members), len(ids)%len(members)
	result := make(map[string][]int, len(members))
	taken := make(map[int]bool, len(ids))
	give := func(member string, id int) {
		result[member] = append(result[member], id)
		taken[id] = true
	}

	// Group members and partitions by rack, in a stable order.
	membersByRack := map[string][]string{}
	for _, m := range members {
		membersByRack[rackOf[m]] = append(membersByRack[rackOf[m]], m)
	}
	partsByRack := map[string][]int{}
	for _, id := range ids {
		rack := parts[id].Leader.Rack
		if len(membersByRack[rack]) > 0 {
			partsByRack[rack] = append(partsByRack[rack], id)
		}
	}
	racks := make([]string, 0, len(partsByRack))
	for rack := range partsByRack {
		racks = append(racks, rack)
	}
	sort.Strings(racks)

	// 1. Deal each rack's partitions to the rack's members, up to target.
	for _, rack := range racks {
		local := membersByRack[rack]
		queue := partsByRack[rack]
		for progress := true; progress && len(queue) > 0; {
			progress = false
			for _, m := range local {
				if len(queue) > 0 && len(result[m]) < target {
					give(m, queue[0])
					queue = queue[1:]
					progress = true
				}
			}
		}
		partsByRack[rack] = queue
	}

	// 2. Spend the extra slots on partitions still waiting in their rack, at
	// most one per member.
	for _, rack := range racks {
		queue := partsByRack[rack]
		for _, m := range membersByRack[rack] {
			if extra == 0 || len(queue) == 0 {
				break
			}
			if len(result[m]) == target {
				give(m, queue[0])
				queue = queue[1:]
				extra--
			}
		}
	}

	// 3. Whatever is left goes to the members below target, then to those
	// that can still take an extra partition.
	var left []int
	for _, id := range ids {
		if !taken[id] {
			left = append(left, id)
		}
	}
	for _, m := range members {
		for len(result[m]) < target && len(left) > 0 {
			give(m, left[0])
			left = left[1:]
		}
	}
	for _, m := range members {
		if extra == 0 || len(left) == 0 {
			break
		}
		if len(result[m]) == target {
			give(m, left[0])
			left = left[1:]
			extra--
		}
	}

	for _, assigned := range result {
		sort.Ints(assigned)
	}
	return result
}

// newAssignments returns assignments with an empty entry for every member
// subscribed to at least one topic.
func newAssignments(members []GroupMember) GroupMemberAssignments {
	a := make(GroupMemberAssignments, len(members))
	for _, m := range members {
		if len(m.Topics) > 0 {
			a[m.ID] = map[string][]int{}
		}
	}
	return a
}

// subscribersByTopic maps each topic to the IDs of its subscribers, sorted
// (the order every assignor of the Java client uses).
func subscribersByTopic(members []GroupMember) map[string][]string {
	byTopic := map[string][]string{}
	for _, m := range members {
		seen := map[string]bool{}
		for _, topic := range m.Topics {
			if !seen[topic] {
				seen[topic] = true
				byTopic[topic] = append(byTopic[topic], m.ID)
			}
		}
	}
	for _, ids := range byTopic {
		sort.Strings(ids)
	}
	return byTopic
}

// partitionIDsByTopic indexes partitions by topic and ID (dropping
// duplicates).
func partitionIDsByTopic(partitions []Partition) map[string]map[int]Partition {
	byTopic := map[string]map[int]Partition{}
	for _, p := range partitions {
		if byTopic[p.Topic] == nil {
			byTopic[p.Topic] = map[int]Partition{}
		}
		byTopic[p.Topic][p.ID] = p
	}
	return byTopic
}

// partitionIDsOf returns the IDs of parts in increasing order.
func partitionIDsOf(parts map[int]Partition) []int {
	ids := make([]int, 0, len(parts))
	for id := range parts {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

// findGroupBalancer returns the balancer of balancers whose protocol name is
// protocolName.
func findGroupBalancer(protocolName string, balancers []GroupBalancer) (GroupBalancer, bool) {
	for _, b := range balancers {
		if b.ProtocolName() == protocolName {
			return b, true
		}
	}
	return nil, false
}
