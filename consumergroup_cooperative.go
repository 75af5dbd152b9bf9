package kafka

import (
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/consumer"
	"github.com/segmentio/kafka-go/protocol/joingroup"
)

// cooperativeSubscriptionVersion is the version of the subscription a
// cooperative member sends: owned partitions (v1), generation (v2) and
// rack (v3, null), as the Java client and franz-go write it.
const cooperativeSubscriptionVersion = 3

// isCooperative tells whether this member keeps its partitions across a
// rebalance: the balancer named protocol (the one the coordinator chose)
// lets it, and so do all the others it offers. A member that also offers
// an eager balancer gives up everything before each join, as the Java
// client does: the group may pick the eager one in any rebalance (a
// member offering only that one joins), and its leader would then hand
// this member's partitions to others while this one still read them.
func (cg *ConsumerGroup) isCooperative(protocol string) bool {
	if _, ok := findGroupBalancer(protocol, cg.config.GroupBalancers); !ok {
		return false
	}
	for _, b := range cg.config.GroupBalancers {
		if _, ok := b.(cooperativeBalancer); !ok {
			return false
		}
	}
	return true
}

// encodeCooperativeSubscription writes the subscription of a cooperative
// member: the partitions it owns, in the owned partitions field and, for
// leaders that read the sticky user data, in the user data as well.
func encodeCooperativeSubscription(topics []string, owned map[string][]int32, generation int32) ([]byte, error) {
	s := consumer.Subscription{
		Version:      cooperativeSubscriptionVersion,
		Topics:       topics,
		UserData:     encodeStickyUserData(owned, generation),
		GenerationID: generation,
	}
	for _, t := range sortedTopics(owned) {
		s.OwnedPartitions = append(s.OwnedPartitions, consumer.TopicPartition{Topic: t, Partitions: owned[t]})
	}
	return protocol.Marshal(cooperativeSubscriptionVersion, s)
}

// cooperativeMembers reads the members of a join for a cooperative
// balancer: owned partitions from the subscription (version 1+) or else
// from sticky user data, generation from the subscription (version 2+) or
// else from the user data.
func cooperativeMembers(join *joingroup.Response) ([]cooperativeMember, error) {
	members := make([]cooperativeMember, 0, len(join.Members))
	for _, m := range join.Members {
		sub, err := decodeSubscription(m.Metadata)
		if err != nil {
			return nil, err
		}
		cm := cooperativeMember{id: m.MemberID, topics: sub.Topics, owned: map[string][]int32{}, generation: -1}
		fromData, gen, derr := decodeStickyUserData(sub.UserData)
		switch {
		case sub.Version >= 1:
			for _, tp := range sub.OwnedPartitions {
				cm.owned[tp.Topic] = append(cm.owned[tp.Topic], tp.Partitions...)
			}
			if sub.Version >= 2 {
				cm.generation = sub.GenerationID
			} else if derr == nil {
				cm.generation = gen
			}
		case derr == nil:
			cm.owned, cm.generation = fromData, gen
		}
		members = append(members, cm)
	}
	return members, nil
}

// revokedPartitions returns the partitions of owned that assigned lacks.
func revokedPartitions(owned, assigned map[string][]int32) map[string][]int32 {
	var revoked map[string][]int32
	for topic, ids := range owned {
		for _, id := range ids {
			keep := false
			for _, a := range assigned[topic] {
				keep = keep || a == id
			}
			if !keep {
				if revoked == nil {
					revoked = map[string][]int32{}
				}
				revoked[topic] = append(revoked[topic], id)
			}
		}
	}
	return revoked
}
