package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
)

// Integration tests of Conn and Dialer against the cluster of
// KAFKA_BROKERS (the embedded kfake cluster of itest/cmd/cluster by
// default).

func connTestAddrs(t *testing.T, env, fallback string) []string {
	t.Helper()
	list := os.Getenv(env)
	if list == "" {
		list = fallback
	}
	addrs := strings.Split(list, ",")
	for _, a := range addrs {
		if c, err := net.DialTimeout("tcp", a, 2*time.Second); err == nil {
			c.Close()
			return addrs
		}
	}
	if os.Getenv("KAFKA_REQUIRE_BROKERS") != "" {
		t.Fatalf("no kafka broker reachable at %s (%s)", list, env)
	}
	t.Skipf("no kafka broker reachable at %s (%s)", list, env)
	return nil
}

func connTestBroker(t *testing.T) string {
	return connTestAddrs(t, "KAFKA_BROKERS", "127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094")[0]
}

func connTestSASLBroker(t *testing.T) string {
	return connTestAddrs(t, "KAFKA_SASL_BROKERS", "127.0.0.1:9096")[0]
}

var connTestSeq atomic.Int64

func connTestContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// connTestTopic creates a topic with the given number of partitions (on the
// controller) and deletes it when the test ends.
func connTestTopic(t *testing.T, addr string, partitions int) string {
	t.Helper()
	topic := fmt.Sprintf("kafka-go-conn-%s-%d-%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano(), connTestSeq.Add(1))
	c := connTestController(t, addr)
	defer c.Close()
	if err := c.CreateTopics(TopicConfig{Topic: topic, NumPartitions: partitions, ReplicationFactor: 1}); err != nil {
		t.Fatalf("creating topic %s: %v", topic, err)
	}
	t.Cleanup(func() {
		c := connTestController(t, addr)
		defer c.Close()
		c.DeleteTopics(topic)
	})
	return topic
}

func connTestController(t *testing.T, addr string) *Conn {
	t.Helper()
	ctx := connTestContext(t)
	c, err := DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	ctrl, err := c.Controller()
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	cc, err := DialContext(ctx, "tcp", net.JoinHostPort(ctrl.Host, fmt.Sprint(ctrl.Port)))
	if err != nil {
		t.Fatal(err)
	}
	return cc
}

func connTestLeader(t *testing.T, addr, topic string, partition int) *Conn {
	t.Helper()
	c, err := DialLeader(connTestContext(t), "tcp", addr, topic, partition)
	if err != nil {
		t.Fatalf("DialLeader(%s, %d): %v", topic, partition, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// connCheckGoroutines fails the test if goroutines started during it are
// still running once it ends (after giving them time to exit).
func connCheckGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		for i := 0; i < 100; i++ {
			if runtime.NumGoroutine() <= before {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines before, %d after:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
	})
}

func connTestMessages(n int, prefix string) []Message {
	base := time.UnixMilli(time.Now().UnixMilli()).Add(-time.Hour).UTC()
	msgs := make([]Message, n)
	for i := range msgs {
		msgs[i] = Message{
			Key:   []byte(fmt.Sprintf("%s-key-%d", prefix, i)),
			Value: []byte(fmt.Sprintf("%s-value-%d-%s", prefix, i, strings.Repeat("x", i*7))),
			Time:  base.Add(time.Duration(i) * time.Millisecond),
		}
		if i%2 == 1 {
			msgs[i].Headers = []Header{{Key: "h", Value: []byte{byte(i)}}, {Key: "empty", Value: []byte{}}}
		}
	}
	msgs[0].Key = nil // a null key
	return msgs
}

// connReadAll reads every message of the partition from offset first, one
// batch after another, until n messages were read.
func connReadAll(t *testing.T, c *Conn, n int) []Message {
	t.Helper()
	var out []Message
	for attempts := 0; len(out) < n; attempts++ {
		if attempts > 50 {
			t.Fatalf("read %d messages of %d", len(out), n)
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		b := c.ReadBatch(1, 1<<20)
		for {
			m, err := b.ReadMessage()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("ReadMessage: %v", err)
				}
				break
			}
			out = append(out, m)
		}
		if err := b.Close(); err != nil {
			t.Fatalf("Batch.Close: %v", err)
		}
	}
	return out
}

func connCompareMessages(t *testing.T, topic string, partition int, firstOffset int64, want, got []Message) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d messages, want %d", len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		if g.Topic != topic || g.Partition != partition || g.Offset != firstOffset+int64(i) {
			t.Errorf("message %d: topic %q partition %d offset %d, want %q %d %d", i, g.Topic, g.Partition, g.Offset, topic, partition, firstOffset+int64(i))
		}
		if !bytes.Equal(g.Key, w.Key) || (g.Key == nil) != (w.Key == nil) {
			t.Errorf("message %d: key %q, want %q", i, g.Key, w.Key)
		}
		if !bytes.Equal(g.Value, w.Value) {
			t.Errorf("message %d: value %q, want %q", i, g.Value, w.Value)
		}
		if !g.Time.Equal(w.Time) {
			t.Errorf("message %d: time %v, want %v", i, g.Time, w.Time)
		}
		if len(g.Headers) != len(w.Headers) {
			t.Errorf("message %d: headers %v, want %v", i, g.Headers, w.Headers)
			continue
		}
		for j := range w.Headers {
			if g.Headers[j].Key != w.Headers[j].Key || !bytes.Equal(g.Headers[j].Value, w.Headers[j].Value) {
				t.Errorf("message %d: header %d is %v, want %v", i, j, g.Headers[j], w.Headers[j])
			}
		}
	}
}

