// Package kafka4_test checks that kafka-go never sends a request version
// that Kafka 4.0 removed (KIP-896), by running the client's main paths
// against an in-process cluster that refuses those versions.
//
// The negotiation itself makes this hold for every negotiated request (the
// highest version both sides support is always picked, and this package's
// highest versions are all above the removed ranges); what this test adds is
// coverage of every path, including requests sent before or without
// negotiation (ApiVersions, SASL), through Writer, Reader, consumer groups,
// Conn and Client. It is not a test against the JVM broker: kfake still
// advertises (and would accept) the old versions, which is why violations
// are recorded here rather than left to the broker.
package kafka4_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/itest/clustertest"
	"github.com/segmentio/kafka-go/sasl/plain"
)

// removedUpTo maps each API to the highest version Kafka 4.0 no longer
// serves. The ranges are the "deprecatedVersions" of the 4.0 protocol
// definitions; for Produce that marks v0-6, a stricter range than the v0-2
// KIP-896 finally removed, and the stricter one is held here.
var removedUpTo = map[kmsg.Key]int16{
	kmsg.Produce:                 6,
	kmsg.Fetch:                   3,
	kmsg.ListOffsets:             0,
	kmsg.Metadata:                3,
	kmsg.OffsetCommit:            1,
	kmsg.OffsetFetch:             0,
	kmsg.FindCoordinator:         0,
	kmsg.JoinGroup:               1,
	kmsg.SASLHandshake:           0,
	kmsg.CreateTopics:            1,
	kmsg.DeleteTopics:            0,
	kmsg.DescribeACLs:            0,
	kmsg.CreateACLs:              0,
	kmsg.DeleteACLs:              0,
	kmsg.DescribeConfigs:         0,
	kmsg.DeleteGroups:            0,
	kmsg.OffsetForLeaderEpoch:    1,
	kmsg.AlterReplicaLogDirs:     0,
	kmsg.DescribeLogDirs:         0,
	kmsg.CreateDelegationToken:   0,
	kmsg.RenewDelegationToken:    0,
	kmsg.ExpireDelegationToken:   0,
	kmsg.DescribeDelegationToken: 0,
}

// versionWatch records the version of every request a cluster receives and
// closes the connection of any request at a removed version, as a client
// talking to Kafka 4.0 would see it fail.
type versionWatch struct {
	mu       sync.Mutex
	seen     map[kmsg.Key]map[int16]bool
	violated []string
}

func watch(c *kfake.Cluster) *versionWatch {
	w := &versionWatch{seen: map[kmsg.Key]map[int16]bool{}}
	c.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		key, v := kmsg.Key(req.Key()), req.GetVersion()
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.seen[key] == nil {
			w.seen[key] = map[int16]bool{}
		}
		w.seen[key][v] = true
		if max, ok := removedUpTo[key]; ok && v <= max {
			w.violated = append(w.violated, fmt.Sprintf("%s v%d", key.Name(), v))
			return nil, errors.New("version removed in Kafka 4.0"), true
		}
		return nil, nil, false
	})
	return w
}

func (w *versionWatch) check(t *testing.T, want ...kmsg.Key) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.violated) > 0 {
		t.Errorf("requests at versions Kafka 4.0 removed: %v", w.violated)
	}
	for _, key := range want {
		if len(w.seen[key]) == 0 {
			t.Errorf("no %s request was sent: the workload does not cover it", key.Name())
		}
	}
	for key, versions := range w.seen {
		t.Logf("%s: versions %v", key.Name(), versions)
	}
}

