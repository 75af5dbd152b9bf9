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

// RangeGroupBalancer splits each topic into contiguous ranges, one per
// subscribed member (members sorted by ID). Member i of m gets the
// partitions at positions [i*n/m, (i+1)*n/m) of the topic's n partitions,
// taken in the order they are listed, so when the division is not even it is
// the last members that get one more (upstream kafka-go's split).
//
// For example, members m1 < m2 < m3 sharing a topic of 7 partitions get
// 0-1, 2-3 and 4-6; two members sharing 5 partitions get 0-1 and 2-4.
type RangeGroupBalancer struct{}

func (r RangeGroupBalancer) ProtocolName() string { return "range" }

func (r RangeGroupBalancer) UserData() ([]byte, error) { return nil, nil }

func (r RangeGroupBalancer) AssignGroups(members []GroupMember, topicPartitions []Partition) GroupMemberAssignments {
	result := GroupMemberAssignments{}
	for topic, subscribers := range subscribedMembers(members) {
		ids := topicPartitionIDs(topic, topicPartitions)
		n, m := len(ids), len(subscribers)
		for i, id := range subscribers {
			byTopic := memberAssignments(result, id)
			lo, hi := i*n/m, (i+1)*n/m
			if hi > lo {
				byTopic[topic] = append(byTopic[topic], ids[lo:hi]...)
			}
		}
	}
	return result
}

// RoundRobinGroupBalancer deals the partitions of each topic, in the order
// they are listed, to the topic's subscribers (sorted by member ID) in turn.
// Every topic starts again with the first member, so members with the same
// subscriptions get the same partition numbers of each topic.
//
// For example, members m1 < m2 < m3 sharing a topic of 7 partitions get
// {0, 3, 6}, {1, 4} and {2, 5}; two members sharing 5 partitions get
// {0, 2, 4} and {1, 3}.
type RoundRobinGroupBalancer struct{}

func (r RoundRobinGroupBalancer) ProtocolName() string { return "roundrobin" }

func (r RoundRobinGroupBalancer) UserData() ([]byte, error) { return nil, nil }

func (r RoundRobinGroupBalancer) AssignGroups(members []GroupMember, topicPartitions []Partition) GroupMemberAssignments {
	result := GroupMemberAssignments{}
	for topic, subscribers := range subscribedMembers(members) {
		for _, id := range subscribers {
			memberAssignments(result, id)
		}
		for k, p := range topicPartitionIDs(topic, topicPartitions) {
			byTopic := memberAssignments(result, subscribers[k%len(subscribers)])
			byTopic[topic] = append(byTopic[topic], p)
		}
	}
	return result
}

// memberAssignments returns the assignments of member id, creating an empty entry so
// that members left without partitions still appear in the result.
func memberAssignments(a GroupMemberAssignments, id string) map[string][]int {
	byTopic, ok := a[id]
	if !ok {
		byTopic = map[string][]int{}
		a[id] = byTopic
	}
	return byTopic
}

// subscribedMembers maps each topic to the IDs of the members listing it,
// sorted by ID. A member listing a topic twice appears twice, as upstream.
func subscribedMembers(members []GroupMember) map[string][]string {
	byTopic := map[string][]string{}
	for _, m := range members {
		for _, topic := range m.Topics {
			byTopic[topic] = append(byTopic[topic], m.ID)
		}
	}
	for _, ids := range byTopic {
		sort.Strings(ids)
	}
	return byTopic
}

// topicPartitionIDs returns the IDs of topic's partitions in the order of
// partitions.
func topicPartitionIDs(topic string, partitions []Partition) []int {
	var ids []int
	for _, p := range partitions {
		if p.Topic == topic {
			ids = append(ids, p.ID)
		}
	}
	return ids
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
