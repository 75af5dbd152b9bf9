package kafka

import (
	"encoding/binary"
	"errors"
	"sort"
)

// CooperativeStickyGroupBalancer ("cooperative-sticky", KIP-429) keeps
// each partition with the member that read it in the previous generation
// as long as the group stays balanced, and never moves a partition from
// one member to another in a single rebalance: the member that gives a
// partition up is assigned without it, gives it up while it goes on
// reading the others, and rejoins; the follow-up rebalance assigns it.
// Members that keep their partitions never stop reading them.
//
// It speaks the protocol of the Java client's, librdkafka's and
// franz-go's assignors of the same name (owned partitions and generation
// in the subscription, version 3), so groups can mix these clients. All
// members must offer it for the coordinator to choose it; to move a live
// group from an eager balancer, first deploy every member with both
// (cooperative-sticky first), then remove the eager one. A member that
// offers an eager balancer too gives up all its partitions before each
// rebalance, as the Java client does.
type CooperativeStickyGroupBalancer struct{}

func (CooperativeStickyGroupBalancer) ProtocolName() string { return "cooperative-sticky" }

// UserData is not used: the group writes this balancer's subscription
// itself, as it holds the partitions the member owns.
func (CooperativeStickyGroupBalancer) UserData() ([]byte, error) { return nil, nil }

// AssignGroups assigns from the members' UserData alone (the partitions
// and generation a kafka-go, librdkafka or franz-go member writes there);
// a group leader uses the owned partitions of the subscriptions instead.
func (b CooperativeStickyGroupBalancer) AssignGroups(members []GroupMember, partitions []Partition) GroupMemberAssignments {
	cms := make([]cooperativeMember, len(members))
	for i, m := range members {
		owned, gen, err := decodeStickyUserData(m.UserData)
		if err != nil {
			owned, gen = nil, -1
		}
		cms[i] = cooperativeMember{id: m.ID, topics: m.Topics, owned: owned, generation: gen}
	}
	return b.assignCooperative(cms, partitions)
}

// cooperativeMember is a member as the cooperative balancer sees it.
type cooperativeMember struct {
	id         string
	topics     []string
	owned      map[string][]int32
	generation int32
}

// cooperativeBalancer is implemented by balancers whose members keep
// their partitions across a rebalance (the group then sends owned
// partitions and revokes in two phases).
type cooperativeBalancer interface {
	assignCooperative(members []cooperativeMember, partitions []Partition) GroupMemberAssignments
}

type tp struct {
	topic     string
	partition int32
}

