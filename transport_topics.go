package kafka

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/segmentio/kafka-go/protocol/metadata"

	"github.com/segmentio/kafka-go/protocol/fetch"
	"github.com/segmentio/kafka-go/protocol/listoffsets"
	"github.com/segmentio/kafka-go/protocol/produce"
	"github.com/segmentio/kafka-go/protocol/rawproduce"
)

// The topics a cluster's cached metadata covers. Without MetadataTopics it
// asks for the topics the program uses (those named by the requests sent
// through the Transport), not for every topic of the cluster: on a cluster
// of thousands of partitions, refreshing all of them costs a Writer or a
// Reader that uses one topic a response, its decoding and its layout of
// everything, every MetadataTTL, and memory for all of it. A topic joins the
// set when a request first names it, and the request then waits for a
// refresh that includes it, as for a topic missing from the cache. A
// Metadata request for all topics (no names) is sent to a broker instead of
// being answered from the cache.
//
// Taking topics into use one after another (a Writer writing to 1000
// topics) must not make each new topic a refresh of all the topics in use
// so far: while the cached state is fresh and was not invalidated, the
// refresh asks for the new topics alone and adds them to it.

// A Writer looks up the partition count of a topic before its first
// message to it, one topic at a time when messages go to topics in turn.
// Taking each into use there made each a refresh, and each refresh a copy
// of the cached state (about 400 us of CPU per topic at 1000 topics). So
// such a lookup (marked by withLookupAside) goes to a broker as it is when
// the cache lacks one of its topics, and leaves the set of topics in use
// alone: the first Produce request that names them takes them into use,
// all those of the request in one refresh.

type lookupAsideKey struct{}

// withLookupAside marks ctx's Metadata lookups as ones to send aside.
func withLookupAside(ctx context.Context) context.Context {
	return context.WithValue(ctx, lookupAsideKey{}, true)
}

func lookupAside(ctx context.Context) bool {
	v, _ := ctx.Value(lookupAsideKey{}).(bool)
	return v
}

// useTopics adds the topics named by topics to the set the metadata covers,
// and, when one is new, makes the next lookup of the cluster's state wait
// for a refresh that includes it.
func (cl *cluster) useTopics(topics []string) {
	if cl.metadataTopics != nil || len(topics) == 0 {
		return
	}
	if in := cl.wanted.Load(); in != nil && containsAll(*in, topics) {
		return
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	old := cl.wanted.Load()
	if old != nil && containsAll(*old, topics) {
		return
	}
	// A clone copies the map's table as it is, rather than inserting
	// every name again: a Writer taking 1000 topics into use one by one
	// clones it 1000 times.
	var next map[string]struct{}
	if old != nil {
		next = maps.Clone(*old)
	} else {
		next = make(map[string]struct{}, len(topics))
	}
	for _, name := range topics {
		if _, ok := next[name]; ok {
			continue
		}
		next[name] = struct{}{}
		i, _ := slices.BinarySearch(cl.wantedNames, name)
		cl.wantedNames = slices.Insert(cl.wantedNames, i, name)
	}
	cl.wanted.Store(&next)
	if cl.state == nil || missingTopics(cl.state, topics) {
		cl.widenedAt = time.Now()
	}
}

func containsAll(set map[string]struct{}, names []string) bool {
	for _, name := range names {
		if _, ok := set[name]; !ok {
			return false
		}
	}
	return true
}

// useTopicsOf adds the topics req is routed by (the requests sent to the
// leader of their partitions) to the set the metadata covers.
func (cl *cluster) useTopicsOf(req any) {
	if cl.metadataTopics != nil {
		return
	}
	var one [1]string
	names := one[:0]
	add := func(name string) {
		if len(names) == 0 || names[len(names)-1] != name {
			names = append(names, name)
		}
	}
	switch r := req.(type) {
	case *produce.Request:
		for i := range r.Topics {
			add(r.Topics[i].Topic)
		}
	case *rawproduce.Request:
		for i := range r.Topics {
			add(r.Topics[i].Topic)
		}
	case *fetch.Request:
		for i := range r.Topics {
			add(r.Topics[i].Topic)
		}
	case *listoffsets.Request:
		for i := range r.Topics {
			add(r.Topics[i].Topic)
		}
	default:
		return
	}
	cl.useTopics(names)
}

// refreshTopicsLocked is the topic list of the next Metadata request:
// MetadataTopics when set, otherwise the topics in use (an empty list, not
// nil, when there are none yet: the brokers alone). cl.mu must be held.
func (cl *cluster) refreshTopicsLocked() []string {
	if cl.metadataTopics != nil {
		return append([]string{}, cl.metadataTopics...)
	}
	return append([]string{}, cl.wantedNames...)
}

// narrowRefreshLocked returns what a refresh about to start asks for: only
// the topics the fresh cached state lacks, with that state to merge the
// answer into, when it can; otherwise topics, with nothing to merge into.
// cl.mu must be held.
func (cl *cluster) narrowRefreshLocked(topics []string, now time.Time) ([]string, *clusterState) {
	s := cl.state
	if s == nil || cl.metadataTopics != nil || !now.Before(s.expires) || cl.invalidatedAt.After(s.started) {
		return topics, nil
	}
	var missing []string
	for _, name := range topics {
		if _, ok := s.layout.Topics[name]; !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 || len(missing) == len(topics) {
		return topics, nil
	}
	return missing, s
}

// mergeClusterState returns old with the topics of add (an answer about
// topics old lacks) added, and the brokers of add; it expires when old
// does, so the periodic refresh of every topic in use keeps its pace.
func mergeClusterState(old, add *clusterState) *clusterState {
	meta := *add.meta
	meta.Topics = make([]metadata.ResponseTopic, 0, len(old.meta.Topics)+len(add.meta.Topics))
	a, b := old.meta.Topics, add.meta.Topics
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(b) == 0 || (len(a) > 0 && a[0].Name < b[0].Name):
			meta.Topics, a = append(meta.Topics, a[0]), a[1:]
		case len(a) > 0 && a[0].Name == b[0].Name:
			meta.Topics, a, b = append(meta.Topics, b[0]), a[1:], b[1:]
		default:
			meta.Topics, b = append(meta.Topics, b[0]), b[1:]
		}
	}
	layout := add.layout
	layout.Topics = maps.Clone(old.layout.Topics)
	for name, t := range add.layout.Topics {
		layout.Topics[name] = t
	}
	return &clusterState{meta: &meta, layout: layout, started: add.started, expires: old.expires}
}
