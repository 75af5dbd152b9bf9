package kafka

import (
	"reflect"
	"testing"

	"github.com/segmentio/kafka-go/protocol/consumer"
	"github.com/segmentio/kafka-go/protocol/joingroup"
)

func sixPartitions() []Partition {
	var ps []Partition
	for i := 0; i < 6; i++ {
		ps = append(ps, Partition{Topic: "t", ID: i})
	}
	return ps
}

// A third member joins a group of two owning 3 partitions each: the
// owners keep two each, and the two partitions that move are withheld
// (assigned to no one) until their owners have given them up.
func TestCooperativeStickyWithholdsMovedPartitions(t *testing.T) {
	b := CooperativeStickyGroupBalancer{}
	members := []cooperativeMember{
		{id: "a", topics: []string{"t"}, owned: map[string][]int32{"t": {0, 2, 4}}, generation: 5},
		{id: "b", topics: []string{"t"}, owned: map[string][]int32{"t": {1, 3, 5}}, generation: 5},
		{id: "c", topics: []string{"t"}, generation: -1},
	}
	plan := b.assignCooperative(members, sixPartitions())
	if n := len(plan["a"]["t"]); n != 2 {
		t.Errorf("a keeps %v, want 2 of its partitions", plan["a"])
	}
	if n := len(plan["b"]["t"]); n != 2 {
		t.Errorf("b keeps %v, want 2 of its partitions", plan["b"])
	}
	if n := len(plan["c"]["t"]); n != 0 {
		t.Errorf("c got %v before the owners gave them up", plan["c"])
	}
	for _, p := range plan["a"]["t"] {
		if p%2 != 0 {
			t.Errorf("a was given %d, owned by b", p)
		}
	}

	// The follow-up: a and b own 2 each now; c gets the 2 left.
	members[0].owned = map[string][]int32{"t": toInt32(plan["a"]["t"])}
	members[1].owned = map[string][]int32{"t": toInt32(plan["b"]["t"])}
	plan2 := b.assignCooperative(members, sixPartitions())
	if !reflect.DeepEqual(plan2["a"], plan["a"]) || !reflect.DeepEqual(plan2["b"], plan["b"]) || len(plan2["c"]["t"]) != 2 {
		t.Errorf("follow-up %v after %v", plan2, plan)
	}
}

// A partition claimed by two members: the higher generation wins it, and
// a tie leaves it to be assigned afresh (it is not withheld).
func TestCooperativeStickyConflictingClaims(t *testing.T) {
	b := CooperativeStickyGroupBalancer{}
	plan := b.assignCooperative([]cooperativeMember{
		{id: "a", topics: []string{"t"}, owned: map[string][]int32{"t": {0, 1, 2}}, generation: 3},
		{id: "b", topics: []string{"t"}, owned: map[string][]int32{"t": {0, 3, 4, 5}}, generation: 4},
	}, sixPartitions())
	total := len(plan["a"]["t"]) + len(plan["b"]["t"])
	for _, p := range plan["a"]["t"] {
		if p == 0 {
			t.Errorf("a got 0, claimed by b in a later generation")
		}
	}
	if total < 5 {
		t.Errorf("plan %v leaves more than the one moving partition out", plan)
	}
}

func toInt32(ids []int) []int32 {
	out := make([]int32, len(ids))
	for i, id := range ids {
		out[i] = int32(id)
	}
	return out
}

// The subscription of a cooperative member, as the Java client and
// franz-go read it: version 3, owned partitions and generation in the
// fields and in sticky user data; a leader reads it back.
func TestCooperativeSubscriptionRoundTrip(t *testing.T) {
	owned := map[string][]int32{"t": {1, 4}, "u": {0}}
	b, err := encodeCooperativeSubscription([]string{"t", "u"}, owned, 7)
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != 0 || b[1] != 3 {
		t.Fatalf("version %v, want 3", b[:2])
	}
	s, err := decodeSubscription(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []consumer.TopicPartition{{Topic: "t", Partitions: []int32{1, 4}}, {Topic: "u", Partitions: []int32{0}}}
	if !reflect.DeepEqual(s.OwnedPartitions, want) || s.GenerationID != 7 {
		t.Errorf("decoded %+v", s)
	}
	ms, err := cooperativeMembers(&joingroup.Response{Members: []joingroup.ResponseMember{{MemberID: "m", Metadata: b}}})
	if err != nil || !reflect.DeepEqual(ms[0].owned, owned) || ms[0].generation != 7 {
		t.Errorf("member %+v, %v", ms, err)
	}
	data, gen, err := decodeStickyUserData(s.UserData)
	if err != nil || gen != 7 || !reflect.DeepEqual(data, owned) {
		t.Errorf("user data %v %d %v", data, gen, err)
	}
}

// Malformed sticky user data is an error, never a panic or a huge
// allocation.
func TestDecodeStickyUserDataMalformed(t *testing.T) {
	good := encodeStickyUserData(map[string][]int32{"topic": {1, 2, 3}}, 9)
	for i := 1; i < len(good)-4; i++ {
		if _, _, err := decodeStickyUserData(good[:i]); err == nil {
			t.Errorf("%d of %d bytes decoded", i, len(good))
		}
	}
	if _, _, err := decodeStickyUserData([]byte{0x7f, 0xff, 0xff, 0xff}); err == nil {
		t.Error("a huge count decoded")
	}
}
