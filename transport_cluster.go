package kafka

import (
	"context"
	"errors"
	"math/rand"
	"net"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/createpartitions"
	"github.com/segmentio/kafka-go/protocol/createtopics"
	"github.com/segmentio/kafka-go/protocol/deletetopics"
	"github.com/segmentio/kafka-go/protocol/metadata"
)

// cluster is the state a Transport keeps for one bootstrap address: the
// cached layout of the cluster, the coordinators it found, and the
// connection pools to its brokers.
type cluster struct {
	cfg            dialConfig
	idleTimeout    time.Duration
	metadataTTL    time.Duration
	metadataTopics []string
	resolver       BrokerResolver

	ctx    context.Context
	cancel context.CancelFunc
	seed   *connPool

	// active counts the requests in progress; once the cluster has been
	// dropped by CloseIdleConnections, the last one to leave releases the
	// cluster's context.
	active  atomic.Int64
	dropped atomic.Bool

	// wanted is the set of topics in use, which the metadata refreshes
	// ask for when metadataTopics is nil; replaced, never modified, under
	// mu (transport_topics.go).
	wanted atomic.Pointer[map[string]struct{}]
	// wantedNames is wanted's names sorted, kept in step with it under mu:
	// the topic list of a full refresh.
	wantedNames []string

	mu            sync.Mutex
	brokers       map[int32]*connPool
	state         *clusterState
	refreshing    *refreshCall
	invalidatedAt time.Time
	// widenedAt is when a topic was last added to wanted: lookups wait
	// for a refresh sent after it (transport_topics.go).
	widenedAt    time.Time
	coordinators map[coordinatorKey]int32
	lookups      map[coordinatorKey]*coordinatorCall
}

// clusterState is an immutable snapshot of the cluster's metadata.
type clusterState struct {
	meta    *metadata.Response // topics, brokers and partitions sorted
	layout  protocol.Cluster
	started time.Time // when the Metadata request was sent
	expires time.Time
}

type refreshCall struct {
	done    chan struct{}
	started time.Time
	topics  []string // asked for
	// merge, when set, is the state the answer adds its topics to (a
	// refresh of the topics just taken into use; transport_topics.go).
	merge *clusterState
	state *clusterState
	err   error
}

type coordinatorKey struct {
	key     string
	keyType int8
}

func newCluster(t *Transport, addr net.Addr) *cluster {
	ctx, cancel := context.WithCancel(t.context())
	cl := &cluster{
		cfg: dialConfig{
			dial:        t.Dial,
			dialTimeout: orDefault(t.DialTimeout, defaultDialTimeout),
			clientID:    t.ClientID,
			tls:         t.TLS,
			sasl:        t.SASL,
		},
		idleTimeout:    orDefault(t.IdleTimeout, defaultIdleTimeout),
		metadataTTL:    orDefault(t.MetadataTTL, defaultMetadataTTL),
		metadataTopics: append([]string(nil), t.MetadataTopics...),
		resolver:       t.Resolver,
		ctx:            ctx,
		cancel:         cancel,
		brokers:        make(map[int32]*connPool),
		coordinators:   make(map[coordinatorKey]int32),
		lookups:        make(map[coordinatorKey]*coordinatorCall),
	}
	if cl.cfg.dial == nil {
		cl.cfg.dial = defaultDialer.DialContext
	}
	cl.seed = newConnPool(ctx, &cl.cfg, cl.idleTimeout, cl.resolver, Broker{ID: -1}, addr.Network(), addr.String())
	context.AfterFunc(ctx, func() { cl.shutdown(ctx.Err()) })
	return cl
}

func (cl *cluster) enter() { cl.active.Add(1) }

func (cl *cluster) leave() {
	if cl.active.Add(-1) == 0 && cl.dropped.Load() {
		cl.cancel()
	}
}

// drop is called once the transport forgot the cluster: its idle
// connections close now, the others when their requests complete, and its
// context ends with the last request.
func (cl *cluster) drop() {
	cl.dropped.Store(true)
	cl.closeIdle()
	if cl.active.Load() == 0 {
		cl.cancel()
	}
}

