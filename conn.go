package kafka

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go/internal/eof"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/apiversions"
)

var (
	errInvalidWriteTopic     = errors.New("writes must NOT set Topic on kafka.Message")
	errInvalidWritePartition = errors.New("writes must NOT set Partition on kafka.Message")
)

// The special offsets of the ListOffsets API. reader.go exports them as
// FirstOffset and LastOffset; the Conn keeps its own names so that it does
// not depend on that file.
const (
	connLastOffset  int64 = -1
	connFirstOffset int64 = -2
)

// Conn is a connection to one kafka broker, and usually to one partition of
// a topic led by that broker.
//
// A Conn is safe for concurrent use; its requests are sent one at a time.
type Conn struct {
	conn net.Conn
	rbuf *bufio.Reader

	// io serializes the request/response exchanges on conn and guards rbuf
	// and correlationID.
	io            sync.Mutex
	correlationID int32

	// mutex guards offset, where the next read starts.
	mutex  sync.Mutex
	offset int64

	rdeadline connDeadline
	wdeadline connDeadline

	clientID        string
	topic           string
	partition       int32
	broker          int32
	rack            string
	transactionalID string
	fetchMinSize    int32
	fetchMaxBytes   int32

	requiredAcks atomic.Int32

	// versions holds the broker's ApiVersions answer, loaded on first need.
	versions atomic.Pointer[map[protocol.ApiKey]ApiVersion]
}

// ConnConfig configures a Conn created by NewConnWith.
type ConnConfig struct {
	ClientID  string
	Topic     string
	Partition int
	Broker    int
	Rack      string

	// TransactionalID is sent with produce requests so that they are part of
	// that producer's transactions; empty means non-transactional writes.
	TransactionalID string
}

// ReadBatchConfig configures (*Conn).ReadBatchWith.
type ReadBatchConfig struct {
	// MinBytes is the amount of data the broker waits for (up to MaxWait)
	// before answering. A high value on a quiet topic delays delivery.
	MinBytes int

	// MaxBytes bounds the size of the response. The broker still returns
	// one whole record batch when the first one is larger.
	MaxBytes int

	// IsolationLevel selects whether records of open or aborted
	// transactions are visible (ReadUncommitted) or not (ReadCommitted).
	IsolationLevel IsolationLevel

	// MaxWait is how long the broker may wait for MinBytes. Zero derives it
	// from the connection's read deadline, as ReadBatch always did.
	MaxWait time.Duration
}

// IsolationLevel controls which transactional records a fetch returns.
type IsolationLevel int8

const (
	ReadUncommitted IsolationLevel = 0
	ReadCommitted   IsolationLevel = 1
)

// DefaultClientID is the client ID of connections configured without one.
var DefaultClientID string

func init() {
	host, _ := os.Hostname()
	DefaultClientID = fmt.Sprintf("%s@%s (github.com/segmentio/kafka-go)", filepath.Base(os.Args[0]), host)
}

// NewConn returns a Conn over conn for the given topic and partition.
func NewConn(conn net.Conn, topic string, partition int) *Conn {
	return NewConnWith(conn, ConnConfig{Topic: topic, Partition: partition})
}

// NewConnWith returns a Conn over conn configured by config. Reads start at
// the first offset of the partition. It panics if the partition number does
// not fit the protocol.
func NewConnWith(conn net.Conn, config ConnConfig) *Conn {
	if config.ClientID == "" {
		config.ClientID = DefaultClientID
	}
	if config.Partition < 0 || config.Partition > math.MaxInt32 {
		panic(fmt.Sprintf("invalid partition number: %d", config.Partition))
	}
	c := &Conn{
		conn:            conn,
		rbuf:            bufio.NewReader(conn),
		offset:          connFirstOffset,
		clientID:        config.ClientID,
		topic:           config.Topic,
		partition:       int32(config.Partition),
		broker:          int32(config.Broker),
		rack:            config.Rack,
		transactionalID: config.TransactionalID,
	}
	c.requiredAcks.Store(-1)
	c.fetchMinSize = fetchResponseOverhead(config.Topic)
	c.fetchMaxBytes = math.MaxInt32 - c.fetchMinSize
	return c
}

