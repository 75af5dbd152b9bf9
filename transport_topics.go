package kafka

import (
	"sort"
	"time"

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
	next := make(map[string]struct{}, len(topics)+4)
	if old != nil {
		for name := range *old {
			next[name] = struct{}{}
		}
	}
	for _, name := range topics {
		next[name] = struct{}{}
	}
	cl.wanted.Store(&next)
	cl.widenedAt = time.Now()
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
	names := []string{}
	if in := cl.wanted.Load(); in != nil {
		for name := range *in {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}