// closeIdle closes the idle connections of the cluster; the ones in use are
// closed when their requests complete.
func (cl *cluster) closeIdle() {
	cl.seed.closeIdle()
	cl.mu.Lock()
	pools := make([]*connPool, 0, len(cl.brokers))
	for _, p := range cl.brokers {
		pools = append(pools, p)
	}
	cl.mu.Unlock()
	for _, p := range pools {
		p.closeIdle()
	}
}

// shutdown closes every connection, failing requests in flight.
func (cl *cluster) shutdown(err error) {
	cl.seed.shutdown(err)
	cl.mu.Lock()
	pools := make([]*connPool, 0, len(cl.brokers))
	for _, p := range cl.brokers {
		pools = append(pools, p)
	}
	cl.mu.Unlock()
	for _, p := range pools {
		p.shutdown(err)
	}
}

// getState returns the cached metadata, refreshing it first when there is
// none, when it was invalidated, or when it was requested before `after`.
// Concurrent callers share one Metadata request. Expired metadata is still
// returned, while a refresh runs in the background.
func (cl *cluster) getState(ctx context.Context, after time.Time) (*clusterState, error) {
	for attempt := 1; ; attempt++ {
		cl.mu.Lock()
		if after.Before(cl.invalidatedAt) {
			after = cl.invalidatedAt
		}
		if after.Before(cl.widenedAt) {
			after = cl.widenedAt
		}
		s := cl.state
		if s != nil && !s.started.Before(after) {
			if time.Now().After(s.expires) && cl.refreshing == nil {
				cl.startRefresh()
			}
			cl.mu.Unlock()
			return s, nil
		}
		call := cl.refreshing
		if call == nil {
			call = cl.startRefresh()
		}
		cl.mu.Unlock()

		select {
		case <-call.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if call.err != nil {
			// A layout known from before is better than none: it is most
			// likely still right about most partitions.
			cl.mu.Lock()
			s := cl.state
			cl.mu.Unlock()
			if s != nil {
				return s, nil
			}
			return nil, call.err
		}
		// A refresh sent before the latest invalidation may be stale; but
		// when invalidations keep coming, settle for what we have rather
		// than chase them.
		if !call.started.Before(after) || attempt >= 3 {
			return call.state, nil
		}
	}
}

// invalidate makes the next request wait for fresh metadata: the cluster
// told us the layout we have is wrong.
func (cl *cluster) invalidate() {
	cl.mu.Lock()
	cl.invalidatedAt = time.Now()
	cl.mu.Unlock()
}

// startRefresh sends a Metadata request in the background. cl.mu must be
// held.
func (cl *cluster) startRefresh() *refreshCall {
	call := &refreshCall{done: make(chan struct{}), started: time.Now(), topics: cl.refreshTopicsLocked()}
	call.topics, call.merge = cl.narrowRefreshLocked(call.topics, call.started)
	cl.refreshing = call
	go cl.refresh(call)
	return call
}

func (cl *cluster) refresh(call *refreshCall) {
	ctx, cancel := context.WithTimeout(cl.ctx, cl.cfg.dialTimeout+cl.metadataTTL)
	defer cancel()

	res, err := cl.fetchMetadata(ctx, call.topics)
	var s *clusterState
	if err == nil {
		s = newClusterState(res, call.started, cl.metadataTTL)
		if call.merge != nil {
			s = mergeClusterState(call.merge, s)
		}
	}
	cl.mu.Lock()
	cl.refreshing = nil
	if s != nil {
		cl.state = s
		cl.updateBrokers(s.layout)
	}
	cl.mu.Unlock()
	call.state, call.err = s, err
	close(call.done)
}

// fetchMetadata asks the bootstrap servers for the layout of topics, and
// the known brokers when they cannot answer.
func (cl *cluster) fetchMetadata(ctx context.Context, topics []string) (*metadata.Response, error) {
	ask := func(p *connPool) (*metadata.Response, error) {
		// A request of its own per attempt: Prepare may rewrite it.
		req := &metadata.Request{TopicNames: append([]string{}, topics...)}
		m, err := p.roundTrip(ctx, req)
		if err != nil {
			return nil, err
		}
		return m.(*metadata.Response), nil
	}
	res, err := ask(cl.seed)
	if err == nil || ctx.Err() != nil || isAuthError(err) {
		return res, err
	}
	cl.mu.Lock()
	pools := make([]*connPool, 0, len(cl.brokers))
	for _, p := range cl.brokers {
		pools = append(pools, p)
	}
	cl.mu.Unlock()
	for _, p := range pools {
		if r, err2 := ask(p); err2 == nil {
			return r, nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, err
}

func newClusterState(res *metadata.Response, started time.Time, ttl time.Duration) *clusterState {
	meta := *res
	meta.ThrottleTimeMs = 0
	meta.Brokers = append([]metadata.ResponseBroker(nil), res.Brokers...)
	meta.Topics = append([]metadata.ResponseTopic(nil), res.Topics...)
	sort.Slice(meta.Brokers, func(i, j int) bool { return meta.Brokers[i].NodeID < meta.Brokers[j].NodeID })
	sort.Slice(meta.Topics, func(i, j int) bool { return meta.Topics[i].Name < meta.Topics[j].Name })
	for i := range meta.Topics {
		parts := append([]metadata.ResponsePartition(nil), meta.Topics[i].Partitions...)
		sort.Slice(parts, func(a, b int) bool { return parts[a].PartitionIndex < parts[b].PartitionIndex })
		meta.Topics[i].Partitions = parts
	}

	layout := protocol.Cluster{
		ClusterID:  meta.ClusterID,
		Controller: meta.ControllerID,
		Brokers:    make(map[int32]protocol.Broker, len(meta.Brokers)),
		Topics:     make(map[string]protocol.Topic, len(meta.Topics)),
	}
	for _, b := range meta.Brokers {
		layout.Brokers[b.NodeID] = protocol.Broker{Rack: b.Rack, Host: b.Host, Port: b.Port, ID: b.NodeID}
	}
	for _, t := range meta.Topics {
		parts := make(map[int32]protocol.Partition, len(t.Partitions))
		for _, p := range t.Partitions {
			parts[p.PartitionIndex] = protocol.Partition{
				ID:       p.PartitionIndex,
				Error:    p.ErrorCode,
				Leader:   p.LeaderID,
				Replicas: p.ReplicaNodes,
				ISR:      p.IsrNodes,
				Offline:  p.OfflineReplicas,
			}
		}
		layout.Topics[t.Name] = protocol.Topic{Name: t.Name, Error: t.ErrorCode, Partitions: parts}
	}

	// Randomized so that clients started together do not refresh together.
	life := ttl/2 + time.Duration(rand.Int63n(int64(ttl/2)+1))
	return &clusterState{meta: &meta, layout: layout, started: started, expires: started.Add(life)}
}

// updateBrokers makes the broker pools match the layout. cl.mu must be held.
func (cl *cluster) updateBrokers(layout protocol.Cluster) {
	for id, p := range cl.brokers {
		b, ok := layout.Brokers[id]
		if !ok || b.Host != p.broker.Host || int(b.Port) != p.broker.Port || b.Rack != p.broker.Rack {
			delete(cl.brokers, id)
			go p.closeIdle()
		}
	}
	for id, b := range layout.Brokers {
		if _, ok := cl.brokers[id]; ok {
			continue
		}
		kb := Broker{Host: b.Host, Port: int(b.Port), ID: int(b.ID), Rack: b.Rack}
		cl.brokers[id] = newConnPool(cl.ctx, &cl.cfg, cl.idleTimeout, cl.resolver, kb, "tcp",
			net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))))
	}
}

