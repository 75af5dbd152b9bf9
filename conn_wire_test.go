package kafka

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/apiversions"
	"github.com/segmentio/kafka-go/protocol/fetch"
	"github.com/segmentio/kafka-go/protocol/listoffsets"
	"github.com/segmentio/kafka-go/protocol/metadata"
	"github.com/segmentio/kafka-go/protocol/produce"
	"github.com/segmentio/kafka-go/protocol/saslhandshake"
	"github.com/segmentio/kafka-go/sasl/plain"
)

// Unit tests of Conn against the fake broker (internal/fakebroker), which
// decodes requests with protocol.ReadRequest; the tests answer with
// protocol.WriteResponse or with frames of their own making.

// connFake scripts a fake broker for one Conn.
type connFake struct {
	mutex    sync.Mutex
	requests []protocol.Message
}

// newConnFake starts a fake broker that advertises versions and answers
// every request but ApiVersions with handle: a message to encode, or raw
// bytes (a whole frame, its correlation ID set unless the test set one) to
// send as they are; nil and nil sends nothing. It returns a Conn to it.
func newConnFake(t *testing.T, versions map[protocol.ApiKey][2]int16, handle func(int16, protocol.Message) (protocol.Message, []byte)) (*Conn, *connFake) {
	fc := fakebroker.New(t, 1)
	f := scriptConnFake(fc.Brokers[0], versions, handle)
	nc, err := net.Dial("tcp", fc.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := NewConnWith(nc, ConnConfig{Topic: "topic", Partition: 3, ClientID: "fake-test"})
	t.Cleanup(func() { c.Close() })
	return c, f
}

// scriptConnFake makes b advertise versions and answer with handle, as
// newConnFake describes.
func scriptConnFake(b *fakebroker.Broker, versions map[protocol.ApiKey][2]int16, handle func(int16, protocol.Message) (protocol.Message, []byte)) *connFake {
	f := &connFake{}
	b.Mu.Lock()
	b.ApiKeys = nil
	for key, r := range versions {
		b.ApiKeys = append(b.ApiKeys, apiversions.ApiKeyResponse{ApiKey: int16(key), MinVersion: r[0], MaxVersion: r[1]})
	}
	b.Intercept = func(c *fakebroker.Conn, r *fakebroker.Request) bool {
		f.mutex.Lock()
		f.requests = append(f.requests, r.Msg)
		f.mutex.Unlock()
		if r.Msg.ApiKey() == protocol.ApiVersions {
			return false
		}
		msg, raw := handle(r.Version, r.Msg)
		switch {
		case raw != nil:
			if binary.BigEndian.Uint32(raw[4:]) == 0 { // else a test's wrong ID
				binary.BigEndian.PutUint32(raw[4:], uint32(r.ID))
			}
			c.WMu.Lock()
			c.NC.Write(raw)
			c.WMu.Unlock()
		case msg != nil:
			r.Reply(msg)
		}
		return true
	}
	b.Mu.Unlock()
	return f
}

func (f *connFake) last() protocol.Message {
	f.mutex.Lock()
	defer f.mutex.Unlock()
	return f.requests[len(f.requests)-1]
}

// connFakeVersions are the versions the fake advertises: Fetch v4 only,
// whose response ends with the record set, which lets the tests splice in
// record bytes of their own making.
func connFakeVersions() map[protocol.ApiKey][2]int16 {
	return map[protocol.ApiKey][2]int16{
		protocol.ApiVersions: {0, 3},
		protocol.Fetch:       {4, 4},
		protocol.Produce:     {3, 7},
		protocol.ListOffsets: {1, 1},
		protocol.Metadata:    {1, 1},
	}
}

// connFetchFrame encodes a v4 fetch response for topic/partition 3 with the
// given records bytes (none when nil).
func connFetchFrame(t *testing.T, hwm int64, code int16, aborted []fetch.ResponseTransaction, records []byte) []byte {
	res := &fetch.Response{Topics: []fetch.ResponseTopic{{
		Topic: "topic",
		Partitions: []fetch.ResponsePartition{{
			Partition:           3,
			ErrorCode:           code,
			HighWatermark:       hwm,
			LastStableOffset:    hwm,
			AbortedTransactions: aborted,
		}},
	}}}
	var buf bytes.Buffer
	if err := protocol.WriteResponse(&buf, 4, 0, res); err != nil {
		t.Fatal(err)
	}
	frame := buf.Bytes()
	// The record set is last, encoded as null (-1): replace it.
	if !bytes.HasSuffix(frame, []byte{0xff, 0xff, 0xff, 0xff}) {
		t.Fatal("fetch response does not end with a null record set")
	}
	frame = frame[:len(frame)-4]
	frame = binary.BigEndian.AppendUint32(frame, uint32(len(records)))
	frame = append(frame, records...)
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	return frame
}

var connCastagnoli = crc32.MakeTable(crc32.Castagnoli)

type connTestRecord struct {
	key, value string
}

func connRecords(rs []connTestRecord) []protocol.Record {
	out := make([]protocol.Record, len(rs))
	for i, r := range rs {
		out[i] = protocol.Record{Time: time.UnixMilli(1700000000000 + int64(i)), Key: protocol.NewBytes([]byte(r.key)), Value: protocol.NewBytes([]byte(r.value))}
	}
	return out
}

// connV2Batch encodes a v2 record batch with the protocol package, then
// sets its base offset, flags and producer ID (fixing the CRC).
func connV2Batch(t *testing.T, base int64, attrs protocol.Attributes, producerID int64, recs []protocol.Record) []byte {
	var buf bytes.Buffer
	rs := protocol.RecordSet{Version: 2, Attributes: attrs & 7, Records: protocol.NewRecordReader(recs...)}
	if _, err := rs.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	binary.BigEndian.PutUint64(b[0:], uint64(base))
	binary.BigEndian.PutUint16(b[21:], uint16(attrs))
	binary.BigEndian.PutUint64(b[43:], uint64(producerID))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], connCastagnoli))
	return b
}

