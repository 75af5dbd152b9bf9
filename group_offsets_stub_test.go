package kafka

import (
	"github.com/segmentio/kafka-go/protocol/offsetcommit"
	"github.com/segmentio/kafka-go/protocol/offsetfetch"
)

// The answers the unit tests' group coordinators give to offset requests.

// offsetFetchAnswer answers r with the offsets in committed (-1 for a
// partition without one; committed may be nil).
func offsetFetchAnswer(r *offsetfetch.Request, committed map[int32]int64) *offsetfetch.Response {
	res := &offsetfetch.Response{}
	for _, t := range r.Topics {
		rt := offsetfetch.ResponseTopic{Name: t.Name}
		for _, p := range t.PartitionIndexes {
			off, ok := committed[p]
			if !ok {
				off = -1
			}
			rt.Partitions = append(rt.Partitions, offsetfetch.ResponsePartition{PartitionIndex: p, CommittedOffset: off})
		}
		res.Topics = append(res.Topics, rt)
	}
	return res
}

// offsetCommitAnswer answers every partition of r with code, and, when
// record is set, hands it each partition's committed offset.
func offsetCommitAnswer(r *offsetcommit.Request, code int16, record func(partition int32, offset int64)) *offsetcommit.Response {
	res := &offsetcommit.Response{}
	for _, t := range r.Topics {
		rt := offsetcommit.ResponseTopic{Name: t.Name}
		for _, p := range t.Partitions {
			if record != nil {
				record(p.PartitionIndex, p.CommittedOffset)
			}
			rt.Partitions = append(rt.Partitions, offsetcommit.ResponsePartition{PartitionIndex: p.PartitionIndex, ErrorCode: code})
		}
		res.Topics = append(res.Topics, rt)
	}
	return res
}
