package kafka

import (
	"context"
	"encoding"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	produceAPI "github.com/segmentio/kafka-go/protocol/produce"
)

// RequiredAcks is how many replicas must acknowledge a produce request
// before the broker answers it.
type RequiredAcks int

const (
	RequireNone RequiredAcks = 0
	RequireOne  RequiredAcks = 1
	RequireAll  RequiredAcks = -1
)

var requiredAcksNames = map[RequiredAcks]string{
	RequireNone: "none",
	RequireOne:  "one",
	RequireAll:  "all",
}

func (acks RequiredAcks) String() string {
	if name, ok := requiredAcksNames[acks]; ok {
		return name
	}
	return "unknown"
}

// MarshalText encodes acks as "none", "one" or "all" (or "unknown").
func (acks RequiredAcks) MarshalText() ([]byte, error) {
	return []byte(acks.String()), nil
}

// UnmarshalText accepts the names produced by MarshalText as well as the
// numbers 0, 1 and -1.
func (acks *RequiredAcks) UnmarshalText(b []byte) error {
	s := string(b)
	for _, v := range [...]RequiredAcks{RequireNone, RequireOne, RequireAll} {
		if s == v.String() {
			*acks = v
			return nil
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err == nil {
		switch v := RequiredAcks(n); v {
		case RequireNone, RequireOne, RequireAll:
			*acks = v
			return nil
		}
	}
	return fmt.Errorf("required acks must be one of none, one, or all, not %q", b)
}

var (
	_ encoding.TextMarshaler   = RequiredAcks(0)
	_ encoding.TextUnmarshaler = (*RequiredAcks)(nil)
)

// ProduceRequest is a request to append records to one partition.
type ProduceRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr

	// Topic and Partition are where the records are appended.
	Topic     string
	Partition int

	// RequiredAcks is how many replicas must store the records before the
	// broker answers.
	RequiredAcks RequiredAcks

	// MessageVersion is ignored: the record format is the one matching the
	// Produce version negotiated with the broker.
	MessageVersion int

	// TransactionalID is set when producing within a transaction.
	TransactionalID string

	// Records are the records to append.
	Records RecordReader

	// Compression is the codec the record batch is compressed with.
	Compression Compression
}

// ProduceResponse is the broker's answer to a ProduceRequest.
type ProduceResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Error is the error the broker reported for the partition, carrying the
	// kafka error code (test it with errors.Is) and the broker's message.
	Error error

	// BaseOffset is the offset of the first record appended.
	BaseOffset int64

	// LogAppendTime is when the broker appended the records, when the topic
	// uses broker-side timestamps.
	LogAppendTime time.Time

	// LogStartOffset is the first offset of the partition (Produce v5+).
	LogStartOffset int64

	// RecordErrors maps the index of records the broker rejected to the
	// reason (Produce v8+).
	RecordErrors map[int]error
}

// Produce appends records to a partition.
//
// A request with no records gets an empty response and no error. With
// RequiredAcks set to RequireNone the broker sends no answer, and both the
// response and the error are nil on success.
func (c *Client) Produce(ctx context.Context, req *ProduceRequest) (*ProduceResponse, error) {
	records, ok, err := peekRecords(req.Records)
	if err != nil {
		return nil, clientError("Produce", err)
	}
	if !ok {
		// Nothing to send, and brokers reject empty record sets.
		return new(ProduceResponse), nil
	}
	// MessageVersion is not used: the format must match the Produce
	// version, which is only known once connected.
	part := produceAPI.RequestPartition{Partition: int32(req.Partition)}
	part.RecordSet.Attributes = protocol.Attributes(req.Compression) & 7
	part.RecordSet.Records = records
	msg := &produceAPI.Request{TransactionalID: req.TransactionalID, Acks: int16(req.RequiredAcks)}
	msg.Timeout = c.timeoutMs(ctx, defaultProduceTimeout)
	msg.Topics = []produceAPI.RequestTopic{{Topic: req.Topic, Partitions: []produceAPI.RequestPartition{part}}}
	m, err := c.roundTrip(ctx, req.Addr, msg)
	return produceResponseOf("Produce", req.RequiredAcks, m, err)
}

// produceResponseOf turns the answer to a Produce request (raw or not) into a
// ProduceResponse.
func produceResponseOf(method string, acks RequiredAcks, m protocol.Message, err error) (*ProduceResponse, error) {
	switch {
	case errors.Is(err, protocol.ErrNoRecord):
		return new(ProduceResponse), nil
	case err != nil:
		return nil, clientError(method, err)
	case acks == RequireNone:
		return nil, nil // the broker does not answer
	}
	res, ok := m.(*produceAPI.Response)
	if !ok {
		return nil, clientError(method, fmt.Errorf("unexpected response of type %T", m))
	}
	var p *produceAPI.ResponsePartition
	for i := range res.Topics {
		if len(res.Topics[i].Partitions) > 0 {
			p = &res.Topics[i].Partitions[0]
			break
		}
	}
	if p == nil {
		if len(res.Topics) == 0 {
			return nil, clientError(method, protocol.ErrNoTopic)
		}
		return nil, clientError(method, protocol.ErrNoPartition)
	}
	out := new(ProduceResponse)
	out.Throttle = makeDuration(res.ThrottleTimeMs)
	out.Error = makeError(p.ErrorCode, p.ErrorMessage)
	out.BaseOffset, out.LogStartOffset = p.BaseOffset, p.LogStartOffset
	out.LogAppendTime = makeTime(p.LogAppendTime)
	for _, e := range p.RecordErrors {
		if out.RecordErrors == nil {
			out.RecordErrors = make(map[int]error, len(p.RecordErrors))
		}
		out.RecordErrors[int(e.BatchIndex)] = errors.New(e.BatchIndexErrorMessage)
	}
	return out, nil
}

// peekRecords reads the first record of r, returning a reader that yields
// it again followed by the rest; ok is false when r holds no record.
func peekRecords(r RecordReader) (RecordReader, bool, error) {
	if r == nil {
		return nil, false, nil
	}
	first, err := r.ReadRecord()
	if errors.Is(err, io.EOF) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return &replayRecords{first: first, rest: r}, true, nil
}

type replayRecords struct {
	first *Record
	rest  RecordReader
}

func (r *replayRecords) ReadRecord() (*Record, error) {
	if f := r.first; f != nil {
		r.first = nil
		return f, nil
	}
	return r.rest.ReadRecord()
}