func connControlBatch(t *testing.T, offset int64, producerID int64, commit bool) []byte {
	typ := int16(0)
	if commit {
		typ = 1
	}
	cr := protocol.ControlRecord{Version: 0, Type: typ, Data: []byte{0, 0, 0, 0, 0, 0}}
	return connV2Batch(t, offset, protocol.Control|protocol.Transactional, producerID, []protocol.Record{cr.Record()})
}

// connLegacySet encodes a magic 1 message set (compressed into one wrapper
// message when attrs has a codec) and numbers its messages from base.
func connLegacySet(t *testing.T, base int64, attrs protocol.Attributes, recs []protocol.Record) []byte {
	var buf bytes.Buffer
	rs := protocol.RecordSet{Version: 1, Attributes: attrs, Records: protocol.NewRecordReader(recs...)}
	if _, err := rs.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if attrs != 0 {
		// One wrapper, carrying the offset of the last inner message.
		binary.BigEndian.PutUint64(b, uint64(base+int64(len(recs))-1))
		return b
	}
	for pos, i := 0, int64(0); pos < len(b); i++ {
		binary.BigEndian.PutUint64(b[pos:], uint64(base+i))
		pos += 12 + int(binary.BigEndian.Uint32(b[pos+8:]))
	}
	return b
}

// connMagic0 encodes one magic 0 message by hand: the protocol package
// only writes magic 1.
func connMagic0(offset int64, key, value string) []byte {
	body := []byte{0, 0} // magic 0, no attributes
	body = binary.BigEndian.AppendUint32(body, uint32(len(key)))
	body = append(body, key...)
	body = binary.BigEndian.AppendUint32(body, uint32(len(value)))
	body = append(body, value...)
	msg := binary.BigEndian.AppendUint64(nil, uint64(offset))
	msg = binary.BigEndian.AppendUint32(msg, uint32(4+len(body)))
	msg = binary.BigEndian.AppendUint32(msg, crc32.ChecksumIEEE(body))
	return append(msg, body...)
}

func connKV(prefix string, n int) []connTestRecord {
	out := make([]connTestRecord, n)
	for i := range out {
		out[i] = connTestRecord{fmt.Sprintf("%s-k%d", prefix, i), fmt.Sprintf("%s-v%d", prefix, i)}
	}
	return out
}

// connReadBatch reads a batch to its end and returns "offset:key=value"
// lines and the batch's error at the end.
func connReadBatch(b *Batch) ([]string, error) {
	var out []string
	for {
		m, err := b.ReadMessage()
		if err != nil {
			return out, err
		}
		out = append(out, fmt.Sprintf("%d:%s=%s", m.Offset, m.Key, m.Value))
	}
}

