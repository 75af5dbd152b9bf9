package kafka

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/consumer"
	"github.com/segmentio/kafka-go/protocol/joingroup"
	"github.com/segmentio/kafka-go/protocol/leavegroup"
	"github.com/segmentio/kafka-go/protocol/metadata"
	"github.com/segmentio/kafka-go/protocol/offsetfetch"
	"github.com/segmentio/kafka-go/protocol/syncgroup"
)

// The exchanges with the group coordinator that make and end a generation
// (JoinGroup, the leader's assignment, SyncGroup, OffsetFetch, LeaveGroup),
// one request at a time, for ConsumerGroup.nextGeneration and Close.

// request sends req to the group coordinator (the transport finds it),
// bounded by the group's Timeout plus extra.
func (cg *ConsumerGroup) request(req protocol.Message, extra time.Duration) (protocol.Message, error) {
	ctx, cancel := context.WithTimeout(cg.ctx, cg.config.Timeout+extra)
	defer cancel()
	return cg.client.roundTrip(ctx, nil, req)
}

// joinGroup sends JoinGroup until it gets an answer other than
// MEMBER_ID_REQUIRED (brokers from 2.2 on first hand a new member an ID,
// then expect it to join again with it).
func (cg *ConsumerGroup) joinGroup(memberID string) (string, *joingroup.Response, error) {
	req := &joingroup.Request{
		GroupID:            cg.config.ID,
		SessionTimeoutMS:   int32(cg.config.SessionTimeout / time.Millisecond),
		RebalanceTimeoutMS: int32(cg.config.RebalanceTimeout / time.Millisecond),
		GroupInstanceID:    cg.config.GroupInstanceID,
		ProtocolType:       groupProtocolType,
	}
	if err := cg.checkStaticMembership(); err != nil {
		return memberID, nil, err
	}
	for _, b := range cg.config.GroupBalancers {
		userData, err := b.UserData()
		if err != nil {
			return memberID, nil, fmt.Errorf("unable to construct protocol metadata for member, %v: %w", b.ProtocolName(), err)
		}
		var meta []byte
		if _, ok := b.(cooperativeBalancer); ok {
			meta, err = encodeCooperativeSubscription(cg.config.Topics, cg.owned, cg.ownedGeneration)
		} else {
			meta, err = encodeSubscription(cg.config.Topics, userData)
		}
		if err != nil {
			return memberID, nil, err
		}
		req.Protocols = append(req.Protocols, joingroup.RequestProtocol{Name: b.ProtocolName(), Metadata: meta})
	}

	for attempt := 0; ; attempt++ {
		attemptReq := *req
		attemptReq.MemberID = memberID
		m, err := cg.request(&attemptReq, cg.config.RebalanceTimeout)
		if err != nil {
			return memberID, nil, err
		}
		res := m.(*joingroup.Response)
		if res.ErrorCode == int16(MemberIDRequired) && res.MemberID != "" && attempt < 3 {
			memberID = res.MemberID
			continue
		}
		if err := makeError(res.ErrorCode, ""); err != nil {
			if errors.Is(err, UnknownMemberId) {
				memberID = ""
			}
			return memberID, nil, err
		}
		return res.MemberID, res, nil
	}
}

// checkStaticMembership makes sure, once, that the brokers know static
// membership (JoinGroup v5+, Kafka 2.3): an older broker would drop the
// GroupInstanceID without a word, and the member would be a dynamic one.
func (cg *ConsumerGroup) checkStaticMembership() error {
	if cg.config.GroupInstanceID == "" || cg.staticChecked {
		return nil
	}
	maxVersion, supported, err := cg.brokerMaxVersion(protocol.JoinGroup)
	if err != nil {
		return err
	}
	if supported && maxVersion < 5 {
		return &fatalGroupError{fmt.Errorf("kafka: GroupInstanceID needs brokers that support static membership (JoinGroup v5, Kafka 2.3 or later); this one supports JoinGroup up to v%d: %w",
			maxVersion, UnsupportedVersion)}
	}
	cg.staticChecked = true
	return nil
}

// brokerMaxVersion asks a broker (ApiVersions) for the highest version of
// key it supports; supported is false when it does not know the API.
func (cg *ConsumerGroup) brokerMaxVersion(key protocol.ApiKey) (maxVersion int, supported bool, err error) {
	ctx, cancel := context.WithTimeout(cg.ctx, cg.config.Timeout)
	defer cancel()
	res, err := cg.client.ApiVersions(ctx, &ApiVersionsRequest{})
	if err != nil {
		return 0, false, err
	}
	for _, k := range res.ApiKeys {
		if k.ApiKey == int(key) {
			return k.MaxVersion, true, nil
		}
	}
	return 0, false, nil
}

