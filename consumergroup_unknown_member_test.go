package kafka

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol/joingroup"
	"github.com/stretchr/testify/require"
)

// A member the coordinator dropped (its heartbeat or commit answered
// UNKNOWN_MEMBER_ID: a session that expired) joins again as a new member
// at once, without first sending a JoinGroup with the forgotten ID, which
// would be refused and cost JoinGroupBackoff (an hour here: a regression
// times the test out), and without claiming the partitions it owned.
func TestConsumerGroupRejoinsAsNewMemberWhenForgotten(t *testing.T) {
	for _, via := range []string{"heartbeat", "commit"} {
		t.Run(via, func(t *testing.T) {
			stub := &stubCoordinator{committed: map[int32]int64{}, left: make(chan string, 4), alone: true}
			cg, err := NewConsumerGroup(ConsumerGroupConfig{
				ID:                "g",
				Brokers:           unreachableBrokers,
				Topics:            []string{"t"},
				GroupBalancers:    []GroupBalancer{CooperativeStickyGroupBalancer{}},
				HeartbeatInterval: time.Millisecond,
				JoinGroupBackoff:  time.Hour,
				transport:         stub,
			})
			require.NoError(t, err)
			defer cg.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			gen, err := cg.Next(ctx)
			require.NoError(t, err)
			require.Equal(t, "m-1", gen.MemberID)
			require.Len(t, gen.Assignments["t"], 4)

			stub.mu.Lock()
			stub.unknownMember, stub.newMemberID = "m-1", "m-2"
			if via == "heartbeat" {
				stub.heartbeat = int16(UnknownMemberId)
			} else {
				stub.commitErr = int16(UnknownMemberId)
			}
			seen := len(stub.requests)
			stub.mu.Unlock()
			if via == "commit" {
				require.ErrorIs(t, gen.CommitOffsets(map[string]map[int]int64{"t": {0: 1}}), UnknownMemberId)
				stub.mu.Lock()
				stub.heartbeat = int16(RebalanceInProgress) // the generation ends for another reason
				stub.mu.Unlock()
			}
			ended := make(chan struct{})
			gen.Start(func(ctx context.Context) { <-ctx.Done(); close(ended) })
			<-ended
			stub.mu.Lock()
			stub.heartbeat, stub.commitErr = 0, 0
			stub.mu.Unlock()

			gen2, err := nextAfterLoss(ctx, cg)
			require.NoError(t, err, "no new generation: the member waited JoinGroupBackoff")
			require.Equal(t, "m-2", gen2.MemberID)
			stub.mu.Lock()
			defer stub.mu.Unlock()
			var joins []*joingroup.Request
			for _, req := range stub.requests[seen:] {
				if j, ok := req.(*joingroup.Request); ok {
					joins = append(joins, j)
				}
			}
			require.GreaterOrEqual(t, len(joins), 2)
			require.Equal(t, "", joins[0].MemberID, "rejoined with the forgotten member ID")
			for _, j := range joins {
				sub, err := decodeSubscription(j.Protocols[0].Metadata)
				require.NoError(t, err)
				require.Empty(t, sub.OwnedPartitions, "a new member claims no partitions")
			}
		})
	}
}

// nextAfterLoss returns the generation after the loss of the member: Next
// reports the loss first (a Reader stops what it still reads then), and
// the new member's generation comes next.
func nextAfterLoss(ctx context.Context, cg *ConsumerGroup) (*Generation, error) {
	_, err := cg.Next(ctx)
	if lost := new(*memberLostError); !errors.As(err, lost) || !errors.Is(err, UnknownMemberId) {
		return nil, fmt.Errorf("Next reported %v, not the loss of the member", err)
	}
	return cg.Next(ctx)
}