func TestConnBatchFormats(t *testing.T) {
	connCheckGoroutines(t)
	var records []byte
	records = append(records, connMagic0(0, "m0-k0", "m0-v0")...)
	records = append(records, connMagic0(1, "m0-k1", "m0-v1")...)
	records = append(records, connLegacySet(t, 2, 0, connRecords(connKV("m1", 2)))...)
	records = append(records, connLegacySet(t, 4, protocol.Gzip, connRecords(connKV("m1gz", 3)))...)
	records = append(records, connV2Batch(t, 7, 0, -1, connRecords(connKV("v2", 2)))...)
	records = append(records, connV2Batch(t, 9, protocol.Lz4, -1, connRecords(connKV("v2lz4", 3)))...)
	records = append(records, connControlBatch(t, 12, 5, true)...)
	records = append(records, connV2Batch(t, 13, protocol.Snappy, -1, connRecords(connKV("v2snappy", 1)))...)
	records = append(records, connV2Batch(t, 14, protocol.Zstd, -1, connRecords(connKV("v2zstd", 1)))...)
	records = append(records, connV2Batch(t, 15, protocol.Gzip, -1, connRecords(connKV("v2gzip", 1)))...)
	// A batch cut short by the broker's size limit is ignored.
	partial := connV2Batch(t, 16, 0, -1, connRecords(connKV("cut", 3)))
	records = append(records, partial[:len(partial)-5]...)

	var fetches []*fetch.Request
	c, _ := newConnFake(t, connFakeVersions(), func(v int16, req protocol.Message) (protocol.Message, []byte) {
		r := req.(*fetch.Request)
		fetches = append(fetches, r)
		return nil, connFetchFrame(t, 20, 0, nil, records)
	})
	c.Seek(0, SeekAbsolute|SeekDontCheck)
	c.SetReadDeadline(time.Now().Add(time.Hour))
	b := c.ReadBatch(10, 5000)
	got, err := connReadBatch(b)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("end of batch: %v", err)
	}
	want := []string{
		"0:m0-k0=m0-v0", "1:m0-k1=m0-v1",
		"2:m1-k0=m1-v0", "3:m1-k1=m1-v1",
		"4:m1gz-k0=m1gz-v0", "5:m1gz-k1=m1gz-v1", "6:m1gz-k2=m1gz-v2",
		"7:v2-k0=v2-v0", "8:v2-k1=v2-v1",
		"9:v2lz4-k0=v2lz4-v0", "10:v2lz4-k1=v2lz4-v1", "11:v2lz4-k2=v2lz4-v2",
		"13:v2snappy-k0=v2snappy-v0", "14:v2zstd-k0=v2zstd-v0", "15:v2gzip-k0=v2gzip-v0",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("messages:\n got %v\nwant %v", got, want)
	}
	if b.Offset() != 16 || b.HighWaterMark() != 20 {
		t.Errorf("batch offset %d, hwm %d", b.Offset(), b.HighWaterMark())
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if off, _ := c.Offset(); off != 16 {
		t.Errorf("connection offset %d after the batch", off)
	}
	r := fetches[0]
	p := r.Topics[0].Partitions[0]
	if r.ReplicaID != -1 || r.MinBytes != 10 || r.MaxBytes != 5000+c.fetchMinSize || p.PartitionMaxBytes != r.MaxBytes ||
		r.Topics[0].Topic != "topic" || p.Partition != 3 || p.FetchOffset != 0 {
		t.Errorf("fetch request %+v", r)
	}
	// The broker is told to answer a round trip before the deadline.
	if wait := time.Duration(r.MaxWaitTime) * time.Millisecond; wait > time.Hour-defaultRTT || wait < time.Hour-defaultRTT-time.Minute {
		t.Errorf("MaxWaitTime %v for a deadline in an hour", wait)
	}

	// Starting in the middle of the compressed legacy set skips the
	// messages before the offset.
	c.Seek(5, SeekAbsolute|SeekDontCheck)
	b = c.ReadBatch(1, 5000)
	got, _ = connReadBatch(b)
	b.Close()
	if len(got) != 10 || got[0] != "5:m1gz-k1=m1gz-v1" {
		t.Errorf("reading from offset 5: %v", got)
	}
	if r := fetches[1]; r.Topics[0].Partitions[0].FetchOffset != 5 {
		t.Errorf("second fetch at %d", r.Topics[0].Partitions[0].FetchOffset)
	}
}

func TestConnBatchRead(t *testing.T) {
	records := connV2Batch(t, 0, 0, -1, connRecords([]connTestRecord{{"a", "12345678"}, {"b", ""}, {"c", "xyz"}}))
	c, _ := newConnFake(t, connFakeVersions(), func(v int16, req protocol.Message) (protocol.Message, []byte) {
		return nil, connFetchFrame(t, 3, 0, nil, records)
	})
	c.Seek(0, SeekAbsolute|SeekDontCheck)

	b := c.ReadBatch(1, 1000)
	buf := make([]byte, 4, 8)
	n, err := b.Read(buf) // the value fits the capacity of buf
	if err != nil || n != 8 || string(buf[:n]) != "12345678" {
		t.Fatalf("Read: %d %v %q", n, err, buf[:n])
	}
	if n, err := b.Read(buf); err != nil || n != 0 {
		t.Fatalf("Read of an empty value: %d %v", n, err)
	}
	if n, err := b.Read(buf[:0:2]); !errors.Is(err, io.ErrShortBuffer) || n != 2 {
		t.Fatalf("Read into a short buffer: %d %v", n, err)
	}
	if b.Offset() != 2 {
		t.Errorf("a short read moved the batch to %d", b.Offset())
	}
	if _, err := b.ReadMessage(); !errors.Is(err, io.ErrShortBuffer) {
		t.Errorf("batch after a short read: %v", err)
	}
	if err := b.Close(); !errors.Is(err, io.ErrShortBuffer) {
		t.Errorf("Close after a short read: %v", err)
	}
	if off, _ := c.Offset(); off != 2 {
		t.Errorf("connection offset %d", off)
	}

	// Conn.Read reads one message and moves past it.
	buf = make([]byte, 10)
	if n, err := c.Read(buf); err != nil || string(buf[:n]) != "xyz" {
		t.Fatalf("Conn.Read: %d %v", n, err)
	}
	if off, _ := c.Offset(); off != 3 {
		t.Errorf("connection offset %d after Conn.Read", off)
	}
}