func (cl *cluster) brokerPool(id int32) *connPool {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.brokers[id]
}

// roundTrip sends req to the broker that must handle it.
func (cl *cluster) roundTrip(ctx context.Context, req Request) (Response, error) {
	if m, ok := req.(*metadata.Request); ok {
		return cl.metadata(ctx, m)
	}
	cl.useTopicsOf(req)
	start := time.Now()
	s, err := cl.getState(ctx, time.Time{})
	if err != nil {
		return nil, err
	}
	var res Response
	if m, ok := req.(protocol.Splitter); ok {
		res, err = cl.split(ctx, m, s, start)
	} else {
		res, err = cl.send(ctx, req, s, start)
	}
	if err != nil {
		return res, err
	}

	switch r := res.(type) {
	case *createtopics.Response:
		var created []string
		for _, t := range r.Topics {
			if t.ErrorCode == 0 {
				created = append(created, t.Name)
			}
		}
		cl.useTopics(created)
		cl.waitForTopics(ctx, created)
	case *deletetopics.Response, *createpartitions.Response:
		cl.invalidate()
	}
	return res, nil
}

func (cl *cluster) split(ctx context.Context, m protocol.Splitter, s *clusterState, start time.Time) (Response, error) {
	msgs, merger, err := m.Split(s.layout)
	if err != nil {
		return nil, err
	}
	results := make([]interface{}, len(msgs))
	var wg sync.WaitGroup
	for i, msg := range msgs {
		wg.Add(1)
		go func(i int, msg Request) {
			defer wg.Done()
			r, err := cl.send(ctx, msg, s, start)
			if err != nil {
				results[i] = err
			} else {
				results[i] = r
			}
		}(i, msg)
	}
	wg.Wait()
	return merger.Merge(msgs, results)
}