// encodeSubscription writes this member's subscription as version 0 of
// the consumer protocol: version, topics, user data, and nothing after.
// It is the one layout that every leader reads:
//
//   - kafka-go v0.4.51 leaders ignore the version and reject any byte
//     after the user data, so the owned partitions of version 1+ cannot be
//     sent;
//   - librdkafka leaders ignore trailing bytes but, from version 1, require
//     the owned partitions, and drop a member whose version 1 subscription
//     lacks them (the layout kafka-go v0.4.51 writes);
//   - Java's ConsumerProtocolSubscription schema reads version 0 as topics
//     and user data, and fails on a version 1 without owned partitions.
//
// kafka-go never sends owned partitions (its balancers are eager), so
// version 0 loses nothing. Null user data is written empty, as before.
func encodeSubscription(topics []string, userData []byte) ([]byte, error) {
	if userData == nil {
		userData = []byte{}
	}
	return protocol.Marshal(0, consumer.Subscription{Version: 0, Topics: topics, UserData: userData})
}

// encodeAssignment writes an assignment as kafka-go always has: version 1,
// partitions by topic and empty user data.
func encodeAssignment(byTopic map[string][]int) ([]byte, error) {
	a := consumer.Assignment{Version: 1, UserData: []byte{}}
	topics := make([]string, 0, len(byTopic))
	for topic := range byTopic {
		topics = append(topics, topic)
	}
	sort.Strings(topics)
	for _, topic := range topics {
		ids := make([]int32, len(byTopic[topic]))
		for i, p := range byTopic[topic] {
			ids[i] = int32(p)
		}
		a.AssignedPartitions = append(a.AssignedPartitions, consumer.TopicPartition{Topic: topic, Partitions: ids})
	}
	return protocol.Marshal(1, a)
}

// decodeSubscription reads the subscription a member sent in JoinGroup. It
// accepts metadata of any version, including the version 1 header without
// owned partitions that kafka-go releases write.
func decodeSubscription(b []byte) (consumer.Subscription, error) {
	var s consumer.Subscription
	if len(b) < 2 {
		return s, fmt.Errorf("member metadata of %d bytes is too short", len(b))
	}
	version := int16(b[0])<<8 | int16(b[1])
	if version < 0 {
		return s, fmt.Errorf("invalid member metadata version %d", version)
	}
	v := min(version, 3)
	err := protocol.Unmarshal(b, v, &s)
	if err != nil && v > 0 {
		s = consumer.Subscription{}
		err = protocol.Unmarshal(b, 0, &s)
	}
	return s, err
}

// cgDecodeAssignment reads a member assignment of any version; no bytes
// is no assignment.
func cgDecodeAssignment(b []byte) (consumer.Assignment, error) {
	var a consumer.Assignment
	if len(b) == 0 {
		return a, nil
	}
	if len(b) < 2 {
		return a, fmt.Errorf("member assignment of %d bytes is too short", len(b))
	}
	version := int16(b[0])<<8 | int16(b[1])
	if version < 0 {
		return a, fmt.Errorf("invalid member assignment version %d", version)
	}
	err := protocol.Unmarshal(b, min(version, consumer.MaxVersionSupported), &a)
	return a, err
}