func TestConnReadCommitted(t *testing.T) {
	var records []byte
	records = append(records, connV2Batch(t, 2, protocol.Transactional, 7, connRecords(connKV("aborted", 2)))...)
	records = append(records, connV2Batch(t, 4, protocol.Transactional, 8, connRecords(connKV("committed", 2)))...)
	records = append(records, connControlBatch(t, 6, 7, false)...)
	records = append(records, connControlBatch(t, 7, 8, true)...)
	records = append(records, connV2Batch(t, 8, protocol.Transactional|protocol.Gzip, 7, connRecords(connKV("later", 1)))...)
	records = append(records, connControlBatch(t, 9, 7, true)...)
	aborted := []fetch.ResponseTransaction{{ProducerID: 7, FirstOffset: 2}}

	var isolation []int8
	c, _ := newConnFake(t, connFakeVersions(), func(v int16, req protocol.Message) (protocol.Message, []byte) {
		isolation = append(isolation, req.(*fetch.Request).IsolationLevel)
		return nil, connFetchFrame(t, 10, 0, aborted, records)
	})
	for _, tc := range []struct {
		level IsolationLevel
		want  string
	}{
		{ReadCommitted, "4:committed-k0=committed-v0 5:committed-k1=committed-v1 8:later-k0=later-v0"},
		{ReadUncommitted, "2:aborted-k0=aborted-v0 3:aborted-k1=aborted-v1 4:committed-k0=committed-v0 5:committed-k1=committed-v1 8:later-k0=later-v0"},
	} {
		c.Seek(2, SeekAbsolute|SeekDontCheck)
		b := c.ReadBatchWith(ReadBatchConfig{MinBytes: 1, MaxBytes: 1000, IsolationLevel: tc.level, MaxWait: time.Second})
		got, err := connReadBatch(b)
		if !errors.Is(err, io.EOF) || strings.Join(got, " ") != tc.want {
			t.Errorf("isolation %d: %v %v", tc.level, got, err)
		}
		// The offset moves past the final transaction marker.
		if b.Close(); b.Offset() != 10 {
			t.Errorf("isolation %d: offset %d at the end", tc.level, b.Offset())
		}
	}
	if len(isolation) != 2 || isolation[0] != 1 || isolation[1] != 0 {
		t.Errorf("isolation levels sent: %v", isolation)
	}
}

func TestConnFetchEdgeCases(t *testing.T) {
	var respond func() []byte
	c, _ := newConnFake(t, connFakeVersions(), func(v int16, req protocol.Message) (protocol.Message, []byte) {
		return nil, respond()
	})

	// At the high watermark, an empty fetch is a timeout of the wait.
	respond = func() []byte { return connFetchFrame(t, 5, 0, nil, nil) }
	c.Seek(5, SeekAbsolute|SeekDontCheck)
	b := c.ReadBatch(1, 1000)
	if b.Err() != nil {
		t.Fatal(b.Err())
	}
	if _, err := b.ReadMessage(); !errors.Is(err, RequestTimedOut) {
		t.Errorf("empty fetch at the high watermark: %v", err)
	}
	if err := b.Close(); !errors.Is(err, RequestTimedOut) {
		t.Errorf("Close: %v", err)
	}
	if _, err := c.ReadMessage(1000); !errors.Is(err, RequestTimedOut) {
		t.Errorf("Conn.ReadMessage at the high watermark: %v", err)
	}

	// A partition error comes back from the batch; the connection is fine.
	respond = func() []byte { return connFetchFrame(t, -1, int16(NotLeaderForPartition), nil, nil) }
	b = c.ReadBatch(1, 1000)
	if !errors.Is(b.Err(), NotLeaderForPartition) || !errors.Is(b.Close(), NotLeaderForPartition) {
		t.Errorf("partition error: %v", b.Err())
	}

	// A batch whose header ends before the fetch offset (Kafka starts at
	// the batch holding the offset, so only another broker sends one):
	// nothing is delivered, and no offset the batch does not cover is
	// skipped.
	respond = func() []byte {
		return connFetchFrame(t, 20, 0, nil, connV2Batch(t, 3, 0, -1, connRecords(connKV("old", 2))))
	}
	c.Seek(7, SeekAbsolute|SeekDontCheck)
	b = c.ReadBatch(1, 1000)
	if got, err := connReadBatch(b); len(got) != 0 || !errors.Is(err, io.EOF) {
		t.Errorf("batch before the offset: %v %v", got, err)
	}
	b.Close()
	if off, _ := c.Offset(); off != 7 {
		t.Errorf("offset %d after a batch ending at 4, want 7", off)
	}

	// A corrupt record set fails the batch but leaves the stream in sync.
	respond = func() []byte {
		batch := connV2Batch(t, 0, 0, -1, connRecords(connKV("x", 1)))
		batch[len(batch)-1] ^= 0xff
		return connFetchFrame(t, 1, 0, nil, batch)
	}
	b = c.ReadBatch(1, 1000)
	if b.Err() == nil || !strings.Contains(b.Err().Error(), "crc32") {
		t.Errorf("corrupt batch: %v", b.Err())
	}
	b.Close()
	respond = func() []byte { return connFetchFrame(t, 5, 0, nil, nil) }
	c.Seek(5, SeekAbsolute|SeekDontCheck)
	if _, err := c.ReadMessage(1000); !errors.Is(err, RequestTimedOut) {
		t.Errorf("request after a corrupt response: %v", err)
	}

	// Invalid arguments.
	for _, args := range [][2]int{{-1, 10}, {10, 5}, {1, int(c.fetchMaxBytes) + 1}} {
		if b := c.ReadBatch(args[0], args[1]); b.Err() == nil || b.Close() == nil {
			t.Errorf("ReadBatch(%d, %d) succeeded", args[0], args[1])
		}
	}

	// A response to another request breaks the connection.
	respond = func() []byte {
		f := connFetchFrame(t, 5, 0, nil, nil)
		binary.BigEndian.PutUint32(f[4:], 0x7fffffff)
		return f
	}
	b = c.ReadBatch(1, 1000)
	if b.Err() == nil || !strings.Contains(b.Err().Error(), "correlation") {
		t.Errorf("mismatched correlation ID: %v", b.Err())
	}
	if _, err := c.ReadPartitions(); err == nil {
		t.Error("connection still usable after a mismatched response")
	}
}

