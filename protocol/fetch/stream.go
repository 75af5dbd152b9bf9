package fetch

import (
	"errors"
	"fmt"
	"io"

	"github.com/segmentio/kafka-go/protocol"
)

// ResponseStream reads a Fetch response as it arrives on a connection, one
// partition at a time, with the records of each read straight from the
// connection (see protocol.BatchStream): a consumer holds one record at a
// time rather than the whole response. It decodes with the description of
// the fields the Response type's tags give (protocol.ResponseStream), the
// one ReadResponse uses.
type ResponseStream struct {
	s *protocol.ResponseStream
}

// NewResponseStream starts reading a Fetch response of the given version
// from r, positioned right after the correlation ID of its frame, with size
// bytes of the frame after it.
func NewResponseStream(r protocol.StreamSource, size int, version int16) (*ResponseStream, error) {
	s, err := protocol.NewResponseStream(r, size, protocol.Fetch, version)
	if err != nil {
		return nil, fmt.Errorf("fetch response v%d: %w", version, err)
	}
	return &ResponseStream{s: s}, nil
}

// Next returns the next partition of the response and its records (nil
// when the broker sent none: a partition with an error, say), which are
// valid until the next call (which skips what was not read of them).
// The partition's fields after its records on the wire (v12's tagged
// fields) are set only once Next is called again. Next returns io.EOF after
// the last partition, once the whole response was read.
func (s *ResponseStream) Next() (topic string, p *ResponsePartition, records *protocol.BatchStream, err error) {
	enclosing, records, err := s.s.Next()
	if err != nil {
		return "", nil, nil, err
	}
	if len(enclosing) != 3 {
		return "", nil, nil, fmt.Errorf("fetch response: records at depth %d", len(enclosing))
	}
	t, _ := enclosing[1].(*ResponseTopic)
	p, _ = enclosing[2].(*ResponsePartition)
	if t == nil || p == nil {
		return "", nil, nil, errors.New("fetch response: records outside a partition")
	}
	return t.Topic, p, records, nil
}

// Response returns the response, with every field but the records (every
// RecordSet is null): complete once Next returned io.EOF, partial before.
func (s *ResponseStream) Response() *Response { return s.s.Response().(*Response) }

// Close stops reading; r is left wherever it was.
func (s *ResponseStream) Close() { s.s.Close() }

// ReadResponseStream reads a whole Fetch response with a ResponseStream,
// handing the records of each partition that has some (null records are
// not handed) to each as they arrive. An error
// from each, or from reading, stops it: ReadResponseStream returns that
// error with the response read so far.
func ReadResponseStream(r protocol.StreamSource, size int, version int16, each func(topic string, p *ResponsePartition, records *protocol.BatchStream) error) (*Response, error) {
	s, err := NewResponseStream(r, size, version)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	for {
		topic, p, records, err := s.Next()
		if errors.Is(err, io.EOF) {
			return s.Response(), nil
		}
		if err != nil {
			return s.Response(), err
		}
		if records == nil {
			continue
		}
		if err := each(topic, p, records); err != nil {
			return s.Response(), err
		}
	}
}