// assignTopicPartitions runs, on the leader, the balancer the coordinator
// chose.
func (cg *ConsumerGroup) assignTopicPartitions(join *joingroup.Response) (GroupMemberAssignments, error) {
	balancer, ok := findGroupBalancer(join.ProtocolName, cg.config.GroupBalancers)
	if !ok {
		return nil, fmt.Errorf("unable to find selected balancer, %v, for group, %v", join.ProtocolName, cg.config.ID)
	}
	if cb, ok := balancer.(cooperativeBalancer); ok {
		members, err := cooperativeMembers(join)
		if err != nil {
			return nil, fmt.Errorf("unable to read metadata of a member: %w", err)
		}
		topics := map[string]bool{}
		var list []string
		for _, m := range members {
			for _, t := range m.topics {
				if !topics[t] {
					topics[t] = true
					list = append(list, t)
				}
			}
		}
		sort.Strings(list)
		partitions, err := cg.readPartitions(list...)
		if err != nil {
			return nil, err
		}
		return cb.assignCooperative(members, partitions), nil
	}
	members := make([]GroupMember, 0, len(join.Members))
	for _, m := range join.Members {
		sub, err := decodeSubscription(m.Metadata)
		if err != nil {
			return nil, fmt.Errorf("unable to read metadata for member, %v: %w", m.MemberID, err)
		}
		members = append(members, GroupMember{ID: m.MemberID, Topics: sub.Topics, UserData: sub.UserData})
	}
	partitions, err := cg.readPartitions(extractTopics(members)...)
	if err != nil {
		return nil, err
	}
	cg.withLogger(func(l Logger) {
		l.Printf("using '%v' balancer to assign group %v: %d members, %d partitions", join.ProtocolName, cg.config.ID, len(members), len(partitions))
	})
	plan := balancer.AssignGroups(members, partitions)
	cg.withLogger(func(l Logger) {
		for member, topics := range plan {
			for topic, ids := range topics {
				l.Printf("assigned member/topic/partitions %v/%v/%v", member, topic, ids)
			}
		}
	})
	return plan, nil
}

// readPartitions lists the partitions of topics, sorted by topic and ID. A
// topic that does not exist (yet) has none: it is not an error, as with the
// other clients; WatchPartitionChanges picks it up later. As with the
// original client, brokers that auto-create topics create them here.
func (cg *ConsumerGroup) readPartitions(topics ...string) ([]Partition, error) {
	if len(topics) == 0 {
		return nil, nil
	}
	res, err := cg.readMetadata(topics...)
	if err != nil {
		return nil, err
	}
	brokers := make(map[int32]Broker, len(res.Brokers))
	for _, b := range res.Brokers {
		brokers[b.NodeID] = Broker{Host: b.Host, Port: int(b.Port), ID: int(b.NodeID), Rack: b.Rack}
	}
	var partitions []Partition
	for _, t := range res.Topics {
		if err := makeError(t.ErrorCode, ""); err != nil {
			if errors.Is(err, UnknownTopicOrPartition) || errors.Is(err, LeaderNotAvailable) {
				continue
			}
			return nil, err
		}
		for _, p := range t.Partitions {
			leader, ok := brokers[p.LeaderID]
			if !ok {
				leader = Broker{ID: int(p.LeaderID)}
			}
			partitions = append(partitions, Partition{
				Topic:  t.Name,
				ID:     int(p.PartitionIndex),
				Leader: leader,
				Error:  makeError(p.ErrorCode, ""),
			})
		}
	}
	sort.Slice(partitions, func(i, j int) bool {
		if partitions[i].Topic != partitions[j].Topic {
			return partitions[i].Topic < partitions[j].Topic
		}
		return partitions[i].ID < partitions[j].ID
	})
	return partitions, nil
}

// readMetadata asks for the metadata of topics (creating them on brokers
// that auto-create topics).
func (cg *ConsumerGroup) readMetadata(topics ...string) (*metadata.Response, error) {
	ctx, cancel := context.WithTimeout(cg.ctx, cg.config.Timeout)
	defer cancel()
	req := &metadata.Request{TopicNames: topics, AllowAutoTopicCreation: true}
	for _, t := range topics {
		req.Topics = append(req.Topics, metadata.RequestTopic{Name: t})
	}
	m, err := cg.client.roundTrip(ctx, nil, req)
	if err != nil {
		return nil, err
	}
	return m.(*metadata.Response), nil
}

// syncGroup sends the leader's plan (nil for other members) and returns
// this member's partitions by topic.
func (cg *ConsumerGroup) syncGroup(memberID string, join *joingroup.Response, plan GroupMemberAssignments) (map[string][]int32, error) {
	req := &syncgroup.Request{
		GroupID:         cg.config.ID,
		GenerationID:    join.GenerationID,
		MemberID:        memberID,
		GroupInstanceID: cg.config.GroupInstanceID,
		ProtocolType:    groupProtocolType,
		ProtocolName:    join.ProtocolName,
	}
	members := make([]string, 0, len(plan))
	for id := range plan {
		members = append(members, id)
	}
	sort.Strings(members)
	for _, id := range members {
		b, err := encodeAssignment(plan[id])
		if err != nil {
			return nil, err
		}
		req.Assignments = append(req.Assignments, syncgroup.RequestAssignment{MemberID: id, Assignment: b})
	}

	// The coordinator answers once the leader has sent the assignments:
	// allow for a rebalance's worth of waiting, as for JoinGroup.
	m, err := cg.request(req, cg.config.RebalanceTimeout)
	if err != nil {
		return nil, err
	}
	res := m.(*syncgroup.Response)
	if err := makeError(res.ErrorCode, ""); err != nil {
		return nil, err
	}
	assigned := map[string][]int32{}
	if len(res.Assignments) == 0 {
		cg.withLogger(func(l Logger) {
			l.Printf("received empty assignments for group %v as member %s for generation %d", cg.config.ID, memberID, join.GenerationID)
		})
		return assigned, nil
	}
	a, err := cgDecodeAssignment(res.Assignments)
	if err != nil {
		return nil, err
	}
	for _, tp := range a.AssignedPartitions {
		assigned[tp.Topic] = append(assigned[tp.Topic], tp.Partitions...)
	}
	return assigned, nil
}