// fetchResponseOverhead is what a fetch response for one partition of topic
// takes besides its records, plus room for one legacy message header: the
// MaxBytes sent to the broker adds it to what the caller asked for, so that
// a caller asking for n bytes can get a message of about n bytes.
func fetchResponseOverhead(topic string) int32 {
	const (
		header    = 4 + 4 + 4 + 2 + 4 + 4     // size, correlation ID, throttle, error, session, topic count
		partition = 4 + 4 + 2 + 8 + 8 + 8 + 4 // partition count, index, error, watermarks, aborted count
		records   = 4 + 4                     // preferred replica, records size
		message   = 8 + 4 + 4 + 1 + 1 + 8 + 4 + 4
	)
	return int32(header + 2 + len(topic) + partition + records + message)
}

// Close closes the connection.
func (c *Conn) Close() error { return c.conn.Close() }

// LocalAddr is the address of our end of the connection to the broker.
func (c *Conn) LocalAddr() net.Addr { return c.conn.LocalAddr() }

// RemoteAddr returns the address of the broker.
func (c *Conn) RemoteAddr() net.Addr { return c.conn.RemoteAddr() }

// SetDeadline sets both the read and the write deadline.
//
// Once the deadline passes, calls (already waiting or made later) stop
// blocking and return a timeout error; the zero time removes the deadline.
// Deadlines also bound the time the broker is asked to spend on a request (a fetch's MaxWait, a produce's
// timeout), leaving a margin for the response to travel back. After an
// operation timed out, the connection may have been closed.
func (c *Conn) SetDeadline(t time.Time) error {
	for _, d := range [...]*connDeadline{&c.rdeadline, &c.wdeadline} {
		d.set(t)
	}
	return nil
}

// SetReadDeadline sets the deadline of read operations (fetches, offset and
// metadata requests), including one that is currently blocked.
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.rdeadline.set(t)
	return nil
}

// SetWriteDeadline sets the deadline of write operations (produce and admin
// requests), including one that is currently blocked.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	c.wdeadline.set(t)
	return nil
}

// SetRequiredAcks sets the acknowledgements produce requests ask for: -1
// (all in-sync replicas) or 1 (the leader only).
func (c *Conn) SetRequiredAcks(n int) error {
	if n != -1 && n != 1 {
		return InvalidRequiredAcks
	}
	c.requiredAcks.Store(int32(n))
	return nil
}

// Broker returns the broker this connection is established to.
func (c *Conn) Broker() Broker {
	host, port, _ := splitHostPortNumber(c.conn.RemoteAddr().String())
	return Broker{Host: host, Port: port, ID: int(c.broker), Rack: c.rack}
}

// connDeadline is a deadline of the connection. While an operation subject
// to it runs, the deadline is applied to the socket, so that changing it
// also affects the operation in progress.
type connDeadline struct {
	mutex  sync.Mutex
	value  time.Time
	active net.Conn
}

func (d *connDeadline) deadline() time.Time {
	d.mutex.Lock()
	defer d.mutex.Unlock()
	return d.value
}

func (d *connDeadline) set(t time.Time) {
	d.mutex.Lock()
	defer d.mutex.Unlock()
	d.value = t
	if d.active != nil {
		d.active.SetDeadline(t)
	}
}

// begin applies the deadline to nc for an operation and returns it.
func (d *connDeadline) begin(nc net.Conn) time.Time {
	d.mutex.Lock()
	defer d.mutex.Unlock()
	d.active = nc
	nc.SetDeadline(d.value)
	return d.value
}

func (d *connDeadline) end() {
	d.mutex.Lock()
	d.active = nil
	d.mutex.Unlock()
}