func TestConnProduce(t *testing.T) {
	c, f := newConnFake(t, connFakeVersions(), func(v int16, req protocol.Message) (protocol.Message, []byte) {
		r := req.(*produce.Request)
		return &produce.Response{Topics: []produce.ResponseTopic{{
			Topic: "topic",
			Partitions: []produce.ResponsePartition{{
				Partition:     r.Topics[0].Partitions[0].Partition,
				BaseOffset:    42,
				LogAppendTime: 1700000000123,
			}},
		}}}, nil
	})
	c.transactionalID = "txn"
	c.SetWriteDeadline(time.Now().Add(time.Minute))
	ts := time.UnixMilli(1600000000000)
	n, part, offset, appended, err := c.WriteCompressedMessagesAt(Gzip.Codec(),
		Message{Key: []byte("k"), Value: []byte("value"), Time: ts, Headers: []Header{{Key: "h", Value: []byte("v")}}},
		Message{Value: []byte("second")},
	)
	if err != nil || n != 1+5+6 || part != 3 || offset != 42 || !appended.Equal(time.UnixMilli(1700000000123)) {
		t.Fatalf("WriteCompressedMessagesAt: %d %d %d %v %v", n, part, offset, appended, err)
	}
	r := f.last().(*produce.Request)
	if r.Acks != -1 || r.TransactionalID != "txn" || r.Timeout <= 0 || r.Timeout > int32(time.Minute/time.Millisecond) {
		t.Errorf("produce request: acks %d txn %q timeout %d", r.Acks, r.TransactionalID, r.Timeout)
	}
	rs := r.Topics[0].Partitions[0].RecordSet
	if rs.Attributes.Compression() != Gzip {
		t.Errorf("record set attributes %v", rs.Attributes)
	}
	rec, err := rs.Records.ReadRecord()
	if err != nil {
		t.Fatal(err)
	}
	key, _ := protocol.ReadAll(rec.Key)
	value, _ := protocol.ReadAll(rec.Value)
	if string(key) != "k" || string(value) != "value" || !rec.Time.Equal(ts) || len(rec.Headers) != 1 || rec.Headers[0].Key != "h" {
		t.Errorf("first record: %q %q %v %v", key, value, rec.Time, rec.Headers)
	}
	rec, err = rs.Records.ReadRecord()
	if err != nil || rec.Key != nil || rec.Time.IsZero() {
		t.Errorf("second record: %v %+v", err, rec)
	}

	if err := c.SetRequiredAcks(1); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if r := f.last().(*produce.Request); r.Acks != 1 {
		t.Errorf("acks %d after SetRequiredAcks(1)", r.Acks)
	}
}

