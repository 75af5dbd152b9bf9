package reader

import (
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	kafka "github.com/segmentio/kafka-go"
)

// A group of one kafka-go member (ConsumerGroup) and one franz-go member
// splits the partitions without overlap, with either balancer, whichever
// member leads; when the franz-go member leaves, the kafka-go member gets
// everything.
func TestConsumerGroupWithFranzGoMember(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ours     kafka.GroupBalancer
		theirs   kgo.GroupBalancer
		protocol string
	}{
		{"range", kafka.RangeGroupBalancer{}, kgo.RangeBalancer(), "range"},
		{"roundrobin", kafka.RoundRobinGroupBalancer{}, kgo.RoundRobinBalancer(), "roundrobin"},
	} {
		for _, kgoFirst := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/kgo-first=%v", tc.name, kgoFirst), func(t *testing.T) {
				const topic, partitions = "mixed", 5
				group := fmt.Sprintf("mixed-%s-%v", tc.name, kgoFirst)
				addrs, _ := startCluster(t, topic, partitions)
				admin := newProducer(t, addrs)
				ctx := ctxTimeout(t, 60*time.Second)

				startKgo := func() *kgo.Client {
					cl, err := kgo.NewClient(
						kgo.SeedBrokers(addrs...),
						kgo.ConsumerGroup(group),
						kgo.ConsumeTopics(topic),
						kgo.Balancers(tc.theirs),
						kgo.HeartbeatInterval(100*time.Millisecond),
						kgo.SessionTimeout(6*time.Second),
					)
					if err != nil {
						t.Fatal(err)
					}
					go func() {
						for {
							if f := cl.PollFetches(ctx); f.IsClientClosed() || ctx.Err() != nil {
								return
							}
						}
					}()
					return cl
				}
				var theirs *kgo.Client
				if kgoFirst {
					theirs = startKgo()
					waitStable(t, admin, group, topic, 1, partitions)
				}
				cg, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
					ID:                group,
					Brokers:           addrs,
					Topics:            []string{topic},
					GroupBalancers:    []kafka.GroupBalancer{tc.ours},
					HeartbeatInterval: 100 * time.Millisecond,
					SessionTimeout:    6 * time.Second,
					RebalanceTimeout:  5 * time.Second,
					JoinGroupBackoff:  200 * time.Millisecond,
				})
				if err != nil {
					t.Fatal(err)
				}
				// Keep taking generations, remembering the last one.
				gens := make(chan *kafka.Generation, 100)
				go func() {
					for {
						gen, err := cg.Next(ctx)
						if errors.Is(err, kafka.ErrGroupClosed) || ctx.Err() != nil {
							close(gens)
							return
						}
						if err == nil {
							gens <- gen
						}
					}
				}()
				if !kgoFirst {
					waitStable(t, admin, group, topic, 1, partitions)
					theirs = startKgo()
				}
				st := waitStable(t, admin, group, topic, 2, partitions)

				res, err := (func() (*kmsg.DescribeGroupsResponse, error) {
					req := kmsg.NewPtrDescribeGroupsRequest()
					req.Groups = []string{group}
					return req.RequestWith(ctx, admin)
				})()
				if err != nil || res.Groups[0].Protocol != tc.protocol {
					t.Fatalf("protocol: %v %+v", err, res)
				}

				// The coordinator's view matches what the kafka-go member
				// got in its latest generation.
				var gen *kafka.Generation
				deadline := time.After(30 * time.Second)
				for gen == nil || len(st.members[gen.MemberID]) != len(gen.Assignments[topic]) {
					select {
					case g := <-gens:
						gen = g
					case <-deadline:
						t.Fatalf("no generation matching %+v (last %+v)", st, gen)
					}
				}
				var got []int32
				for _, a := range gen.Assignments[topic] {
					got = append(got, int32(a.ID))
				}
				want := append([]int32(nil), st.members[gen.MemberID]...)
				sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
				sort.Slice(want, func(i, j int) bool { return want[i] < want[j] })
				if fmt.Sprint(got) != fmt.Sprint(want) || len(got) == 0 || len(got) == partitions {
					t.Fatalf("kafka-go member has %v, coordinator says %v", got, want)
				}
				// Both balancers give the member sorted first the first or
				// the even partitions.
				ids := make([]string, 0, 2)
				for id := range st.members {
					ids = append(ids, id)
				}
				sort.Strings(ids)
				first := st.members[ids[0]]
				sort.Slice(first, func(i, j int) bool { return first[i] < first[j] })
				wantFirst := map[string]string{"range": "[0 1]", "roundrobin": "[0 2 4]"}[tc.name]
				if len(first) == 3 && tc.name == "range" {
					wantFirst = "[0 1 2]" // franz-go led, with the Java split
				}
				if fmt.Sprint(first) != wantFirst {
					t.Fatalf("first member got %v, want %s", first, wantFirst)
				}

				theirs.Close()
				waitStable(t, admin, group, topic, 1, partitions)
				if err := cg.Close(); err != nil {
					t.Fatal(err)
				}
				if _, err := cg.Next(ctx); !errors.Is(err, kafka.ErrGroupClosed) {
					t.Fatalf("Next after Close: %v", err)
				}
				// The kafka-go member left the group on Close.
				if st := describeGroup(ctx, t, admin, group, topic); len(st.members) != 0 {
					t.Fatalf("members left after Close: %+v", st)
				}
				checkNoGoroutines(t)
			})
		}
	}
}
