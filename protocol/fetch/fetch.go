// Package fetch holds the Fetch messages (API key 1), which read record
// batches from partition leaders. We stop at v12: v13 and later name topics
// by ID only.
package fetch

import (
	"fmt"

	"github.com/segmentio/kafka-go/internal/leaders"
	"github.com/segmentio/kafka-go/protocol"
)

func init() {
	protocol.Register(&Request{}, &Response{})
}

// Request reads from partitions that must all be led by the same broker
// (Broker fails otherwise).
type Request struct {
	_ struct{} `kafka:"versions=v0-12,flexible=v12"`

	ClusterID       string                  `kafka:"v12+,nullable,tag=0"`
	ReplicaID       int32                   `kafka:"v0+"`
	MaxWaitTime     int32                   `kafka:"v0+"`
	MinBytes        int32                   `kafka:"v0+"`
	MaxBytes        int32                   `kafka:"v3+"`
	IsolationLevel  int8                    `kafka:"v4+"`
	SessionID       int32                   `kafka:"v7+"`
	SessionEpoch    int32                   `kafka:"v7+"`
	Topics          []RequestTopic          `kafka:"v0+"`
	ForgottenTopics []RequestForgottenTopic `kafka:"v7+"`
	RackID          string                  `kafka:"v11+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.Fetch }

// Broker returns the leader of the request's partitions, which must all be
// led by the same broker.
func (r *Request) Broker(cluster protocol.Cluster) (protocol.Broker, error) {
	var c leaders.Common
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			if err := c.Add(cluster, t.Topic, p.Partition); err != nil {
				return protocol.Broker{ID: -1}, NewError(err)
			}
		}
	}
	return c.Broker(), nil
}

// Prepare sends a zero LastFetchedEpoch as -1 ("unknown"). The field is new
// in v12 and absent from upstream's API, so callers written against that API
// leave it zero; but a broker given epoch 0 checks the fetch offset against
// the end of epoch 0 and, once the leader epoch moved on, answers with a
// diverging epoch and no records. Epoch 0 therefore cannot be sent.
func (r *Request) Prepare(apiVersion int16) {
	if apiVersion < 12 {
		return
	}
	for i := range r.Topics {
		parts := r.Topics[i].Partitions
		for j := range parts {
			if parts[j].LastFetchedEpoch == 0 {
				parts[j].LastFetchedEpoch = -1
			}
		}
	}
}

type RequestTopic struct {
	Topic      string             `kafka:"v0+"`
	Partitions []RequestPartition `kafka:"v0+"`
}

type RequestPartition struct {
	Partition          int32 `kafka:"v0+"`
	CurrentLeaderEpoch int32 `kafka:"v9+"`
	FetchOffset        int64 `kafka:"v0+"`
	LastFetchedEpoch   int32 `kafka:"v12+"`
	LogStartOffset     int64 `kafka:"v5+"`
	PartitionMaxBytes  int32 `kafka:"v0+"`
}

type RequestForgottenTopic struct {
	Topic      string  `kafka:"v7+"`
	Partitions []int32 `kafka:"v7+"`
}

type Response struct {
	_ struct{} `kafka:"versions=v0-12,flexible=v12"`

	ThrottleTimeMs int32           `kafka:"v1+"`
	ErrorCode      int16           `kafka:"v7+"`
	SessionID      int32           `kafka:"v7+"`
	Topics         []ResponseTopic `kafka:"v0+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.Fetch }

type ResponseTopic struct {
	Topic      string              `kafka:"v0+"`
	Partitions []ResponsePartition `kafka:"v0+"`
}

type ResponsePartition struct {
	Partition        int32 `kafka:"v0+"`
	ErrorCode        int16 `kafka:"v0+"`
	HighWatermark    int64 `kafka:"v0+"`
	LastStableOffset int64 `kafka:"v4+"`
	LogStartOffset   int64 `kafka:"v5+"`

	// Tagged fields of v12+: where a follower's log diverged, the new leader
	// when the broker is not it, and the snapshot to fetch instead. A field
	// the broker left out decodes as the spec's default, -1 in every member,
	// and a field holding that default is not sent.
	DivergingEpoch ResponseEpochEndOffset `kafka:"v12+,tag=0"`
	CurrentLeader  ResponseLeader         `kafka:"v12+,tag=1"`
	SnapshotID     ResponseSnapshotID     `kafka:"v12+,tag=2"`

	AbortedTransactions  []ResponseTransaction `kafka:"v4+,nullable"`
	PreferredReadReplica int32                 `kafka:"v11+"`
	RecordSet            protocol.RecordSet    `kafka:"v0+,nullable"`
}

type ResponseTransaction struct {
	ProducerID  int64 `kafka:"v4+"`
	FirstOffset int64 `kafka:"v4+"`
}

type ResponseEpochEndOffset struct {
	Epoch     int32 `kafka:"v12+,default=-1"`
	EndOffset int64 `kafka:"v12+,default=-1"`
}

type ResponseLeader struct {
	LeaderID    int32 `kafka:"v12+,default=-1"`
	LeaderEpoch int32 `kafka:"v12+,default=-1"`
}

type ResponseSnapshotID struct {
	EndOffset int64 `kafka:"v12+,default=-1"`
	Epoch     int32 `kafka:"v12+,default=-1"`
}

var (
	_ protocol.BrokerMessage   = (*Request)(nil)
	_ protocol.PreparedMessage = (*Request)(nil)
)

// Error wraps the errors of routing a fetch request.
type Error struct {
	Err error
}

func NewError(err error) *Error { return &Error{Err: err} }

func (e *Error) Error() string { return fmt.Sprintf("fetch request error: %v", e.Err) }

func (e *Error) Unwrap() error { return e.Err }
