package protocol

import (
	"errors"
	"fmt"
	"io"
	"iter"
	"reflect"

	"github.com/segmentio/kafka-go/internal/eof"
)

// ResponseStream decodes a response as it arrives on a connection, with the
// same description of its fields as ReadResponse, so that a version is
// described once for both. It stops at each RECORDS field (a Fetch
// response's record sets) and hands it to the caller as a BatchStream
// reading straight from the connection: a consumer holds one record at a
// time rather than the whole response.
//
// The caller pulls: Next decodes up to the next records field (null ones
// included, as a nil BatchStream), returns it,
// and the caller reads (some of) its batches before calling Next again,
// which skips what the caller left of them. A ResponseStream, its
// BatchStreams and the source are used by one goroutine.
type ResponseStream struct {
	key     ApiKey
	version int16
	msg     Message
	state   streamState
	next    func() (*BatchStream, bool)
	stop    func()
	err     error
	done    bool
}

// streamState is what a wireReader decoding from a stream needs besides
// its buffer.
type streamState struct {
	src  StreamSource
	left int // bytes of the frame not read from src yet
	err  error
	// path holds the structs being decoded that enclose records, outermost
	// first; yield hands records to the puller.
	path  []reflect.Value
	yield func(*BatchStream) bool
}

// errStreamStopped ends the decoding of a ResponseStream closed early.
var errStreamStopped = errors.New("kafka protocol: response stream closed")

// NewResponseStream starts decoding a response to a request of key at
// version from src, positioned right after the correlation ID of its
// frame, with size bytes of the frame left after it. Nothing is read
// before the first call to Next.
func NewResponseStream(src StreamSource, size int, key ApiKey, version int16) (*ResponseStream, error) {
	types, ok := currentRegistry().apis[key]
	if !ok {
		return nil, unsupportedAPI(key)
	}
	c, err := types.res.codecFor(version)
	if err != nil {
		return nil, err
	}
	if size < 0 {
		return nil, fmt.Errorf("kafka protocol: negative response size %d", size)
	}
	s := &ResponseStream{key: key, version: version, msg: types.res.newMessage()}
	s.state = streamState{src: src, left: size}
	flexibleHeader := responseHeaderFlexible(key, types.res.flexible(version))
	s.next, s.stop = iter.Pull(func(yield func(*BatchStream) bool) {
		s.state.yield = yield
		r := wireReader{stream: &s.state}
		if flexibleHeader {
			skipTaggedFields(&r)
		}
		if r.err == nil {
			c.decode(&r, messageValue(s.msg))
		}
		s.err = r.err
	})
	return s, nil
}

// Next decodes the response up to its next records field and returns the
// structs that enclose it, outermost first (for Fetch: the *fetch.Response,
// the *fetch.ResponseTopic, the *fetch.ResponsePartition), and its records.
// Their fields that come before the records on the wire are decoded; those
// after them (Fetch v12's tagged fields) only once Next is called again.
// The records are valid until then. Next returns io.EOF after the last
// records field, once the whole response is decoded (see Response).
func (s *ResponseStream) Next() (enclosing []any, records *BatchStream, err error) {
	if s.done {
		return nil, nil, s.end()
	}
	bs, ok := s.next()
	if !ok {
		s.done = true
		return nil, nil, s.end()
	}
	out := make([]any, len(s.state.path))
	for i, v := range s.state.path {
		if v.Kind() == reflect.Pointer {
			out[i] = v.Interface()
		} else {
			out[i] = v.Addr().Interface()
		}
	}
	return out, bs, nil
}

func (s *ResponseStream) end() error {
	switch {
	case s.err == nil:
		return io.EOF
	case s.state.err != nil:
		// The source failed, or the records: that error as it is.
		return s.state.err
	default:
		return decodeError(s.err, "response", s.key, s.version)
	}
}

// Response returns the response: complete, but for its records (every
// records field is null), once Next returned io.EOF; partial before.
func (s *ResponseStream) Response() Message { return s.msg }

// Close stops the decoding; the source is left wherever it was. It is safe
// to call at any time, more than once.
func (s *ResponseStream) Close() {
	if !s.done {
		s.done = true
		if s.err == nil {
			s.err = errStreamStopped
		}
		s.stop()
	}
}

// fill appends n bytes from the source to r's buffer.
func (s *streamState) fill(r *wireReader, n int) bool {
	if n > s.left {
		r.fail(errWireShort)
		return false
	}
	start := len(r.b)
	if cap(r.b)-start < n {
		grown := make([]byte, start, max(2*cap(r.b), start+n, 256))
		copy(grown, r.b)
		r.b = grown
	}
	r.b = r.b[:start+n]
	if _, err := io.ReadFull(s.src, r.b[start:]); err != nil {
		r.b = r.b[:start]
		s.err = eof.Unexpected(err)
		r.fail(s.err)
		return false
	}
	s.left -= n
	return true
}

// records hands the n bytes of records that the source is positioned on
// to the puller, and skips what it left of them once it asks for more.
// Null records (n < 0) are handed out as a nil BatchStream.
func (s *streamState) records(r *wireReader, n int) {
	if n < 0 {
		if !s.yield(nil) {
			r.fail(errStreamStopped)
		}
		return
	}
	if len(r.b) != r.off {
		// Bytes are only ever read as decoding needs them.
		r.fail(errors.New("kafka protocol: records not at the stream's position"))
		return
	}
	if n > s.left {
		r.fail(errWireShort)
		return
	}
	bs := NewBatchStream(s.src, n)
	s.left -= n
	if !s.yield(bs) {
		r.fail(errStreamStopped)
		return
	}
	// Skipping the rest reads the source, and checks the CRC of a batch
	// left half read: either error ends the response, as it is.
	if err := bs.Close(); err != nil {
		s.err = err
		r.fail(err)
	}
}
