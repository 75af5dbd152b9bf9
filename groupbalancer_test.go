package kafka

import (
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"
)

func topicPartitions(topic string, n int) []Partition {
	ps := make([]Partition, n)
	for i := range ps {
		ps[i] = Partition{Topic: topic, ID: i}
	}
	return ps
}

func concatPartitions(lists ...[]Partition) []Partition {
	var all []Partition
	for _, l := range lists {
		all = append(all, l...)
	}
	return all
}

func TestRangeGroupBalancer(t *testing.T) {
	tests := []struct {
		name       string
		members    []GroupMember
		partitions []Partition
		want       GroupMemberAssignments
	}{
		{
			name: "no members",
			want: GroupMemberAssignments{},
		},
		{
			name:       "5 partitions 2 consumers: the last member gets the extra one",
			members:    []GroupMember{{ID: "c1", Topics: []string{"t"}}, {ID: "c0", Topics: []string{"t"}}},
			partitions: topicPartitions("t", 5),
			want:       GroupMemberAssignments{"c0": {"t": {0, 1}}, "c1": {"t": {2, 3, 4}}},
		},
		{
			name:       "6 partitions 3 consumers",
			members:    []GroupMember{{ID: "c0", Topics: []string{"t"}}, {ID: "c1", Topics: []string{"t"}}, {ID: "c2", Topics: []string{"t"}}},
			partitions: topicPartitions("t", 6),
			want:       GroupMemberAssignments{"c0": {"t": {0, 1}}, "c1": {"t": {2, 3}}, "c2": {"t": {4, 5}}},
		},
		{
			name:       "3 partitions 2 consumers",
			members:    []GroupMember{{ID: "b", Topics: []string{"t"}}, {ID: "a", Topics: []string{"t"}}},
			partitions: topicPartitions("t", 3),
			want:       GroupMemberAssignments{"a": {"t": {0}}, "b": {"t": {1, 2}}},
		},
		{
			name:       "one partition 2 consumers: the first member is idle",
			members:    []GroupMember{{ID: "a", Topics: []string{"t"}}, {ID: "b", Topics: []string{"t"}}},
			partitions: topicPartitions("t", 1),
			want:       GroupMemberAssignments{"a": {}, "b": {"t": {0}}},
		},
		{
			name: "overlapping subscriptions",
			members: []GroupMember{
				{ID: "a", Topics: []string{"t1", "t2"}},
				{ID: "b", Topics: []string{"t2", "t3"}},
			},
			partitions: concatPartitions(topicPartitions("t1", 3), topicPartitions("t2", 3), topicPartitions("t3", 3)),
			want: GroupMemberAssignments{
				"a": {"t1": {0, 1, 2}, "t2": {0}},
				"b": {"t2": {1, 2}, "t3": {0, 1, 2}},
			},
		},
		{
			name: "different subscriptions",
			members: []GroupMember{
				{ID: "C2", Topics: []string{"t1"}},
				{ID: "C0", Topics: []string{"t0"}},
				{ID: "C1", Topics: []string{"t0", "t1"}},
			},
			partitions: concatPartitions(topicPartitions("t0", 3), topicPartitions("t1", 2)),
			want: GroupMemberAssignments{
				"C0": {"t0": {0}},
				"C1": {"t0": {1, 2}, "t1": {0}},
				"C2": {"t1": {1}},
			},
		},
		{
			// Positions follow the order partitions are listed in.
			name:       "more consumers than partitions, unsorted partitions",
			members:    []GroupMember{{ID: "b", Topics: []string{"t"}}, {ID: "c", Topics: []string{"t"}}, {ID: "a", Topics: []string{"t"}}},
			partitions: []Partition{{Topic: "t", ID: 1}, {Topic: "t", ID: 0}},
			want:       GroupMemberAssignments{"a": {}, "b": {"t": {1}}, "c": {"t": {0}}},
		},
		{
			name:       "topic without partitions",
			members:    []GroupMember{{ID: "a", Topics: []string{"missing"}}, {ID: "idle"}},
			partitions: topicPartitions("other", 2),
			want:       GroupMemberAssignments{"a": {}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RangeGroupBalancer{}.AssignGroups(tt.members, tt.partitions)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
}

// With 213 partitions and 66 members every member gets 3 or 4 partitions.
func TestRangeGroupBalancerUneven(t *testing.T) {
	members := make([]GroupMember, 66)
	for i := range members {
		members[i] = GroupMember{ID: fmt.Sprint(i), Topics: []string{"t"}}
	}
	got := RangeGroupBalancer{}.AssignGroups(members, topicPartitions("t", 213))
	if len(got) != len(members) {
		t.Fatalf("%d members assigned, want %d", len(got), len(members))
	}
	checkSpread(t, got, "t", members, topicPartitions("t", 213))
}

func TestRoundRobinGroupBalancer(t *testing.T) {
	tests := []struct {
		name       string
		members    []GroupMember
		partitions []Partition
		want       GroupMemberAssignments
	}{
		{
			name: "no members",
			want: GroupMemberAssignments{},
		},
		{
			name:       "5 partitions 2 consumers",
			members:    []GroupMember{{ID: "c1", Topics: []string{"t"}}, {ID: "c0", Topics: []string{"t"}}},
			partitions: topicPartitions("t", 5),
			want:       GroupMemberAssignments{"c0": {"t": {0, 2, 4}}, "c1": {"t": {1, 3}}},
		},
		{
			name:       "6 partitions 3 consumers",
			members:    []GroupMember{{ID: "c2", Topics: []string{"t"}}, {ID: "c0", Topics: []string{"t"}}, {ID: "c1", Topics: []string{"t"}}},
			partitions: topicPartitions("t", 6),
			want:       GroupMemberAssignments{"c0": {"t": {0, 3}}, "c1": {"t": {1, 4}}, "c2": {"t": {2, 5}}},
		},
		{
			name:       "one partition 2 consumers: the second member is idle",
			members:    []GroupMember{{ID: "a", Topics: []string{"t"}}, {ID: "b", Topics: []string{"t"}}},
			partitions: topicPartitions("t", 1),
			want:       GroupMemberAssignments{"a": {"t": {0}}, "b": {}},
		},
		{
			// Each topic is dealt from the first member again.
			name:       "same subscriptions",
			members:    []GroupMember{{ID: "C0", Topics: []string{"t0", "t1"}}, {ID: "C1", Topics: []string{"t1", "t0"}}},
			partitions: concatPartitions(topicPartitions("t1", 3), topicPartitions("t0", 3)),
			want: GroupMemberAssignments{
				"C0": {"t0": {0, 2}, "t1": {0, 2}},
				"C1": {"t0": {1}, "t1": {1}},
			},
		},
		{
			name: "overlapping subscriptions",
			members: []GroupMember{
				{ID: "a", Topics: []string{"t1", "t2"}},
				{ID: "b", Topics: []string{"t2", "t3"}},
			},
			partitions: concatPartitions(topicPartitions("t1", 3), topicPartitions("t2", 3), topicPartitions("t3", 3)),
			want: GroupMemberAssignments{
				"a": {"t1": {0, 1, 2}, "t2": {0, 2}},
				"b": {"t2": {1}, "t3": {0, 1, 2}},
			},
		},
		{
			name:       "unsorted partitions keep their order",
			members:    []GroupMember{{ID: "b", Topics: []string{"t"}}, {ID: "a", Topics: []string{"t"}}},
			partitions: []Partition{{Topic: "t", ID: 2}, {Topic: "t", ID: 0}, {Topic: "t", ID: 1}},
			want:       GroupMemberAssignments{"a": {"t": {2, 1}}, "b": {"t": {0}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RoundRobinGroupBalancer{}.AssignGroups(tt.members, tt.partitions)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
}

func rackPartitions(topic string, racks ...string) []Partition {
	ps := make([]Partition, len(racks))
	for i, r := range racks {
		ps[i] = Partition{Topic: topic, ID: i, Leader: Broker{Rack: r}}
	}
	return ps
}

func TestRackAffinityGroupBalancer(t *testing.T) {
	tests := []struct {
		name       string
		members    []GroupMember
		partitions []Partition
		want       GroupMemberAssignments
	}{
		{
			name: "one consumer per rack",
			members: []GroupMember{
				{ID: "m3", Topics: []string{"t"}, UserData: []byte("c")},
				{ID: "m1", Topics: []string{"t"}, UserData: []byte("a")},
				{ID: "m2", Topics: []string{"t"}, UserData: []byte("b")},
			},
			partitions: rackPartitions("t", "a", "b", "c", "a", "b", "c"),
			want:       GroupMemberAssignments{"m1": {"t": {0, 3}}, "m2": {"t": {1, 4}}, "m3": {"t": {2, 5}}},
		},
		{
			name: "all leaders in one rack",
			members: []GroupMember{
				{ID: "x", Topics: []string{"t"}, UserData: []byte("a")},
				{ID: "y", Topics: []string{"t"}, UserData: []byte("b")},
			},
			partitions: rackPartitions("t", "a", "a", "a", "a", "a"),
			// x takes the extra partition since it is local to it.
			want: GroupMemberAssignments{"x": {"t": {0, 1, 2}}, "y": {"t": {3, 4}}},
		},
		{
			name: "extra partition goes where it is local",
			members: []GroupMember{
				{ID: "x", Topics: []string{"t"}, UserData: []byte("a")},
				{ID: "y", Topics: []string{"t"}, UserData: []byte("b")},
			},
			partitions: rackPartitions("t", "a", "b", "b", "b", "a"),
			want:       GroupMemberAssignments{"x": {"t": {0, 4}}, "y": {"t": {1, 2, 3}}},
		},
		{
			name: "no racks",
			members: []GroupMember{
				{ID: "x", Topics: []string{"t", "u"}},
				{ID: "y", Topics: []string{"t"}},
			},
			partitions: concatPartitions(topicPartitions("t", 3), topicPartitions("u", 2)),
			// Without racks everything is "local": partitions are dealt in turn.
			want: GroupMemberAssignments{"x": {"t": {0, 2}, "u": {0, 1}}, "y": {"t": {1}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RackAffinityGroupBalancer{}.AssignGroups(tt.members, tt.partitions)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
}

// checkSpread verifies that every partition of topic is assigned exactly
// once, and that counts differ by at most one.
func checkSpread(t *testing.T, a GroupMemberAssignments, topic string, members []GroupMember, partitions []Partition) {
	t.Helper()
	seen := map[int]string{}
	minN, maxN := len(partitions)+1, -1
	for _, m := range members {
		ids := a[m.ID][topic]
		for _, id := range ids {
			if prev, dup := seen[id]; dup {
				t.Fatalf("partition %d given to %s and %s", id, prev, m.ID)
			}
			seen[id] = m.ID
		}
		minN, maxN = min(minN, len(ids)), max(maxN, len(ids))
	}
	if len(seen) != len(partitions) {
		t.Fatalf("%d of %d partitions assigned: %v", len(seen), len(partitions), a)
	}
	if maxN-minN > 1 {
		t.Fatalf("uneven spread %d..%d: %v", minN, maxN, a)
	}
}

func TestGroupBalancersRandomized(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	racks := []string{"a", "b", "c", ""}
	balancers := []GroupBalancer{RangeGroupBalancer{}, RoundRobinGroupBalancer{}, RackAffinityGroupBalancer{}}
	for iter := 0; iter < 300; iter++ {
		nMembers, nParts := 1+rng.Intn(7), rng.Intn(25)
		members := make([]GroupMember, nMembers)
		for i := range members {
			members[i] = GroupMember{ID: fmt.Sprintf("m%02d", rng.Intn(100)*100+i), Topics: []string{"t"}, UserData: []byte(racks[rng.Intn(len(racks))])}
		}
		partRacks := make([]string, nParts)
		for i := range partRacks {
			partRacks[i] = racks[rng.Intn(len(racks))]
		}
		partitions := rackPartitions("t", partRacks...)
		rng.Shuffle(len(partitions), func(i, j int) { partitions[i], partitions[j] = partitions[j], partitions[i] })

		for _, b := range balancers {
			a := b.AssignGroups(members, partitions)
			checkSpread(t, a, "t", members, partitions)
			if _, ok := b.(RackAffinityGroupBalancer); !ok {
				continue // range and roundrobin keep the listed order
			}
			for _, ids := range a {
				if !sort.IntsAreSorted(ids["t"]) {
					t.Fatalf("%s: unsorted %v", b.ProtocolName(), ids)
				}
			}
		}

		// Rack affinity: each rack gets at least as many local partitions as
		// it could without exceeding the even share of its members.
		a := RackAffinityGroupBalancer{}.AssignGroups(members, partitions)
		target := nParts / nMembers
		local, bound := 0, 0
		membersPerRack, partsPerRack := map[string]int{}, map[string]int{}
		for _, m := range members {
			membersPerRack[string(m.UserData)]++
			for _, id := range a[m.ID]["t"] {
				if partRacks[id] == string(m.UserData) {
					local++
				}
			}
		}
		for _, r := range partRacks {
			partsPerRack[r]++
		}
		for r, n := range partsPerRack {
			bound += min(n, membersPerRack[r]*target)
		}
		if local < bound {
			t.Fatalf("only %d local partitions, at least %d possible: %v", local, bound, a)
		}
	}
}

func TestGroupBalancerNamesAndUserData(t *testing.T) {
	for _, tt := range []struct {
		b    GroupBalancer
		name string
		data []byte
	}{
		{RangeGroupBalancer{}, "range", nil},
		{RoundRobinGroupBalancer{}, "roundrobin", nil},
		{RackAffinityGroupBalancer{Rack: "use1-az1"}, "rack-affinity", []byte("use1-az1")},
	} {
		data, err := tt.b.UserData()
		if tt.b.ProtocolName() != tt.name || err != nil || string(data) != string(tt.data) {
			t.Errorf("%T: %q %q %v", tt.b, tt.b.ProtocolName(), data, err)
		}
	}
	balancers := []GroupBalancer{RangeGroupBalancer{}, RoundRobinGroupBalancer{}}
	if b, ok := findGroupBalancer("roundrobin", balancers); !ok || b.ProtocolName() != "roundrobin" {
		t.Fatal("findGroupBalancer")
	}
	if _, ok := findGroupBalancer("sticky", balancers); ok {
		t.Fatal("findGroupBalancer must not find sticky")
	}
}
