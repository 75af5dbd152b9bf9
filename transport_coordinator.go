package kafka

import (
	"context"
	"time"

	"github.com/segmentio/kafka-go/protocol/findcoordinator"
)

// Group and transaction coordinators: looked up with FindCoordinator once
// per key (concurrent callers share the lookup) and cached until an answer
// says the coordinator moved.

// coordinator returns the ID of the broker coordinating a group or a
// transaction, from the cache or from a FindCoordinator request.
func (cl *cluster) coordinator(ctx context.Context, k coordinatorKey, s *clusterState, start time.Time) (int32, error) {
	cl.mu.Lock()
	if id, ok := cl.coordinators[k]; ok {
		cl.mu.Unlock()
		return id, nil
	}
	// Concurrent requests of a group share one lookup, which runs on its
	// own so that a caller giving up does not fail the others.
	call := cl.lookups[k]
	if call == nil {
		call = &coordinatorCall{done: make(chan struct{})}
		cl.lookups[k] = call
		go cl.lookupCoordinator(k, s, start, call)
	}
	cl.mu.Unlock()
	select {
	case <-call.done:
		return call.id, call.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

type coordinatorCall struct {
	done chan struct{}
	id   int32
	err  error
}

func (cl *cluster) lookupCoordinator(k coordinatorKey, s *clusterState, start time.Time, call *coordinatorCall) {
	ctx, cancel := context.WithTimeout(cl.ctx, cl.cfg.dialTimeout+cl.metadataTTL)
	defer cancel()
	id, err := cl.findCoordinator(ctx, k, s, start)
	cl.mu.Lock()
	delete(cl.lookups, k)
	if err == nil {
		cl.coordinators[k] = id
	}
	cl.mu.Unlock()
	call.id, call.err = id, err
	close(call.done)
}

func (cl *cluster) findCoordinator(ctx context.Context, k coordinatorKey, s *clusterState, start time.Time) (int32, error) {
	m, err := cl.send(ctx, &findcoordinator.Request{Key: k.key, KeyType: k.keyType}, s, start)
	if err != nil {
		return 0, err
	}
	c, ok := m.(*findcoordinator.Response).Coordinator(k.key)
	if !ok {
		return 0, GroupCoordinatorNotAvailable
	}
	if c.ErrorCode != 0 {
		return 0, makeError(c.ErrorCode, c.ErrorMessage)
	}
	if cl.brokerPool(c.NodeID) == nil {
		// A broker we have not heard of yet.
		if _, err := cl.getState(ctx, time.Now()); err != nil {
			return 0, err
		}
	}
	return c.NodeID, nil
}

func (cl *cluster) forgetCoordinator(k coordinatorKey) {
	cl.mu.Lock()
	delete(cl.coordinators, k)
	cl.mu.Unlock()
}
