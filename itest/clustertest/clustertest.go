// Package clustertest gives the tests of the itest module a Kafka cluster to
// talk to. There are two kinds:
//
//   - In-process clusters (Start, StartSASL): a fresh kfake cluster on random
//     ports per test, closed by t.Cleanup. Use them when a test needs fault
//     injection through the returned *kfake.Cluster (ControlKey, DelayProduce,
//     MoveTopicPartition, ...) or isolation from other tests.
//
//   - The external cluster (External, ExternalSASL): the long-running one
//     started by `make cluster`, `make docker` or .ci/run, found through
//     KAFKA_BROKERS / KAFKA_SASL_BROKERS. Tests skip when it is unreachable
//     unless KAFKA_REQUIRE_BROKERS is set, in which case they fail.
package clustertest

import (
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/segmentio/kafka-go/itest/internal/fakecluster"
)

// Environment variables read by this package.
const (
	EnvBrokers        = "KAFKA_BROKERS"
	EnvSASLBrokers    = "KAFKA_SASL_BROKERS"
	EnvRequireBrokers = "KAFKA_REQUIRE_BROKERS"
)

// Addresses used when the environment variables are not set; they match
// cmd/cluster and docker-compose.yml.
const (
	DefaultBrokers     = "127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094"
	DefaultSASLBrokers = "127.0.0.1:9096"
)

// SASL credentials accepted by StartSASL clusters and by the external SASL
// broker.
const (
	PlainUser      = fakecluster.PlainUser
	PlainSecret    = fakecluster.PlainSecret
	Scram256User   = fakecluster.Scram256User
	Scram256Secret = fakecluster.Scram256Secret
	Scram512User   = fakecluster.Scram512User
	Scram512Secret = fakecluster.Scram512Secret
)

// Partitions is the partition count of auto-created topics, in-process and
// external alike.
const Partitions = fakecluster.DefaultPartitions

// Start starts an in-process kfake cluster of 3 brokers on random loopback
// ports, with automatic topic creation and 3 partitions per new topic, and
// closes it when the test ends. opts are applied after those defaults, so
// they can override them (kfake.NumBrokers(1), kfake.SeedTopics(...), ...).
// It returns the broker addresses and the cluster for fault injection.
func Start(t testing.TB, opts ...kfake.Opt) ([]string, *kfake.Cluster) {
	t.Helper()
	all := append(fakecluster.BaseOptions(), opts...)
	c, err := kfake.NewCluster(all...)
	if err != nil {
		t.Fatalf("clustertest: starting kfake cluster: %v", err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs(), c
}

// StartSASL is Start with SASL required and the PLAIN, SCRAM-SHA-256 and
// SCRAM-SHA-512 users of this package registered.
func StartSASL(t testing.TB, opts ...kfake.Opt) ([]string, *kfake.Cluster) {
	t.Helper()
	return Start(t, append(fakecluster.SASLOptions(), opts...)...)
}

// DelayProduce makes every Produce request that c receives wait d before
// being processed, for as long as the cluster runs. Other requests, and
// produces on other connections, are not held up.
func DelayProduce(c *kfake.Cluster, d time.Duration) {
	fakecluster.DelayProduce(c, d)
}

// Brokers returns the external cluster's addresses from KAFKA_BROKERS, or
// DefaultBrokers when it is unset.
func Brokers() []string { return addrsFromEnv(EnvBrokers, DefaultBrokers) }

// SASLBrokers returns the external SASL broker addresses from
// KAFKA_SASL_BROKERS, or DefaultSASLBrokers when it is unset.
func SASLBrokers() []string { return addrsFromEnv(EnvSASLBrokers, DefaultSASLBrokers) }

// RequireBrokers reports whether KAFKA_REQUIRE_BROKERS asks for a missing
// external cluster to be a failure rather than a skip.
func RequireBrokers() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(EnvRequireBrokers))) {
	case "", "0", "false", "no":
		return false
	}
	return true
}

// External returns Brokers() once every one of them accepts a TCP
// connection. If some do not, the test is skipped, or failed when
// KAFKA_REQUIRE_BROKERS is set (as CI does).
func External(t testing.TB) []string {
	t.Helper()
	return requireReachable(t, EnvBrokers, Brokers())
}

// ExternalSASL is External for SASLBrokers().
func ExternalSASL(t testing.TB) []string {
	t.Helper()
	return requireReachable(t, EnvSASLBrokers, SASLBrokers())
}

// Topic returns a topic name unique to this test and run. The external
// cluster lives across test runs, so reusing names would mix in old records.
func Topic(t testing.TB) string {
	var b strings.Builder
	b.WriteString("itest-")
	for _, r := range t.Name() {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	topicSeq.Lock()
	topicSeq.n++
	n := topicSeq.n
	topicSeq.Unlock()
	fmt.Fprintf(&b, "-%d-%d", time.Now().UnixNano(), n)
	// Kafka limits topic names to 249 characters; keep the unique suffix.
	s := b.String()
	if len(s) > 249 {
		s = s[len(s)-249:]
	}
	return s
}

var topicSeq struct {
	sync.Mutex
	n int
}

func addrsFromEnv(name, def string) []string {
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		v = def
	}
	var out []string
	for _, a := range strings.Split(v, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

func requireReachable(t testing.TB, env string, addrs []string) []string {
	t.Helper()
	var down []string
	for _, a := range addrs {
		conn, err := net.DialTimeout("tcp", a, 2*time.Second)
		if err != nil {
			down = append(down, a)
			continue
		}
		conn.Close()
	}
	if len(down) == 0 && len(addrs) > 0 {
		return addrs
	}
	msg := fmt.Sprintf("clustertest: %s=%v: not reachable: %v (start one with `make cluster`)", env, addrs, down)
	if RequireBrokers() {
		t.Fatalf("%s; %s is set, so this is a failure", msg, EnvRequireBrokers)
	}
	t.Skip(msg)
	return nil
}
