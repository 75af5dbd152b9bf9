package kafka

import "github.com/segmentio/kafka-go/protocol"

// Header is a key/value pair attached to a message.
type Header = protocol.Header

// Bytes is a sequence of bytes that is read once. It lets programs stream
// keys and values into produce requests, and read them out of fetch
// responses, without an intermediate copy. Bytes values must not be used
// from several goroutines at once.
type Bytes = protocol.Bytes

// NewBytes wraps b as a Bytes value, or returns nil if b is nil.
func NewBytes(b []byte) Bytes { return protocol.NewBytes(b) }

// ReadAll returns the content of b (nil if b is nil).
func ReadAll(b Bytes) ([]byte, error) { return protocol.ReadAll(b) }

// Record is one record of a record set. Records must not be used from
// several goroutines at once.
type Record = protocol.Record

// RecordReader yields the records of a record set, as used by produce
// requests and fetch responses. RecordReader values must not be used from
// several goroutines at once.
type RecordReader = protocol.RecordReader

// NewRecordReader returns a RecordReader that yields records, in order.
func NewRecordReader(records ...Record) RecordReader {
	return protocol.NewRecordReader(records...)
}