// fetchOffsets returns the committed offsets of the assigned partitions;
// partitions without one get the StartOffset.
func (cg *ConsumerGroup) fetchOffsets(assigned map[string][]int32) (map[string]map[int]int64, error) {
	req := &offsetfetch.Request{GroupID: cg.config.ID}
	for _, topic := range cg.config.Topics {
		req.Topics = append(req.Topics, offsetfetch.RequestTopic{Name: topic, PartitionIndexes: append([]int32{}, assigned[topic]...)})
	}
	m, err := cg.request(req, 0)
	if err != nil {
		return nil, err
	}
	topics, code, ok := m.(*offsetfetch.Response).Group(cg.config.ID)
	if !ok {
		return nil, fmt.Errorf("no offsets returned for group %s", cg.config.ID)
	}
	if err := makeError(code, ""); err != nil {
		return nil, err
	}
	offsets := make(map[string]map[int]int64, len(topics))
	for _, t := range topics {
		byPartition := map[int]int64{}
		offsets[t.Name] = byPartition
		for _, p := range t.Partitions {
			for _, id := range assigned[t.Name] {
				if id != p.PartitionIndex {
					continue
				}
				offset := p.CommittedOffset
				if offset < 0 {
					offset = cg.config.StartOffset
				}
				byPartition[int(id)] = offset
			}
		}
	}
	return offsets, nil
}

func (cg *ConsumerGroup) makeAssignments(assigned map[string][]int32, offsets map[string]map[int]int64) map[string][]PartitionAssignment {
	out := make(map[string][]PartitionAssignment, len(cg.config.Topics))
	for _, topic := range cg.config.Topics {
		ids := assigned[topic]
		list := make([]PartitionAssignment, 0, len(ids))
		for _, id := range ids {
			offset, ok := offsets[topic][int(id)]
			if !ok {
				offset = cg.config.StartOffset
			}
			list = append(list, PartitionAssignment{ID: int(id), Offset: offset})
		}
		out[topic] = list
	}
	return out
}

// leaveGroup tells the coordinator this member is gone, so that the others
// rebalance at once instead of after the session timeout. It runs after
// Close too, so it does not use cg.ctx. A static member does not leave
// (KIP-345): its partitions wait for it to come back.
func (cg *ConsumerGroup) leaveGroup(memberID string) {
	if memberID == "" {
		return
	}
	if cg.config.GroupInstanceID != "" {
		cg.withLogger(func(l Logger) {
			l.Printf("static member %s (%s) of group %s does not leave the group", memberID, cg.config.GroupInstanceID, cg.config.ID)
		})
		return
	}
	cg.withLogger(func(l Logger) { l.Printf("leaving group %s, member %s", cg.config.ID, memberID) })
	ctx, cancel := context.WithTimeout(context.Background(), cg.config.Timeout)
	defer cancel()
	m, err := cg.client.roundTrip(ctx, nil, &leavegroup.Request{
		GroupID:  cg.config.ID,
		MemberID: memberID,
		Members:  []leavegroup.RequestMember{{MemberID: memberID}},
	})
	if err == nil {
		res := m.(*leavegroup.Response)
		err = makeError(res.ErrorCode, "")
		for _, mm := range res.Members {
			if err == nil {
				err = makeError(mm.ErrorCode, "")
			}
		}
	}
	if err != nil {
		cg.withErrorLogger(func(l Logger) {
			l.Printf("leave group failed for group, %v, and member, %v: %v", cg.config.ID, memberID, err)
		})
	}
}