func TestConnOffsetsAndMetadata(t *testing.T) {
	c, f := newConnFake(t, connFakeVersions(), func(v int16, req protocol.Message) (protocol.Message, []byte) {
		switch r := req.(type) {
		case *listoffsets.Request:
			p := r.Topics[0].Partitions[0]
			offset := map[int64]int64{-2: 10, -1: 30}[p.Timestamp]
			if p.Timestamp > 0 {
				offset = 20
			}
			return &listoffsets.Response{Topics: []listoffsets.ResponseTopic{{
				Topic:      r.Topics[0].Topic,
				Partitions: []listoffsets.ResponsePartition{{Partition: p.Partition, Offset: offset}},
			}}}, nil
		case *metadata.Request:
			return &metadata.Response{
				Brokers: []metadata.ResponseBroker{
					{NodeID: 1, Host: "h1", Port: 9001, Rack: "r1"},
					{NodeID: 2, Host: "h2", Port: 9002},
				},
				ControllerID: 2,
				Topics: []metadata.ResponseTopic{
					{Name: "topic", Partitions: []metadata.ResponsePartition{
						{PartitionIndex: 0, LeaderID: 1, ReplicaNodes: []int32{1, 2, 5}, IsrNodes: []int32{1}},
						{PartitionIndex: 1, LeaderID: 2, ReplicaNodes: []int32{2}, IsrNodes: []int32{2}, ErrorCode: int16(LeaderNotAvailable)},
					}},
					{Name: "other", ErrorCode: int16(TopicAuthorizationFailed)},
				},
			}, nil
		}
		return nil, nil
	})

	first, last, err := c.ReadOffsets()
	if err != nil || first != 10 || last != 30 {
		t.Fatalf("ReadOffsets: %d %d %v", first, last, err)
	}
	if o, err := c.ReadOffset(time.UnixMilli(5000)); err != nil || o != 20 {
		t.Fatalf("ReadOffset: %d %v", o, err)
	}
	if r := f.last().(*listoffsets.Request); r.Topics[0].Partitions[0].Timestamp != 5000 || r.ReplicaID != -1 {
		t.Errorf("ListOffsets request %+v", r)
	}
	for _, tc := range []struct {
		offset int64
		whence int
		want   int64
		err    error
	}{
		{5, SeekStart, 15, nil},
		{5, SeekEnd, 25, nil},
		{3, SeekCurrent, 28, nil},
		{30, SeekAbsolute, 30, nil},
		{31, SeekAbsolute, 0, OffsetOutOfRange},
		{9, SeekAbsolute, 0, OffsetOutOfRange},
		{9, SeekAbsolute | SeekDontCheck, 9, nil},
	} {
		got, err := c.Seek(tc.offset, tc.whence)
		if got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("Seek(%d, %#x) = %d, %v; want %d, %v", tc.offset, tc.whence, got, err, tc.want, tc.err)
		}
	}

	brokers, err := c.Brokers()
	if err != nil || len(brokers) != 2 || brokers[0] != (Broker{Host: "h1", Port: 9001, ID: 1, Rack: "r1"}) {
		t.Errorf("Brokers: %v %+v", err, brokers)
	}
	if ctrl, err := c.Controller(); err != nil || ctrl.ID != 2 || ctrl.Host != "h2" {
		t.Errorf("Controller: %v %+v", err, ctrl)
	}
	parts, err := c.ReadPartitions()
	if err != nil || len(parts) != 2 {
		t.Fatalf("ReadPartitions: %v %+v", err, parts)
	}
	if p := parts[0]; p.Leader.Host != "h1" || len(p.Replicas) != 3 || p.Replicas[2] != (Broker{ID: 5}) || len(p.Isr) != 1 || p.Error != nil {
		t.Errorf("partition 0: %+v", p)
	}
	if p := parts[1]; !errors.Is(p.Error, LeaderNotAvailable) {
		t.Errorf("partition 1: %+v", p)
	}
	if r := f.last().(*metadata.Request); len(r.TopicNames) != 1 || r.TopicNames[0] != "topic" {
		t.Errorf("metadata request for %v", r.TopicNames)
	}
	// An error of the connection's topic is the error of the call.
	if _, err := c.ReadPartitions("other"); err != nil {
		t.Errorf("error of another topic: %v", err)
	}
	c.topic = "other"
	if _, err := c.ReadPartitions(); !errors.Is(err, TopicAuthorizationFailed) {
		t.Errorf("error of the connection's topic: %v", err)
	}
}

func TestConnUnsupportedVersions(t *testing.T) {
	c, _ := newConnFake(t, map[protocol.ApiKey][2]int16{protocol.ApiVersions: {0, 0}, protocol.Fetch: {0, 2}}, nil)
	b := c.ReadBatch(1, 100)
	if !errors.Is(b.Err(), protocol.ErrNoVersionOverlap) {
		t.Errorf("fetch from a broker without Fetch v4: %v", b.Err())
	}
	if _, err := c.ReadFirstOffset(); !errors.Is(err, protocol.ErrNoVersionOverlap) {
		t.Errorf("ListOffsets on a broker without it: %v", err)
	}
}