func TestConnIntegrationMetadata(t *testing.T) {
	addr := connTestBroker(t)
	connCheckGoroutines(t)
	topic := connTestTopic(t, addr, 3)
	ctx := connTestContext(t)

	c, err := DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	versions, err := c.ApiVersions()
	if err != nil {
		t.Fatal(err)
	}
	found := map[int16]bool{}
	for _, v := range versions {
		found[v.ApiKey] = v.MinVersion <= v.MaxVersion
	}
	for _, key := range []int16{0, 1, 2, 3, 18} {
		if !found[key] {
			t.Errorf("ApiVersions lacks API %d: %v", key, versions)
		}
	}

	brokers, err := c.Brokers()
	if err != nil {
		t.Fatal(err)
	}
	if len(brokers) == 0 {
		t.Fatal("no brokers")
	}
	ctrl, err := c.Controller()
	if err != nil {
		t.Fatal(err)
	}
	inList := false
	for _, b := range brokers {
		inList = inList || b == ctrl
	}
	if !inList || ctrl.Port == 0 {
		t.Errorf("controller %+v not among brokers %+v", ctrl, brokers)
	}
	self := c.Broker()
	if self.Host == "" || fmt.Sprint(self.Port) != strings.Split(addr, ":")[1] {
		t.Errorf("Broker() = %+v for %s", self, addr)
	}
	if c.LocalAddr() == nil || c.RemoteAddr().String() != addr {
		t.Errorf("addresses %v -> %v", c.LocalAddr(), c.RemoteAddr())
	}

	parts, err := c.ReadPartitions(topic)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 3 {
		t.Fatalf("ReadPartitions: %+v", parts)
	}
	byID := map[int]Partition{}
	for _, p := range parts {
		if p.Topic != topic || p.Leader.Port == 0 || len(p.Replicas) != 1 || len(p.Isr) != 1 || p.OfflineReplicas == nil {
			t.Errorf("partition %+v", p)
		}
		byID[p.ID] = p
	}
	if len(byID) != 3 || byID[0].Topic == "" || byID[1].Topic == "" || byID[2].Topic == "" {
		t.Fatalf("partitions %+v", parts)
	}
	all, err := c.ReadPartitions()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range all {
		if p.Topic == topic {
			n++
		}
	}
	if n != 3 {
		t.Errorf("ReadPartitions() of all topics has %d partitions of %s", n, topic)
	}

	lparts, err := LookupPartitions(ctx, "tcp", addr, topic)
	if err != nil || len(lparts) != 3 {
		t.Fatalf("LookupPartitions: %v %+v", err, lparts)
	}
	p1, err := LookupPartition(ctx, "tcp", addr, topic, 1)
	if err != nil || p1.ID != 1 || p1.Leader != byID[1].Leader {
		t.Fatalf("LookupPartition: %v %+v", err, p1)
	}
	leader, err := DefaultDialer.LookupLeader(ctx, "tcp", addr, topic, 2)
	if err != nil || leader != byID[2].Leader {
		t.Fatalf("LookupLeader: %v %+v", err, leader)
	}
	// A partition missing from the metadata may be one being added: the
	// lookup retries until the context ends.
	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if _, err := LookupPartition(short, "tcp", addr, topic, 42); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("LookupPartition of a missing partition: %v", err)
	}

	pc, err := DialPartition(ctx, "tcp", addr, p1)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	if b := pc.Broker(); b.ID != p1.Leader.ID || b.Port != p1.Leader.Port {
		t.Errorf("DialPartition: connected to %+v, leader is %+v", b, p1.Leader)
	}
}

