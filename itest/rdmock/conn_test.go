package rdmock_test

import (
	"sort"
	"strconv"
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/itest/rdmock"
)

// Conn against the mock: DialLeader finds each partition's leader (moved
// away from broker 1 on purpose), ReadPartitions lists every partition with
// its leader and replicas, ReadOffsets follows what kafka-python and the
// Conn itself write, WriteMessages' records are read back by kafka-python,
// and ReadBatch returns kafka-python's records.
func TestConn(t *testing.T) {
	const partitions, n = 3, 40
	c := rdmock.Start(t, 3)
	topic := topicName(t)
	c.CreateTopic(topic, partitions)
	for p := 0; p < partitions; p++ {
		c.SetLeader(topic, p, 3-p) // 3, 2, 1
	}
	ctx := ctxFor(t, 60*time.Second)

	// ReadPartitions, from a connection to broker 1.
	conn1, err := kafka.DialContext(ctx, "tcp", c.Addrs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer conn1.Close()
	parts, err := conn1.ReadPartitions(topic)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].ID < parts[j].ID })
	if len(parts) != partitions {
		t.Fatalf("ReadPartitions: %d partitions, want %d: %+v", len(parts), partitions, parts)
	}
	for p, part := range parts {
		leader := 3 - p
		if part.Topic != topic || part.ID != p || part.Leader.ID != leader {
			t.Errorf("partition %d: %+v, want topic %s and leader %d", p, part, topic, leader)
		}
		if want := c.Addrs[leader-1]; kafkaAddr(part.Leader) != want {
			t.Errorf("partition %d: leader at %s, want %s", p, kafkaAddr(part.Leader), want)
		}
		if len(part.Replicas) != 3 {
			t.Errorf("partition %d: %d replicas, want 3", p, len(part.Replicas))
		}
	}

	// kafka-python writes to partition 1 (leader: broker 2).
	var recs []rdmock.Record
	for i := 0; i < n; i++ {
		recs = append(recs, rdmock.Record{
			Partition: 1,
			Key:       []byte("py-" + strconv.Itoa(i)),
			Value:     []byte("python-value-" + strconv.Itoa(i)),
			Headers:   []rdmock.Header{{Key: "from", Value: []byte("python")}},
		})
	}
	written := rdmock.PythonProduce(t, c.Bootstrap(), topic, recs)

	leader, err := kafka.DialLeader(ctx, "tcp", c.Addrs[0], topic, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer leader.Close()
	if got := leader.RemoteAddr().String(); got != c.Addrs[1] {
		t.Errorf("DialLeader connected to %s, want broker 2 at %s", got, c.Addrs[1])
	}
	first, last, err := leader.ReadOffsets()
	if err != nil || first != 0 || last != n {
		t.Fatalf("ReadOffsets: %d, %d, %v; want 0, %d", first, last, err, n)
	}
	leader.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := leader.Seek(0, kafka.SeekAbsolute); err != nil {
		t.Fatal(err)
	}
	batch := leader.ReadBatch(1, 1<<20)
	var read []kafka.Message
	for len(read) < n {
		m, err := batch.ReadMessage()
		if err != nil {
			break
		}
		read = append(read, m)
	}
	if err := batch.Close(); err != nil && len(read) < n {
		t.Fatalf("ReadBatch: %v after %d messages", err, len(read))
	}
	for i := range read {
		read[i].Partition = 1
	}
	rdmock.SameRecords(t, "Conn.ReadBatch", fromReader(read), written, true)

	// The Conn writes; kafka-python reads everything back.
	msgs := messages("conn", n, 1)
	for i := range msgs {
		msgs[i].Key = []byte("k-1-" + strconv.Itoa(i))
	}
	if _, err := leader.WriteMessages(msgs...); err != nil {
		t.Fatalf("WriteMessages: %v", err)
	}
	if _, last, err := leader.ReadOffsets(); err != nil || last != 2*n {
		t.Fatalf("ReadOffsets after writing: last %d, %v; want %d", last, err, 2*n)
	}
	want := append([]rdmock.Record{}, written...)
	for i, m := range msgs {
		r := record(1, m)
		r.Offset = int64(n + i)
		want = append(want, r)
	}
	rdmock.SameRecords(t, "kafka-python", rdmock.PythonConsume(t, c.Bootstrap(), topic, 2*n, 30*time.Second), want, true)
}

func kafkaAddr(b kafka.Broker) string { return b.Host + ":" + strconv.Itoa(b.Port) }