// TestConnSASLv0 authenticates after a v0 handshake, where the SASL
// messages travel as raw size-prefixed frames.
func TestConnSASLv0(t *testing.T) {
	for _, password := range []string{"secret", "wrong"} {
		t.Run(password, func(t *testing.T) {
			connCheckGoroutines(t)
			client, server := net.Pipe()
			defer client.Close()
			done := make(chan error, 1)
			go func() {
				defer server.Close()
				done <- connFakeSASLServer(server)
			}()
			d := &Dialer{
				Timeout:       10 * time.Second,
				SASLMechanism: plain.Mechanism{Username: "user", Password: password},
				DialFunc: func(context.Context, string, string) (net.Conn, error) {
					return client, nil
				},
			}
			c, err := d.Dial("tcp", "broker:9092")
			if password == "wrong" {
				if !errors.Is(err, SASLAuthenticationFailed) {
					t.Fatalf("wrong password: %v", err)
				}
				<-done
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Brokers(); err != nil {
				t.Fatal(err)
			}
			c.Close()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}

func connFakeSASLServer(nc net.Conn) error {
	serve := func(handle func(version int16, req protocol.Message) protocol.Message) error {
		version, id, _, req, err := protocol.ReadRequest(nc)
		if err != nil {
			return err
		}
		return protocol.WriteResponse(nc, version, id, handle(version, req))
	}
	if err := serve(func(v int16, req protocol.Message) protocol.Message {
		return &apiversions.Response{ApiKeys: []apiversions.ApiKeyResponse{
			{ApiKey: int16(protocol.ApiVersions), MaxVersion: 3},
			{ApiKey: int16(protocol.SaslHandshake), MaxVersion: 0},
			{ApiKey: int16(protocol.Metadata), MinVersion: 1, MaxVersion: 1},
		}}
	}); err != nil {
		return err
	}
	if err := serve(func(v int16, req protocol.Message) protocol.Message {
		return &saslhandshake.Response{Mechanisms: []string{req.(*saslhandshake.Request).Mechanism}}
	}); err != nil {
		return err
	}
	var size [4]byte
	if _, err := io.ReadFull(nc, size[:]); err != nil {
		return err
	}
	token := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(nc, token); err != nil {
		return err
	}
	if string(token) != "\x00user\x00secret" {
		return nil // a failed login: the broker hangs up
	}
	if _, err := nc.Write([]byte{0, 0, 0, 0}); err != nil {
		return err
	}
	if err := serve(func(v int16, req protocol.Message) protocol.Message {
		return &metadata.Response{Brokers: []metadata.ResponseBroker{{NodeID: 1, Host: "h", Port: 1}}}
	}); err != nil {
		return err
	}
	_, _, _, _, err := protocol.ReadRequest(nc)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.ErrClosedPipe) {
		return nil
	}
	return fmt.Errorf("after the metadata request: %v", err)
}

func TestConnTLS(t *testing.T) {
	connCheckGoroutines(t)
	srv := httptest.NewTLSServer(nil)
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	fc := fakebroker.NewTLS(t, 1, &tls.Config{Certificates: srv.TLS.Certificates})
	scriptConnFake(fc.Brokers[0], connFakeVersions(), func(v int16, req protocol.Message) (protocol.Message, []byte) {
		return &metadata.Response{Brokers: []metadata.ResponseBroker{{NodeID: 1, Host: "tls", Port: 1}}}, nil
	})
	addr := fc.Addr().String()

	d := &Dialer{Timeout: 10 * time.Second, TLS: &tls.Config{RootCAs: pool}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.conn.(*tls.Conn); !ok {
		t.Errorf("connection is a %T", c.conn)
	}
	brokers, err := c.Brokers()
	if err != nil || len(brokers) != 1 || brokers[0].Host != "tls" {
		t.Errorf("Brokers over TLS: %v %v", err, brokers)
	}
	c.Close()

	// A plaintext client is told the broker expects TLS, without hanging.
	d = &Dialer{Timeout: 5 * time.Second}
	if _, err := d.Dial("tcp", addr); err == nil {
		t.Error("plaintext dial of a TLS listener succeeded")
	}
	// A certificate the client does not trust fails the handshake.
	d = &Dialer{Timeout: 5 * time.Second, TLS: &tls.Config{}}
	if _, err := d.Dial("tcp", addr); err == nil {
		t.Error("dial with an untrusted certificate succeeded")
	}
}

func TestConnTLSAlert(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	go func() {
		defer server.Close()
		protocol.ReadRequest(server)
		server.Write([]byte{0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x32}) // a TLS alert record
	}()
	c := NewConn(client, "topic", 0)
	if _, err := c.ApiVersions(); err == nil || !strings.Contains(err.Error(), "TLS") || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("TLS answer: %v", err)
	}
}

// BenchmarkConnBatch reads fetch responses of 1000 small records: Read
// copies values into the caller's buffer, ReadMessage allocates key and
// value copies.
func BenchmarkConnBatch(b *testing.B) {
	t := &testing.T{}
	recs := make([]protocol.Record, 1000)
	for i := range recs {
		recs[i] = protocol.Record{Time: time.UnixMilli(1700000000000), Key: protocol.NewBytes([]byte("key")), Value: protocol.NewBytes(bytes.Repeat([]byte("v"), 100))}
	}
	frame := connFetchFrame(t, 1000, 0, nil, connV2Batch(t, 0, 0, -1, recs))
	for _, mode := range []string{"Read", "ReadMessage"} {
		b.Run(mode, func(b *testing.B) {
			c, _ := newConnFake(&testing.T{}, connFakeVersions(), func(v int16, req protocol.Message) (protocol.Message, []byte) {
				return nil, append([]byte(nil), frame...)
			})
			buf := make([]byte, 200)
			b.ReportAllocs()
			b.SetBytes(int64(len(frame)))
			for i := 0; i < b.N; i++ {
				c.Seek(0, SeekAbsolute|SeekDontCheck)
				batch := c.ReadBatch(1, 1<<20)
				for n := 0; ; n++ {
					var err error
					if mode == "Read" {
						_, err = batch.Read(buf)
					} else {
						_, err = batch.ReadMessage()
					}
					if err != nil {
						if n != 1000 {
							b.Fatalf("%d messages: %v", n, err)
						}
						break
					}
				}
				batch.Close()
			}
		})
	}
}

// connSetLastOffsetDelta rewrites the last offset delta of the v2 batch b
// (fixing the CRC), as compaction leaves it: covering records now gone.
func connSetLastOffsetDelta(b []byte, delta int32) []byte {
	binary.BigEndian.PutUint32(b[23:], uint32(delta))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], connCastagnoli))
	return b
}