// assignCooperative keeps every valid claim (the highest generation wins
// a partition claimed twice), hands out unclaimed partitions to the least
// loaded eligible member, moves partitions from the most to the least
// loaded members until no two eligible members differ by more than one,
// and finally withholds every partition that ends up with a member other
// than its previous owner: that owner revokes it first.
func (CooperativeStickyGroupBalancer) assignCooperative(members []cooperativeMember, partitions []Partition) GroupMemberAssignments {
	sort.Slice(members, func(i, j int) bool { return members[i].id < members[j].id })
	eligible := map[tp][]int{} // partition -> indexes of subscribed members
	var all []tp
	for _, p := range partitions {
		k := tp{p.Topic, int32(p.ID)}
		for i, m := range members {
			for _, t := range m.topics {
				if t == p.Topic {
					eligible[k] = append(eligible[k], i)
					break
				}
			}
		}
		if len(eligible[k]) > 0 {
			all = append(all, k)
		}
	}
	canRead := func(i int, k tp) bool {
		for _, j := range eligible[k] {
			if j == i {
				return true
			}
		}
		return false
	}

	// Claims: the member of highest generation; a tie invalidates it.
	owner := map[tp]int{}
	ownerGen := map[tp]int32{}
	tied := map[tp]bool{}
	for i, m := range members {
		for topic, ids := range m.owned {
			for _, id := range ids {
				k := tp{topic, id}
				if !canRead(i, k) {
					continue
				}
				g, seen := ownerGen[k]
				switch {
				case !seen || m.generation > g:
					owner[k], ownerGen[k], tied[k] = i, m.generation, false
				case m.generation == g:
					tied[k] = true
				}
			}
		}
	}
	prev := map[tp]int{}
	load := make([]int, len(members))
	plan := map[tp]int{}
	for k, i := range owner {
		if tied[k] {
			continue
		}
		prev[k] = i
		plan[k] = i
		load[i]++
	}
	for _, k := range all {
		if _, ok := plan[k]; ok {
			continue
		}
		best := -1
		for _, i := range eligible[k] {
			if best < 0 || load[i] < load[best] {
				best = i
			}
		}
		plan[k] = best
		load[best]++
	}
	// Balance: each move lowers the sum of squared loads, so this ends.
	for moved := true; moved; {
		moved = false
		for _, k := range all {
			from := plan[k]
			to := from
			for _, i := range eligible[k] {
				if load[i] < load[to] {
					to = i
				}
			}
			if load[from]-load[to] >= 2 {
				plan[k] = to
				load[from]--
				load[to]++
				moved = true
			}
		}
	}

	out := GroupMemberAssignments{}
	for _, m := range members {
		out[m.id] = map[string][]int{}
	}
	for _, k := range all {
		i := plan[k]
		if p, ok := prev[k]; ok && p != i {
			continue // its owner gives it up first
		}
		byTopic := out[members[i].id]
		byTopic[k.topic] = append(byTopic[k.topic], int(k.partition))
	}
	return out
}

// encodeStickyUserData writes the user data of the sticky assignors
// (Java's StickyAssignor, librdkafka, franz-go): the owned partitions by
// topic, then the generation.
func encodeStickyUserData(owned map[string][]int32, generation int32) []byte {
	topics := sortedTopics(owned)
	b := binary.BigEndian.AppendUint32(nil, uint32(len(topics)))
	for _, t := range topics {
		b = binary.BigEndian.AppendUint16(b, uint16(len(t)))
		b = append(b, t...)
		b = binary.BigEndian.AppendUint32(b, uint32(len(owned[t])))
		for _, p := range owned[t] {
			b = binary.BigEndian.AppendUint32(b, uint32(p))
		}
	}
	return binary.BigEndian.AppendUint32(b, uint32(generation))
}

var errStickyUserData = errors.New("malformed sticky user data")

// decodeStickyUserData reads what encodeStickyUserData writes; the
// generation is -1 when absent (version 0 of the format).
func decodeStickyUserData(b []byte) (map[string][]int32, int32, error) {
	owned := map[string][]int32{}
	if len(b) == 0 {
		return owned, -1, nil
	}
	u32 := func() (uint32, bool) {
		if len(b) < 4 {
			return 0, false
		}
		v := binary.BigEndian.Uint32(b)
		b = b[4:]
		return v, true
	}
	n, ok := u32()
	if !ok || int(n) > len(b) {
		return nil, -1, errStickyUserData
	}
	for ; n > 0; n-- {
		if len(b) < 2 {
			return nil, -1, errStickyUserData
		}
		l := int(binary.BigEndian.Uint16(b))
		b = b[2:]
		if l > len(b) {
			return nil, -1, errStickyUserData
		}
		topic := string(b[:l])
		b = b[l:]
		np, ok := u32()
		if !ok || int(np) > len(b)/4 {
			return nil, -1, errStickyUserData
		}
		for ; np > 0; np-- {
			p, _ := u32()
			owned[topic] = append(owned[topic], int32(p))
		}
	}
	gen := int32(-1)
	if g, ok := u32(); ok {
		gen = int32(g)
	}
	if len(b) != 0 {
		return nil, -1, errStickyUserData
	}
	return owned, gen, nil
}

func sortedTopics(m map[string][]int32) []string {
	topics := make([]string, 0, len(m))
	for t := range m {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	return topics
}