// send routes one (unsplit) request and sends it.
func (cl *cluster) send(ctx context.Context, req Request, s *clusterState, start time.Time) (Response, error) {
	var pool *connPool
	var coord *coordinatorKey

	switch m := req.(type) {
	case protocol.BrokerMessage:
		var err error
		if pool, s, err = cl.leaderPool(ctx, m, s, start); err != nil {
			return nil, err
		}
	case protocol.GroupMessage:
		coord = &coordinatorKey{key: m.Group(), keyType: int8(CoordinatorKeyTypeConsumer)}
	case protocol.TransactionalMessage:
		// Without a transactional ID (InitProducerId for an idempotent
		// producer) any broker answers; there is no coordinator to find.
		if id := m.Transaction(); id != "" {
			coord = &coordinatorKey{key: id, keyType: int8(CoordinatorKeyTypeTransaction)}
		}
	}
	if coord != nil {
		id, err := cl.coordinator(ctx, *coord, s, start)
		if err != nil {
			return nil, err
		}
		if pool = cl.brokerPool(id); pool == nil {
			cl.forgetCoordinator(*coord)
			return nil, BrokerNotAvailable
		}
	}
	if pool == nil {
		// Sent to any broker; kept off the broker pools so that control
		// requests do not queue behind produce and fetch traffic.
		pool = cl.seed
	}

	if slot, ok := ctx.Value(settleSlotKey{}).(*settleSlot); ok {
		slot.cl = cl // see settleSlot
	}
	res, sent, err := pool.tryRoundTrip(ctx, req)
	if err != nil && !sent && pool == cl.seed && ctx.Err() == nil && !isAuthError(err) {
		// The bootstrap servers cannot be reached, but any broker will
		// do: try the others the cluster told us about.
		for _, p := range cl.otherBrokers(s) {
			if res, sent, err = p.tryRoundTrip(ctx, req); err == nil || sent || ctx.Err() != nil {
				break
			}
		}
	}
	if err != nil {
		if ctx.Err() == nil && !isRequestError(err) {
			// The broker went away: it may no longer lead anything.
			cl.invalidate()
			if coord != nil {
				cl.forgetCoordinator(*coord)
			}
		}
		return nil, err
	}
	if res != nil {
		leader, notCoord := scanErrorCodes(res)
		if leader {
			cl.invalidate()
		}
		if notCoord && coord != nil {
			cl.forgetCoordinator(*coord)
		}
	}
	return res, nil
}

