// Package rawproduce holds a Produce request whose record sets are already
// encoded (protocol.RawRecordSet), so that they are written as they are. It
// is registered as an override of the Produce API and shares its response.
package rawproduce

import (
	"fmt"

	"github.com/segmentio/kafka-go/internal/leaders"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/produce"
)

func init() {
	req := &Request{}
	protocol.RegisterOverride(req, &produce.Response{}, req.TypeKey())
}

// Request has the layout of produce.Request, versions included.
type Request struct {
	_ struct{} `kafka:"versions=v0-11,flexible=v9"`

	TransactionalID string         `kafka:"v3+,nullable"`
	Acks            int16          `kafka:"v0+"`
	Timeout         int32          `kafka:"v0+"`
	Topics          []RequestTopic `kafka:"v0+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.Produce }

// TypeKey selects the raw encoding registered by this package.
func (r *Request) TypeKey() protocol.OverrideTypeKey { return protocol.RawProduceOverride }

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

// HasResponse reports whether the broker answers: not with acks=0.
func (r *Request) HasResponse() bool { return r.Acks != 0 }

type RequestTopic struct {
	Topic      string             `kafka:"v0+"`
	Partitions []RequestPartition `kafka:"v0+"`
}

type RequestPartition struct {
	Partition int32                 `kafka:"v0+"`
	RecordSet protocol.RawRecordSet `kafka:"v0+,nullable"`
}

var (
	_ protocol.BrokerMessage       = (*Request)(nil)
	_ protocol.OverrideTypeMessage = (*Request)(nil)
)

// Error wraps the errors of routing a raw produce request.
type Error struct {
	Err error
}

func NewError(err error) *Error { return &Error{Err: err} }

// The message says "fetch" because upstream's does; programs may match on it.
func (e *Error) Error() string { return fmt.Sprintf("fetch request error: %v", e.Err) }

func (e *Error) Unwrap() error { return e.Err }