func TestNoRemovedVersionsSent(t *testing.T) {
	addrs, c := clustertest.Start(t)
	watched := watch(c)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic, group := clustertest.Topic(t), "group-"+strconv.FormatInt(time.Now().UnixNano(), 36)

	client := &kafka.Client{Addr: kafka.TCP(addrs...), Timeout: 10 * time.Second}
	created, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: 3, ReplicationFactor: 1}}})
	if err != nil || created.Errors[topic] != nil {
		t.Fatalf("CreateTopics: %v %v", err, created)
	}

	// Writer: Metadata and Produce over the Transport.
	w := &kafka.Writer{Addr: kafka.TCP(addrs...), Topic: topic, RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
	msgs := make([]kafka.Message, 9)
	for i := range msgs {
		msgs[i] = kafka.Message{Key: []byte(strconv.Itoa(i)), Value: []byte("v" + strconv.Itoa(i))}
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("WriteMessages: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	// Consumer group: FindCoordinator, JoinGroup, SyncGroup, Heartbeat,
	// OffsetFetch, ListOffsets, Fetch, OffsetCommit, LeaveGroup.
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: addrs, GroupID: group, Topic: topic, MaxWait: 100 * time.Millisecond,
		StartOffset: kafka.FirstOffset, HeartbeatInterval: 100 * time.Millisecond,
	})
	for i := range msgs {
		if _, err := r.ReadMessage(ctx); err != nil {
			t.Fatalf("group read %d: %v", i, err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}

	// Partition reader and Conn: ApiVersions, Metadata, ListOffsets, Fetch
	// through Dialer and Conn.
	pr := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: topic, Partition: 0, MaxWait: 100 * time.Millisecond})
	if _, err := pr.ReadMessage(ctx); err != nil {
		t.Fatalf("partition read: %v", err)
	}
	pr.Close()
	conn, err := kafka.DialLeader(ctx, "tcp", addrs[0], topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ReadPartitions(topic); err != nil {
		t.Errorf("ReadPartitions: %v", err)
	}
	if _, err := conn.WriteMessages(kafka.Message{Value: []byte("conn")}); err != nil {
		t.Errorf("Conn.WriteMessages: %v", err)
	}
	if _, _, err := conn.ReadOffsets(); err != nil {
		t.Errorf("ReadOffsets: %v", err)
	}
	conn.Close()

	// Admin requests whose old versions 4.0 removed; their answers from
	// kfake do not matter here, only the versions they went out with.
	client.DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{{ResourceType: kafka.ResourceTypeTopic, ResourceName: topic}}})
	client.DescribeACLs(ctx, &kafka.DescribeACLsRequest{Filter: kafka.ACLFilter{ResourceTypeFilter: kafka.ResourceTypeAny, ResourcePatternTypeFilter: kafka.PatternTypeAny, Operation: kafka.ACLOperationTypeAny, PermissionType: kafka.ACLPermissionTypeAny}})
	client.ListGroups(ctx, &kafka.ListGroupsRequest{})
	client.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{group}})
	client.DeleteGroups(ctx, &kafka.DeleteGroupsRequest{GroupIDs: []string{group}})
	client.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{topic}})

	watched.check(t, kmsg.ApiVersions, kmsg.Metadata, kmsg.CreateTopics, kmsg.Produce,
		kmsg.FindCoordinator, kmsg.JoinGroup, kmsg.SyncGroup, kmsg.OffsetFetch,
		kmsg.ListOffsets, kmsg.Fetch, kmsg.OffsetCommit, kmsg.LeaveGroup,
		kmsg.DescribeConfigs, kmsg.DescribeACLs, kmsg.ListGroups, kmsg.DescribeGroups,
		kmsg.DeleteGroups, kmsg.DeleteTopics)
}

// The SASL handshake goes out before any other request of a connection
// but the ApiVersions one; it must not use SaslHandshake v0 either.
func TestNoRemovedVersionsSentSASL(t *testing.T) {
	addrs, c := clustertest.StartSASL(t)
	watched := watch(c)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	mech := plain.Mechanism{Username: clustertest.PlainUser, Password: clustertest.PlainSecret}

	dialer := &kafka.Dialer{Timeout: 10 * time.Second, SASLMechanism: mech}
	conn, err := dialer.DialContext(ctx, "tcp", addrs[0])
	if err != nil {
		t.Fatalf("Dialer with SASL: %v", err)
	}
	conn.Close()

	tr := &kafka.Transport{SASL: mech, Dial: (&net.Dialer{}).DialContext}
	defer tr.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(addrs...), Transport: tr, Timeout: 10 * time.Second}
	if _, err := client.Metadata(ctx, &kafka.MetadataRequest{}); err != nil {
		t.Fatalf("Transport with SASL: %v", err)
	}
	watched.check(t, kmsg.ApiVersions, kmsg.SASLHandshake, kmsg.SASLAuthenticate, kmsg.Metadata)
}