func TestConnIntegrationWriteRead(t *testing.T) {
	addr := connTestBroker(t)
	connCheckGoroutines(t)
	topic := connTestTopic(t, addr, 2)
	c := connTestLeader(t, addr, topic, 1)

	msgs := connTestMessages(10, "plain")
	c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	n, err := c.WriteMessages(msgs[:5]...)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, m := range msgs[:5] {
		want += len(m.Key) + len(m.Value)
	}
	if n != want {
		t.Errorf("WriteMessages wrote %d bytes, want %d", n, want)
	}
	n, part, offset, _, err := c.WriteCompressedMessagesAt(nil, msgs[5:]...)
	if err != nil || part != 1 || offset != 5 || n == 0 {
		t.Fatalf("WriteCompressedMessagesAt: n=%d partition=%d offset=%d err=%v", n, part, offset, err)
	}

	if off, whence := c.Offset(); off != 0 || whence != SeekStart {
		t.Errorf("Offset() = %d, %d before any read", off, whence)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b := c.ReadBatch(1, 1<<20)
	if b.Err() != nil {
		t.Fatal(b.Err())
	}
	if b.HighWaterMark() != 10 || b.Partition() != 1 || b.Offset() != 0 || b.Throttle() != 0 {
		t.Errorf("batch: hwm %d partition %d offset %d throttle %v", b.HighWaterMark(), b.Partition(), b.Offset(), b.Throttle())
	}
	var got []Message
	for {
		m, err := b.ReadMessage()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if m.HighWaterMark != 10 {
			t.Errorf("message HighWaterMark %d", m.HighWaterMark)
		}
		got = append(got, m)
	}
	if _, err := b.ReadMessage(); !errors.Is(err, io.EOF) {
		t.Errorf("ReadMessage after the end: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	connCompareMessages(t, topic, 1, 0, msgs, got)
	if off, whence := c.Offset(); off != 10 || whence != SeekAbsolute {
		t.Errorf("Offset() = %d, %d after reading everything", off, whence)
	}

	// Read and ReadMessage on the Conn itself.
	if _, err := c.Seek(3, SeekAbsolute); err != nil {
		t.Fatal(err)
	}
	m, err := c.ReadMessage(1 << 20)
	if err != nil || m.Offset != 3 || string(m.Value) != string(msgs[3].Value) {
		t.Fatalf("ReadMessage: %v %+v", err, m)
	}
	buf := make([]byte, 100)
	k, err := c.Read(buf)
	if err != nil || string(buf[:k]) != string(msgs[4].Value) {
		t.Fatalf("Read: %v %q", err, buf[:k])
	}
	small := make([]byte, 4)
	if _, err := c.Read(small); !errors.Is(err, io.ErrShortBuffer) {
		t.Fatalf("Read into a short buffer: %v", err)
	}
	if off, _ := c.Offset(); off != 5 {
		t.Errorf("a short read moved the offset to %d", off)
	}

	// Write, the net.Conn way, then the new message is readable.
	if k, err := c.Write([]byte("raw")); err != nil || k != 3 {
		t.Fatalf("Write: %d %v", k, err)
	}
	if _, err := c.Seek(10, SeekAbsolute); err != nil {
		t.Fatal(err)
	}
	if m, err := c.ReadMessage(1 << 20); err != nil || string(m.Value) != "raw" || m.Key != nil {
		t.Fatalf("ReadMessage after Write: %v %+v", err, m)
	}
}

func TestConnIntegrationWriteErrors(t *testing.T) {
	addr := connTestBroker(t)
	topic := connTestTopic(t, addr, 1)
	c := connTestLeader(t, addr, topic, 0)

	if err := c.SetRequiredAcks(0); !errors.Is(err, InvalidRequiredAcks) {
		t.Errorf("SetRequiredAcks(0): %v", err)
	}
	if err := c.SetRequiredAcks(1); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteMessages(Message{Topic: "other", Value: []byte("x")}); err != errInvalidWriteTopic {
		t.Errorf("message for another topic: %v", err)
	}
	if _, err := c.WriteMessages(Message{Partition: 1, Value: []byte("x")}); err != errInvalidWritePartition {
		t.Errorf("message for another partition: %v", err)
	}
	if n, err := c.WriteMessages(); n != 0 || err != nil {
		t.Errorf("writing nothing: %d %v", n, err)
	}
	if _, err := c.WriteMessages(Message{Topic: topic, Value: []byte("ok")}); err != nil {
		t.Errorf("acks=1 write: %v", err)
	}

	// A connection for a partition that does not exist gets the broker's
	// error, and stays usable.
	bad := NewConn(connDialRaw(t, addr), topic, 7)
	defer bad.Close()
	if _, err := bad.WriteMessages(Message{Value: []byte("x")}); !errors.Is(err, UnknownTopicOrPartition) {
		t.Errorf("write to a missing partition: %v", err)
	}
	if _, err := bad.ReadLastOffset(); !errors.Is(err, UnknownTopicOrPartition) {
		t.Errorf("offsets of a missing partition: %v", err)
	}
	if _, err := bad.Brokers(); err != nil {
		t.Errorf("connection unusable after broker errors: %v", err)
	}

	// Writing to a closed connection is a network error.
	c.Close()
	var opErr *net.OpError
	if _, err := c.Write([]byte("closed")); !errors.As(err, &opErr) {
		t.Errorf("write to a closed connection: %v", err)
	}
}

func connDialRaw(t *testing.T, addr string) net.Conn {
	nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return nc
}

func TestConnIntegrationCompression(t *testing.T) {
	addr := connTestBroker(t)
	topic := connTestTopic(t, addr, 1)
	c := connTestLeader(t, addr, topic, 0)

	var all []Message
	for _, codec := range []Compression{Gzip, Snappy, Lz4, Zstd} {
		msgs := connTestMessages(20, codec.String())
		if _, err := c.WriteCompressedMessages(codec.Codec(), msgs...); err != nil {
			t.Fatalf("%s: %v", codec, err)
		}
		all = append(all, msgs...)
	}
	got := connReadAll(t, c, len(all))
	connCompareMessages(t, topic, 0, 0, all, got)

	// Reading from the middle of a compressed batch skips the records
	// before the requested offset.
	if _, err := c.Seek(25, SeekAbsolute|SeekDontCheck); err != nil {
		t.Fatal(err)
	}
	m, err := c.ReadMessage(1 << 20)
	if err != nil || m.Offset != 25 || string(m.Value) != string(all[25].Value) {
		t.Fatalf("ReadMessage at 25: %v offset %d", err, m.Offset)
	}
}

func TestConnIntegrationSeekAndOffsets(t *testing.T) {
	addr := connTestBroker(t)
	topic := connTestTopic(t, addr, 1)
	c := connTestLeader(t, addr, topic, 0)

	first, last, err := c.ReadOffsets()
	if err != nil || first != 0 || last != 0 {
		t.Fatalf("ReadOffsets of an empty partition: %d %d %v", first, last, err)
	}
	msgs := connTestMessages(10, "seek")
	if _, err := c.WriteMessages(msgs...); err != nil {
		t.Fatal(err)
	}
	if o, err := c.ReadFirstOffset(); err != nil || o != 0 {
		t.Errorf("ReadFirstOffset: %d %v", o, err)
	}
	if o, err := c.ReadLastOffset(); err != nil || o != 10 {
		t.Errorf("ReadLastOffset: %d %v", o, err)
	}
	if o, err := c.ReadOffset(msgs[4].Time); err != nil || o != 4 {
		t.Errorf("ReadOffset(time of message 4): %d %v", o, err)
	}
	if o, err := c.ReadOffset(msgs[9].Time.Add(time.Hour)); err != nil || o != -1 {
		t.Errorf("ReadOffset(after the last message): %d %v", o, err)
	}

	for _, tc := range []struct {
		offset int64
		whence int
		want   int64
	}{
		{2, SeekStart, 2},
		{7, SeekAbsolute, 7},
		{1, SeekCurrent, 8},
		{-3, SeekCurrent, 5},
		{3, SeekEnd, 7},
		{0, SeekEnd, 10},
		{4, SeekAbsolute | SeekDontCheck, 4},
		{100, SeekAbsolute | SeekDontCheck, 100},
		{-90, SeekCurrent | SeekDontCheck, 10},
	} {
		got, err := c.Seek(tc.offset, tc.whence)
		if err != nil || got != tc.want {
			t.Errorf("Seek(%d, %#x) = %d, %v; want %d", tc.offset, tc.whence, got, err, tc.want)
		}
		if o, w := c.Offset(); o != tc.want || w != SeekAbsolute {
			t.Errorf("Offset() after Seek(%d, %#x) = %d, %d", tc.offset, tc.whence, o, w)
		}
	}
	if _, err := c.Seek(11, SeekAbsolute); !errors.Is(err, OffsetOutOfRange) {
		t.Errorf("Seek past the end: %v", err)
	}
	if _, err := c.Seek(1, SeekEnd+SeekCurrent+1); err == nil {
		t.Error("Seek with an invalid whence succeeded")
	}
	if _, err := c.Seek(8, SeekAbsolute); err != nil {
		t.Fatal(err)
	}
	m, err := c.ReadMessage(1 << 20)
	if err != nil || m.Offset != 8 {
		t.Fatalf("ReadMessage after Seek(8): %v %d", err, m.Offset)
	}

	// Reading past the end with SeekDontCheck gets the broker's error.
	c.Seek(50, SeekAbsolute|SeekDontCheck)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b := c.ReadBatch(1, 1<<20)
	if !errors.Is(b.Err(), OffsetOutOfRange) {
		t.Errorf("ReadBatch out of range: %v", b.Err())
	}
	if _, err := b.ReadMessage(); !errors.Is(err, OffsetOutOfRange) {
		t.Errorf("ReadMessage of a failed batch: %v", err)
	}
	if err := b.Close(); !errors.Is(err, OffsetOutOfRange) {
		t.Errorf("Close of a failed batch: %v", err)
	}
}

func TestConnIntegrationDeadlines(t *testing.T) {
	addr := connTestBroker(t)
	connCheckGoroutines(t)
	topic := connTestTopic(t, addr, 1)
	c := connTestLeader(t, addr, topic, 0)
	if _, err := c.WriteMessages(Message{Value: []byte("one")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Seek(0, SeekEnd); err != nil {
		t.Fatal(err)
	}

	// At the end of the partition, the broker waits until shortly before
	// the read deadline, then the batch reports a timeout.
	c.SetReadDeadline(time.Now().Add(1500 * time.Millisecond))
	_, err := c.ReadMessage(1 << 20)
	if !errors.Is(err, RequestTimedOut) && !isTimeout(err) {
		t.Fatalf("ReadMessage at the end of the partition: %v", err)
	}

	// Reading an empty partition through Read times out the same way.
	empty := connTestLeader(t, addr, connTestTopic(t, addr, 1), 0)
	empty.SetReadDeadline(time.Now().Add(time.Second))
	if n, err := empty.Read(make([]byte, 100)); n != 0 || !isTimeout(err) {
		t.Errorf("Read of an empty partition: %d %v", n, err)
	}

	// A read deadline shorter than MaxWait wins: the socket times out.
	short := connTestLeader(t, addr, topic, 0)
	short.SetDeadline(time.Now().Add(100 * time.Millisecond))
	b := short.ReadBatchWith(ReadBatchConfig{MinBytes: 1 << 20, MaxBytes: 1 << 20, MaxWait: 2 * time.Second})
	var netErr net.Error
	if err := b.Err(); !errors.As(err, &netErr) || !netErr.Timeout() {
		t.Errorf("fetch with MaxWait past the deadline: %v", err)
	}
	b.Close()

	// A deadline in the past fails the next operation with a timeout.
	c.SetDeadline(time.Now().Add(-time.Second))
	if _, err := c.ReadPartitions(); !isTimeout(err) {
		t.Errorf("ReadPartitions past the deadline: %v", err)
	}

	// An explicit MaxWait does not depend on deadlines.
	d := connTestLeader(t, addr, topic, 0)
	d.Seek(1, SeekAbsolute)
	b = d.ReadBatchWith(ReadBatchConfig{MinBytes: 1, MaxBytes: 1 << 20, MaxWait: 200 * time.Millisecond})
	if _, err := b.ReadMessage(); !errors.Is(err, RequestTimedOut) {
		t.Errorf("ReadMessage of an empty fetch: %v", err)
	}
	if err := b.Close(); !errors.Is(err, RequestTimedOut) {
		t.Errorf("Close of an empty fetch: %v", err)
	}

	// A deadline set while an operation is blocked interrupts it.
	e := connTestLeader(t, addr, topic, 0)
	e.Seek(1, SeekAbsolute)
	go func() {
		time.Sleep(200 * time.Millisecond)
		e.SetReadDeadline(time.Now())
	}()
	b = e.ReadBatchWith(ReadBatchConfig{MinBytes: 1, MaxBytes: 1 << 20, MaxWait: time.Minute})
	if err := b.Err(); !isTimeout(err) {
		t.Errorf("fetch interrupted by SetReadDeadline: %v", err)
	}
	b.Close()
}

func TestConnIntegrationCreateDeleteTopics(t *testing.T) {
	addr := connTestBroker(t)
	c := connTestController(t, addr)
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))

	topic := fmt.Sprintf("kafka-go-conn-create-%d", time.Now().UnixNano())
	config := TopicConfig{
		Topic:             topic,
		NumPartitions:     4,
		ReplicationFactor: 1,
		ConfigEntries:     []ConfigEntry{{ConfigName: "retention.ms", ConfigValue: "3600000"}},
	}
	if err := c.CreateTopics(config); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTopics(config); err != nil {
		t.Errorf("creating an existing topic: %v", err)
	}
	parts, err := c.ReadPartitions(topic)
	if err != nil || len(parts) != 4 {
		t.Fatalf("partitions of the new topic: %v %+v", err, parts)
	}
	if err := c.DeleteTopics(topic); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteTopics(topic); !errors.Is(err, UnknownTopicOrPartition) {
		t.Errorf("deleting a deleted topic: %v", err)
	}
	if err := c.CreateTopics(TopicConfig{Topic: "bad-" + topic, NumPartitions: 1, ReplicationFactor: 10}); !errors.Is(err, InvalidReplicationFactor) {
		t.Errorf("creating a topic with 10 replicas on 3 brokers: %v", err)
	}
}

func TestConnIntegrationSASL(t *testing.T) {
	addr := connTestSASLBroker(t)
	connCheckGoroutines(t)
	mech := func(t *testing.T, algo scram.Algorithm, user, pass string) sasl.Mechanism {
		m, err := scram.Mechanism(algo, user, pass)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, tc := range []struct {
		name string
		good sasl.Mechanism
		bad  sasl.Mechanism
	}{
		{"PLAIN", plain.Mechanism{Username: "plain-user", Password: "plain-secret"}, plain.Mechanism{Username: "plain-user", Password: "wrong"}},
		{"SCRAM-SHA-256", mech(t, scram.SHA256, "scram256-user", "scram256-secret"), mech(t, scram.SHA256, "scram256-user", "wrong")},
		{"SCRAM-SHA-512", mech(t, scram.SHA512, "scram512-user", "scram512-secret"), mech(t, scram.SHA512, "scram512-user", "wrong")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &Dialer{Timeout: 20 * time.Second, SASLMechanism: tc.good, ClientID: "conn-sasl-test"}
			c, err := d.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			brokers, err := c.Brokers()
			c.Close()
			if err != nil || len(brokers) == 0 {
				t.Fatalf("Brokers after authenticating: %v %v", err, brokers)
			}

			d.SASLMechanism = tc.bad
			_, err = d.Dial("tcp", addr)
			if !errors.Is(err, SASLAuthenticationFailed) {
				t.Fatalf("wrong password: %v", err)
			}
		})
	}

	// Without SASL, the broker refuses to talk.
	d := &Dialer{Timeout: 5 * time.Second}
	if c, err := d.Dial("tcp", addr); err == nil {
		_, err = c.Brokers()
		c.Close()
		if err == nil {
			t.Error("unauthenticated requests succeeded")
		}
	}
}

func TestConnIntegrationDialErrors(t *testing.T) {
	addr := connTestBroker(t)
	connCheckGoroutines(t)

	// A context already done fails the dial.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := DialContext(ctx, "tcp", addr); !errors.Is(err, context.Canceled) {
		t.Errorf("dial with a canceled context: %v", err)
	}

	// A listener that accepts and never answers: the dial gives up when
	// the dialer's timeout expires.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	d := &Dialer{Timeout: 300 * time.Millisecond}
	if _, err := d.Dial("tcp", ln.Addr().String()); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("dial of a silent server: %v", err)
	}
	(<-accepted).Close()

	// The resolver maps a made-up name to the broker.
	d = &Dialer{Timeout: 10 * time.Second, Resolver: connStaticResolver{addr}}
	_, port, _ := net.SplitHostPort(addr)
	c, err := d.Dial("tcp", net.JoinHostPort("kafka.invalid", port))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ApiVersions(); err != nil {
		t.Error(err)
	}
	c.Close()
}

type connStaticResolver struct{ addr string }

func (r connStaticResolver) LookupHost(context.Context, string) ([]string, error) {
	return []string{r.addr}, nil
}

func TestConnIntegrationConcurrent(t *testing.T) {
	addr := connTestBroker(t)
	connCheckGoroutines(t)
	topic := connTestTopic(t, addr, 1)
	c := connTestLeader(t, addr, topic, 0)

	const writers, perWriter = 4, 25
	errs := make(chan error, 2*writers)
	for w := 0; w < writers; w++ {
		go func(w int) {
			for i := 0; i < perWriter; i++ {
				if _, err := c.WriteMessages(Message{Key: []byte(fmt.Sprint(w)), Value: []byte(fmt.Sprint(i))}); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}(w)
		go func() {
			for i := 0; i < perWriter; i++ {
				if _, _, err := c.ReadOffsets(); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for i := 0; i < 2*writers; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	got := connReadAll(t, c, writers*perWriter)
	next := map[string]int{}
	for _, m := range got {
		if want := fmt.Sprint(next[string(m.Key)]); string(m.Value) != want {
			t.Fatalf("writer %s: value %s, want %s", m.Key, m.Value, want)
		}
		next[string(m.Key)]++
	}
}