// leaderPool returns the pool of the broker m must go to (nil for any
// broker), looking again with fresh metadata, once, when the layout may
// just be out of date (a new topic, a leader moved); s is the state it
// used.
func (cl *cluster) leaderPool(ctx context.Context, m protocol.BrokerMessage, s *clusterState, start time.Time) (*connPool, *clusterState, error) {
	b, err := m.Broker(s.layout)
	if err != nil || b.ID < 0 || cl.brokerPool(b.ID) == nil {
		if s2, err2 := cl.getState(ctx, start); err2 == nil && s2 != s {
			s = s2
			b, err = m.Broker(s.layout)
		}
	}
	if err != nil {
		return nil, s, err
	}
	if b.ID < 0 {
		return nil, s, nil
	}
	pool := cl.brokerPool(b.ID)
	if pool == nil {
		return nil, s, BrokerNotAvailable
	}
	return pool, s, nil
}

// lease checks out a connection of its own to the broker req must go to
// (the leader of its partitions), for a holder that writes the request
// and reads the response itself (see connLease). A connection that cannot
// be leased invalidates the metadata, as a failed round trip does.
func (t *Transport) lease(ctx context.Context, addr net.Addr, req protocol.BrokerMessage) (*connLease, error) {
	cl, pool, err := t.route(ctx, addr, req)
	if err != nil {
		return nil, err
	}
	l, err := cl.leaseFrom(ctx, pool)
	if err != nil {
		cl.leave()
		return nil, err
	}
	l.cl = cl
	return l, nil
}

// route returns the cluster of addr, entered (the caller leaves it), and
// the pool of the broker req goes to (the seed pool when any broker will
// do): for lease, and for a holder that keeps its own connection to each
// broker it writes to (the Writer's acks=0 lanes, writer_acks_none_lanes.go).
func (t *Transport) route(ctx context.Context, addr net.Addr, req protocol.BrokerMessage) (*cluster, *connPool, error) {
	if err := t.context().Err(); err != nil {
		return nil, nil, err
	}
	cl := t.grabCluster(addr)
	pool, err := cl.route(ctx, req)
	if err != nil {
		cl.leave()
		return nil, nil, err
	}
	return cl, pool, nil
}

// route returns the pool of the broker req must go to (the leader of its
// partitions; the seed pool when any broker will do).
func (cl *cluster) route(ctx context.Context, req protocol.BrokerMessage) (*connPool, error) {
	cl.useTopicsOf(req)
	start := time.Now()
	s, err := cl.getState(ctx, time.Time{})
	if err != nil {
		return nil, err
	}
	pool, _, err := cl.leaderPool(ctx, req, s, start)
	if err != nil {
		return nil, err
	}
	if pool == nil {
		pool = cl.seed
	}
	return pool, nil
}

// leaseFrom checks out a connection of pool, one of cl's; one that cannot
// be had invalidates the metadata, as a failed round trip does.
func (cl *cluster) leaseFrom(ctx context.Context, pool *connPool) (*connLease, error) {
	l, err := pool.lease(ctx)
	if err != nil {
		if ctx.Err() == nil && !isRequestError(err) {
			cl.invalidate() // the broker went away
		}
		return nil, err
	}
	return l, nil
}

// otherBrokers returns the pools of the brokers of the layout, in random
// order.
func (cl *cluster) otherBrokers(s *clusterState) []*connPool {
	ids := s.layout.BrokerIDs()
	rand.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	pools := make([]*connPool, 0, len(ids))
	for _, id := range ids {
		if p := cl.brokerPool(id); p != nil {
			pools = append(pools, p)
		}
	}
	return pools
}

// isRequestError tells errors about the request itself (it could not be
// encoded, the broker does not support it), which say nothing about the
// state of the cluster.
func isRequestError(err error) bool {
	return errors.Is(err, protocol.ErrNoVersionOverlap) || errors.Is(err, protocol.ErrNoRecord)
}