// A batch's header says which offsets it covers, compacted records
// included: batches that end before the fetch offset are skipped, and
// reading to the end of a batch moves the offset past its last offset, so
// that a compacted tail costs no extra fetches.
func TestConnBatchCompactedHeaders(t *testing.T) {
	var respond func() []byte
	c, _ := newConnFake(t, connFakeVersions(), func(v int16, req protocol.Message) (protocol.Message, []byte) {
		return nil, respond()
	})

	// Offsets 3 and 4 survive of 3..12; the fetch starts at 7.
	respond = func() []byte {
		return connFetchFrame(t, 20, 0, nil, connSetLastOffsetDelta(connV2Batch(t, 3, 0, -1, connRecords(connKV("old", 2))), 9))
	}
	c.Seek(7, SeekAbsolute|SeekDontCheck)
	b := c.ReadBatch(1, 1000)
	if got, err := connReadBatch(b); len(got) != 0 || !errors.Is(err, io.EOF) {
		t.Errorf("batch below the offset: %v %v", got, err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if off, _ := c.Offset(); off != 13 {
		t.Errorf("offset %d after a batch ending at 12, want 13", off)
	}

	// 0..2 survive of 0..5, then 6 and 7 in a second batch, then 8..9 of
	// a batch covering 8..15; the fetch starts at 1.
	respond = func() []byte {
		var set []byte
		set = append(set, connSetLastOffsetDelta(connV2Batch(t, 0, 0, -1, connRecords(connKV("a", 3))), 5)...)
		set = append(set, connV2Batch(t, 6, 0, -1, connRecords(connKV("b", 2)))...)
		set = append(set, connSetLastOffsetDelta(connV2Batch(t, 8, 0, -1, connRecords(connKV("c", 2))), 7)...)
		return connFetchFrame(t, 20, 0, nil, set)
	}
	c.Seek(1, SeekAbsolute|SeekDontCheck)
	b = c.ReadBatch(1, 10000)
	got, err := connReadBatch(b)
	want := []string{"1:a-k1=a-v1", "2:a-k2=a-v2", "6:b-k0=b-v0", "7:b-k1=b-v1", "8:c-k0=c-v0", "9:c-k1=c-v1"}
	if !errors.Is(err, io.EOF) || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v %v, want %v", got, err, want)
	}
	if off := b.Offset(); off != 16 {
		t.Errorf("batch offset %d at the end, want 16", off)
	}
	b.Close()
	if off, _ := c.Offset(); off != 16 {
		t.Errorf("offset %d after the batches, want 16", off)
	}

	// Stopping inside a batch keeps the offset after the last message read.
	c.Seek(1, SeekAbsolute|SeekDontCheck)
	b = c.ReadBatch(1, 10000)
	if m, err := b.ReadMessage(); err != nil || m.Offset != 1 {
		t.Fatalf("first message %d %v", m.Offset, err)
	}
	b.Close()
	if off, _ := c.Offset(); off != 2 {
		t.Errorf("offset %d after one message, want 2", off)
	}
}