// connIO is the reader/writer of raw exchanges: it reads through the
// connection's buffer and remembers whether anything was written, to tell
// encoding errors (connection intact) from I/O errors.
type connIO struct {
	c       *Conn
	written bool
}

func (w *connIO) Read(b []byte) (int, error) { return w.c.rbuf.Read(b) }

func (w *connIO) Write(b []byte) (int, error) {
	w.written = true
	return w.c.conn.Write(b)
}

// roundTrip sends req at version and returns the response, under deadline
// d. A failure that leaves the stream in an unknown state (an I/O error, a
// response that is not the one expected) closes the connection; an error
// decoding a response that was read in full does not.
func (c *Conn) roundTrip(d *connDeadline, version int16, req protocol.Message) (protocol.Message, error) {
	c.io.Lock()
	defer c.io.Unlock()
	d.begin(c.conn)
	defer d.end()

	if p, ok := req.(protocol.PreparedMessage); ok {
		p.Prepare(version)
	}
	c.correlationID++
	id := c.correlationID
	w := connIO{c: c}
	if err := protocol.WriteRequest(&w, version, id, c.clientID, req); err != nil {
		if w.written {
			c.conn.Close()
		}
		return nil, err
	}
	// A produce request with acks=0 has no response.
	if r, ok := req.(interface{ HasResponse() bool }); ok && !r.HasResponse() {
		return nil, nil
	}

	// The frame is read through a limited reader: when decoding fails with
	// the frame read to its end, the next response is still in sync.
	var size [4]byte
	if _, err := io.ReadFull(c.rbuf, size[:]); err != nil {
		c.conn.Close()
		return nil, eof.Unexpected(err)
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 4 {
		c.conn.Close()
		return nil, fmt.Errorf("kafka: invalid response size %d", n)
	}
	if (size[0] == 0x15 || size[0] == 0x16) && size[1] == 3 && size[2] <= 4 {
		// A TLS record (alert or handshake) where a response should be.
		c.conn.Close()
		return nil, fmt.Errorf("kafka: the broker answered with TLS, configure Dialer.TLS: %w", io.ErrUnexpectedEOF)
	}
	body := &io.LimitedReader{R: c.rbuf, N: int64(n)}
	gotID, res, err := protocol.ReadResponse(io.MultiReader(bytes.NewReader(size[:]), body), req.ApiKey(), version)
	if body.N != 0 {
		c.conn.Close()
		if err == nil {
			err = fmt.Errorf("kafka: %d bytes of a %s response were left unread", body.N, req.ApiKey())
		}
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	if gotID != id {
		c.conn.Close()
		return nil, fmt.Errorf("kafka: correlation ID mismatch (expected %d, found %d)", id, gotID)
	}
	return res, nil
}

// request sends req with the version negotiated with the broker, under the
// read deadline. Code of the package that needs an API the Conn has no
// method for (consumer group APIs, say) can use it.
func (c *Conn) request(req protocol.Message) (protocol.Message, error) {
	return c.requestWith(&c.rdeadline, req)
}

func (c *Conn) requestWith(d *connDeadline, req protocol.Message) (protocol.Message, error) {
	version, err := c.negotiateVersion(req.ApiKey())
	if err != nil {
		return nil, err
	}
	return c.roundTrip(d, version, req)
}

// negotiateVersion picks the version of key to use with this broker.
func (c *Conn) negotiateVersion(key protocol.ApiKey) (int16, error) {
	versions, err := c.loadVersions()
	if err != nil {
		return -1, err
	}
	v, ok := versions[key]
	if !ok {
		return -1, fmt.Errorf("%w: the broker does not support %s", protocol.ErrNoVersionOverlap, key)
	}
	return protocol.NegotiateVersion(key, v.MinVersion, v.MaxVersion)
}

func (c *Conn) loadVersions() (map[protocol.ApiKey]ApiVersion, error) {
	if p := c.versions.Load(); p != nil {
		return *p, nil
	}
	if _, err := c.ApiVersions(); err != nil {
		return nil, err
	}
	return *c.versions.Load(), nil
}

// ApiVersions asks the broker which versions of each API it supports.
func (c *Conn) ApiVersions() ([]ApiVersion, error) {
	// Version negotiation runs before the first request of any kind, a
	// produce for instance, so the write deadline applies when no read
	// deadline is set.
	d := &c.rdeadline
	if d.deadline().IsZero() {
		d = &c.wdeadline
	}
	msg, err := c.roundTrip(d, 0, &apiversions.Request{})
	if err != nil {
		return nil, err
	}
	res := msg.(*apiversions.Response)
	out := make([]ApiVersion, len(res.ApiKeys))
	for i, k := range res.ApiKeys {
		out[i] = ApiVersion{ApiKey: k.ApiKey, MinVersion: k.MinVersion, MaxVersion: k.MaxVersion}
	}
	if res.ErrorCode != 0 {
		return out, Error(res.ErrorCode)
	}
	m := make(map[protocol.ApiKey]ApiVersion, len(out))
	for _, v := range out {
		m[protocol.ApiKey(v.ApiKey)] = v
	}
	c.versions.Store(&m)
	return out, nil
}

// Offset returns where the next read starts: an absolute offset with
// SeekAbsolute, or 0 and SeekStart/SeekEnd while the connection still
// points at the first or last offset of the partition.
func (c *Conn) Offset() (offset int64, whence int) {
	c.mutex.Lock()
	offset = c.offset
	c.mutex.Unlock()
	switch offset {
	case connFirstOffset:
		return 0, SeekStart
	case connLastOffset:
		return 0, SeekEnd
	}
	return offset, SeekAbsolute
}

func (c *Conn) setOffset(offset int64) {
	c.mutex.Lock()
	c.offset = offset
	c.mutex.Unlock()
}

// Whence values of Seek. They differ from io.Seek* for historical reasons.
const (
	SeekStart    = 0 // offset counts from the partition's oldest message
	SeekAbsolute = 1 // offset is used as is
	SeekEnd      = 2 // offset counts back from the partition's end
	SeekCurrent  = 3 // offset is added to the connection's offset

	// SeekDontCheck, or-ed with SeekAbsolute or SeekCurrent, skips the check
	// of the new offset against the partition's bounds, and the two
	// requests it costs.
	SeekDontCheck = 1 << 30
)

// Seek moves the offset of the next read and returns the new absolute
// offset. SeekEnd counts backwards: Seek(n, SeekEnd) is n messages before
// the end. Unless SeekDontCheck is set, an offset outside of the partition's
// first and last offsets fails with OffsetOutOfRange.
func (c *Conn) Seek(offset int64, whence int) (int64, error) {
	dontCheck := whence&SeekDontCheck != 0
	whence &^= SeekDontCheck
	if whence < SeekStart || whence > SeekCurrent {
		return 0, fmt.Errorf("whence must be one of 0, 1, 2, or 3. (whence = %d)", whence)
	}

	c.mutex.Lock()
	current := c.offset
	c.mutex.Unlock()

	switch {
	case dontCheck && whence == SeekAbsolute:
		c.setOffset(offset)
		return offset, nil
	case dontCheck && whence == SeekCurrent:
		c.mutex.Lock()
		c.offset += offset
		offset = c.offset
		c.mutex.Unlock()
		return offset, nil
	case whence == SeekAbsolute && offset == current:
		return offset, nil
	case whence == SeekCurrent:
		offset += current
	}

	first, last, err := c.ReadOffsets()
	if err != nil {
		return 0, err
	}
	switch whence {
	case SeekStart:
		offset += first
	case SeekEnd:
		offset = last - offset
	}
	if offset < first || offset > last {
		return 0, OffsetOutOfRange
	}
	c.setOffset(offset)
	return offset, nil
}