// metadata answers a Metadata request from the cache, like the original
// transport does, except that topics missing from the cache cause one
// refresh first (they may have just been created elsewhere), and that a
// request for all topics goes to a broker unless MetadataTopics limits the
// cache (the cache holds the topics in use; transport_topics.go).
func (cl *cluster) metadata(ctx context.Context, req *metadata.Request) (Response, error) {
	names := req.TopicNames
	if names == nil && req.Topics != nil {
		names = make([]string, len(req.Topics))
		for i, t := range req.Topics {
			names[i] = t.Name
		}
	}
	if names != nil && cl.metadataTopics == nil && !req.AllowAutoTopicCreation && lookupAside(ctx) {
		cl.mu.Lock()
		s := cl.state
		cl.mu.Unlock()
		if s != nil && missingTopics(s, names) {
			return cl.send(ctx, req, s, time.Now())
		}
	}
	cl.useTopics(names)
	s, err := cl.getState(ctx, time.Time{})
	if err != nil {
		return nil, err
	}
	if names == nil && cl.metadataTopics == nil {
		return cl.send(ctx, req, s, time.Now())
	}
	if missingTopics(s, cl.cacheable(names)) && !req.AllowAutoTopicCreation && time.Since(s.started) > 200*time.Millisecond {
		if s2, err := cl.getState(ctx, time.Now()); err == nil {
			s = s2
		}
	}
	if req.AllowAutoTopicCreation && missingTopics(s, names) {
		// Only a real request creates the topics.
		m, err := cl.send(ctx, req, s, time.Now())
		if err != nil {
			return nil, err
		}
		var created []string
		for _, t := range m.(*metadata.Response).Topics {
			if t.ErrorCode == 0 {
				created = append(created, t.Name)
			}
		}
		cl.useTopics(created)
		cl.waitForTopics(ctx, created)
		return m, nil
	}
	return filterMetadata(s.meta, names), nil
}

// cacheable keeps the topics that the cached metadata can list: all, unless
// MetadataTopics restricts them.
func (cl *cluster) cacheable(topics []string) []string {
	if cl.metadataTopics == nil {
		return topics
	}
	var out []string
	for _, name := range topics {
		for _, m := range cl.metadataTopics {
			if m == name {
				out = append(out, name)
				break
			}
		}
	}
	return out
}

// missingTopics reports whether the cached state lacks one of the topics,
// or knows it only as one the cluster did not have when asked.
func missingTopics(s *clusterState, names []string) bool {
	for _, name := range names {
		if t, ok := s.layout.Topics[name]; !ok || t.Error == int16(UnknownTopicOrPartition) {
			return true
		}
	}
	return false
}

// filterMetadata copies the cached response, keeping the requested topics
// (all for nil) in the requested order; unknown topics get the error code
// UNKNOWN_TOPIC_OR_PARTITION.
func filterMetadata(meta *metadata.Response, names []string) *metadata.Response {
	res := *meta
	res.Brokers = append([]metadata.ResponseBroker(nil), meta.Brokers...)
	if names == nil {
		res.Topics = append([]metadata.ResponseTopic(nil), meta.Topics...)
		return &res
	}
	res.Topics = make([]metadata.ResponseTopic, len(names))
	for i, name := range names {
		j := sort.Search(len(meta.Topics), func(j int) bool { return meta.Topics[j].Name >= name })
		if j < len(meta.Topics) && meta.Topics[j].Name == name {
			res.Topics[i] = meta.Topics[j]
		} else {
			res.Topics[i] = metadata.ResponseTopic{Name: name, ErrorCode: int16(UnknownTopicOrPartition)}
		}
	}
	return &res
}

// waitForTopics refreshes the metadata until it lists the topics: creating
// a topic takes effect asynchronously, and requests sent before the
// metadata shows it would fail. It gives up when ctx ends or after a while.
func (cl *cluster) waitForTopics(ctx context.Context, topics []string) {
	topics = cl.cacheable(topics)
	if len(topics) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for attempt := 1; ; attempt++ {
		s, err := cl.getState(ctx, time.Now())
		if err == nil && !missingTopics(s, topics) {
			return
		}
		if !sleep(ctx, backoff(attempt, 50*time.Millisecond, time.Second)) {
			return
		}
	}
}
