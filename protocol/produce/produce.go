// Package produce holds the Produce messages (API key 0), which append record
// batches to partitions and go to the leader of those partitions.
package produce

import (
	"fmt"

	"github.com/segmentio/kafka-go/internal/leaders"
	"github.com/segmentio/kafka-go/protocol"
)

func init() {
	protocol.Register(&Request{}, &Response{})
}

// Request appends records to partitions that must all be led by the same
// broker (Broker fails otherwise).
type Request struct {
	_ struct{} `kafka:"versions=v0-11,flexible=v9"`

	TransactionalID string         `kafka:"v3+,nullable"`
	Acks            int16          `kafka:"v0+"`
	Timeout         int32          `kafka:"v0+"`
	Topics          []RequestTopic `kafka:"v0+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.Produce }

// ErrMismatchingLeaders is the error of a request whose partitions are not
// all led by one broker, as far as the cluster's metadata says.
var ErrMismatchingLeaders = leaders.ErrMismatching

// Broker returns the leader of the request's partitions.
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

// Prepare picks the record batch format for record sets that do not name
// one: brokers reject message format v2 below Produce v3 and the legacy
// formats from v3 on.
func (r *Request) Prepare(apiVersion int16) {
	format := int8(2)
	if apiVersion < 3 {
		format = 1
	}
	for i := range r.Topics {
		parts := r.Topics[i].Partitions
		for j := range parts {
			if parts[j].RecordSet.Version == 0 {
				parts[j].RecordSet.Version = format
			}
		}
	}
}

// HasResponse reports whether the broker answers the request: it does not
// when no acknowledgement was asked for.
func (r *Request) HasResponse() bool { return r.Acks != 0 }

type RequestTopic struct {
	Topic      string             `kafka:"v0+"`
	Partitions []RequestPartition `kafka:"v0+"`
}

type RequestPartition struct {
	Partition int32              `kafka:"v0+"`
	RecordSet protocol.RecordSet `kafka:"v0+,nullable"`
}

type Response struct {
	_ struct{} `kafka:"versions=v0-11,flexible=v9"`

	Topics         []ResponseTopic `kafka:"v0+"`
	ThrottleTimeMs int32           `kafka:"v1+"`

	// NodeEndpoints describes the brokers named as new leaders in
	// ResponsePartition.CurrentLeader (v10+).
	NodeEndpoints []ResponseNodeEndpoint `kafka:"v10+,tag=0"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.Produce }

type ResponseTopic struct {
	Topic      string              `kafka:"v0+"`
	Partitions []ResponsePartition `kafka:"v0+"`
}

type ResponsePartition struct {
	Partition      int32           `kafka:"v0+"`
	ErrorCode      int16           `kafka:"v0+"`
	BaseOffset     int64           `kafka:"v0+"`
	LogAppendTime  int64           `kafka:"v2+"`
	LogStartOffset int64           `kafka:"v5+"`
	RecordErrors   []ResponseError `kafka:"v8+"`
	ErrorMessage   string          `kafka:"v8+,nullable"`

	// CurrentLeader is set (v10+) when the request went to a broker that is
	// no longer the leader. Left out by the broker, it decodes as the spec's
	// default {-1, -1}, which is also the value that is not sent.
	CurrentLeader ResponseCurrentLeader `kafka:"v10+,tag=0"`
}

type ResponseError struct {
	BatchIndex             int32  `kafka:"v8+"`
	BatchIndexErrorMessage string `kafka:"v8+,nullable"`
}

// ResponseCurrentLeader is the leader a partition moved to.
type ResponseCurrentLeader struct {
	LeaderID    int32 `kafka:"v10+,default=-1"`
	LeaderEpoch int32 `kafka:"v10+,default=-1"`
}

// ResponseNodeEndpoint is the address of a broker.
type ResponseNodeEndpoint struct {
	NodeID int32  `kafka:"v10+"`
	Host   string `kafka:"v10+"`
	Port   int32  `kafka:"v10+"`
	Rack   string `kafka:"v10+,nullable"`
}

var (
	_ protocol.BrokerMessage   = (*Request)(nil)
	_ protocol.PreparedMessage = (*Request)(nil)
)

// Error wraps the errors of routing a produce request.
type Error struct {
	Err error
}

func NewError(err error) *Error { return &Error{Err: err} }

// The message says "fetch" because upstream's does; programs may match on it.
func (e *Error) Error() string { return fmt.Sprintf("fetch request error: %v", e.Err) }

func (e *Error) Unwrap() error { return e.Err }
