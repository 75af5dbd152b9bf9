package clustertest_test

import (
	"context"
	"fmt"
	"net"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/segmentio/kafka-go/itest/clustertest"
	"github.com/segmentio/kafka-go/itest/internal/kgocheck"
)

func TestStartDefaults(t *testing.T) {
	addrs, c := clustertest.Start(t)
	if len(addrs) != 3 || c == nil {
		t.Fatalf("Start returned %v, %v; want 3 addresses and a cluster", addrs, c)
	}
	for _, a := range addrs {
		if !strings.HasPrefix(a, "127.0.0.1:") {
			t.Errorf("address %q is not on loopback", a)
		}
	}
	nb, np := kgocheck.Metadata(t, addrs, clustertest.Topic(t))
	if nb != 3 || np != clustertest.Partitions {
		t.Errorf("metadata: %d brokers, %d partitions; want 3 and %d", nb, np, clustertest.Partitions)
	}
	kgocheck.RoundTrip(t, addrs, 30)
}

func TestStartOptionsOverrideDefaults(t *testing.T) {
	addrs, _ := clustertest.Start(t, kfake.NumBrokers(1), kfake.DefaultNumPartitions(7))
	nb, np := kgocheck.Metadata(t, addrs, clustertest.Topic(t))
	if len(addrs) != 1 || nb != 1 || np != 7 {
		t.Errorf("got %d addresses, %d brokers, %d partitions; want 1, 1, 7", len(addrs), nb, np)
	}
}

func TestStartClosesOnCleanup(t *testing.T) {
	var addrs []string
	t.Run("inner", func(t *testing.T) {
		addrs, _ = clustertest.Start(t, kfake.NumBrokers(1))
	})
	if conn, err := net.DialTimeout("tcp", addrs[0], time.Second); err == nil {
		conn.Close()
		t.Errorf("%s still accepts connections after the subtest ended", addrs[0])
	}
}

func TestDelayProduceHoldsProduceOnly(t *testing.T) {
	addrs, c := clustertest.Start(t, kfake.NumBrokers(1))
	topic := clustertest.Topic(t)
	// Create the topic before delaying so that only Produce is affected.
	kgocheck.Metadata(t, addrs, topic)
	// Shorter than kgo's produce request timeout, which would otherwise
	// abandon the request and retry it into another delay.
	const delay = 3 * time.Second
	clustertest.DelayProduce(c, delay)

	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	start := time.Now()
	produced := make(chan error, 1)
	go func() {
		produced <- cl.ProduceSync(context.Background(), &kgo.Record{Value: []byte("held")}).FirstErr()
	}()

	// Metadata goes over another connection and must not be held; the
	// produce must still be pending afterwards.
	if nb, _ := kgocheck.Metadata(t, addrs, topic); nb != 1 {
		t.Errorf("metadata during the delay: %d brokers, want 1", nb)
	}
	select {
	case err := <-produced:
		t.Fatalf("produce finished (err %v) after %v, before the metadata request was answered; want it held for %v", err, time.Since(start), delay)
	default:
	}

	if err := <-produced; err != nil {
		t.Fatalf("delayed produce failed: %v", err)
	}
	// A lower bound only: a slow machine can make it longer, never shorter.
	if took := time.Since(start); took < delay {
		t.Errorf("produce took %v, want at least the %v delay", took, delay)
	}
}

func TestStartSASL(t *testing.T) {
	addrs, _ := clustertest.StartSASL(t, kfake.NumBrokers(1))
	checkSASL(t, addrs)
}

func TestBrokersFromEnvironment(t *testing.T) {
	t.Setenv(clustertest.EnvBrokers, "")
	t.Setenv(clustertest.EnvSASLBrokers, "")
	if got, want := clustertest.Brokers(), strings.Split(clustertest.DefaultBrokers, ","); !reflect.DeepEqual(got, want) {
		t.Errorf("default Brokers() = %v, want %v", got, want)
	}
	if got := clustertest.SASLBrokers(); !reflect.DeepEqual(got, []string{"127.0.0.1:9096"}) {
		t.Errorf("default SASLBrokers() = %v", got)
	}
	t.Setenv(clustertest.EnvBrokers, " a:1, b:2,,c:3 ")
	t.Setenv(clustertest.EnvSASLBrokers, "s:9")
	if got := clustertest.Brokers(); !reflect.DeepEqual(got, []string{"a:1", "b:2", "c:3"}) {
		t.Errorf("Brokers() = %v", got)
	}
	if got := clustertest.SASLBrokers(); !reflect.DeepEqual(got, []string{"s:9"}) {
		t.Errorf("SASLBrokers() = %v", got)
	}
}

func TestRequireBrokers(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0": false, "false": false, "1": true, "true": true, "yes": true} {
		t.Setenv(clustertest.EnvRequireBrokers, v)
		if got := clustertest.RequireBrokers(); got != want {
			t.Errorf("KAFKA_REQUIRE_BROKERS=%q: RequireBrokers() = %v, want %v", v, got, want)
		}
	}
}

// outcome records how External ended on a stand-in testing.TB.
type outcome struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (o *outcome) Helper() {}
func (o *outcome) Skip(args ...any) {
	o.skipped, o.msg = true, fmt.Sprint(args...)
	runtime.Goexit()
}
func (o *outcome) Fatalf(format string, args ...any) {
	o.failed, o.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func runExternal(t *testing.T, fn func(testing.TB) []string) (*outcome, []string) {
	o := &outcome{TB: t}
	var got []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		got = fn(o)
	}()
	<-done
	return o, got
}

func TestExternalUnreachable(t *testing.T) {
	// A port that was just free: nothing listens there.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	t.Setenv(clustertest.EnvBrokers, dead)
	t.Setenv(clustertest.EnvSASLBrokers, dead)

	t.Setenv(clustertest.EnvRequireBrokers, "")
	if o, _ := runExternal(t, clustertest.External); !o.skipped || o.failed {
		t.Errorf("unreachable, not required: skipped=%v failed=%v, want a skip", o.skipped, o.failed)
	}
	t.Setenv(clustertest.EnvRequireBrokers, "1")
	if o, _ := runExternal(t, clustertest.ExternalSASL); !o.failed || o.skipped || !strings.Contains(o.msg, dead) {
		t.Errorf("unreachable, required: skipped=%v failed=%v msg=%q, want a failure naming %s", o.skipped, o.failed, o.msg, dead)
	}
}

func TestExternalReachable(t *testing.T) {
	addrs, _ := clustertest.Start(t)
	t.Setenv(clustertest.EnvBrokers, strings.Join(addrs, ","))
	t.Setenv(clustertest.EnvRequireBrokers, "1")
	o, got := runExternal(t, clustertest.External)
	if o.skipped || o.failed || !reflect.DeepEqual(got, addrs) {
		t.Errorf("External() = %v (skipped=%v failed=%v %s), want %v", got, o.skipped, o.failed, o.msg, addrs)
	}
}

func TestTopicUnique(t *testing.T) {
	a, b := clustertest.Topic(t), clustertest.Topic(t)
	if a == b || !strings.HasPrefix(a, "itest-TestTopicUnique-") {
		t.Errorf("Topic() = %q, %q; want two distinct names for this test", a, b)
	}
	long := clustertest.Topic(&named{TB: t, name: strings.Repeat("x/", 300)})
	if len(long) > 249 || strings.ContainsRune(long, '/') {
		t.Errorf("Topic() for a long name = %q (%d chars), want <= 249 valid characters", long, len(long))
	}
}

type named struct {
	testing.TB
	name string
}

func (n *named) Name() string { return n.name }

// TestExternalCluster checks the long-running cluster (make cluster, make
// docker or .ci/run) with an independent client.
func TestExternalCluster(t *testing.T) {
	t.Run("plaintext", func(t *testing.T) {
		addrs := clustertest.External(t)
		nb, np := kgocheck.Metadata(t, addrs, clustertest.Topic(t))
		if nb != len(addrs) || np != clustertest.Partitions {
			t.Errorf("metadata: %d brokers, %d partitions; want %d and %d", nb, np, len(addrs), clustertest.Partitions)
		}
		kgocheck.RoundTrip(t, addrs, 20)
	})
	t.Run("sasl", func(t *testing.T) {
		checkSASL(t, clustertest.ExternalSASL(t))
	})
}

func checkSASL(t *testing.T, addrs []string) {
	users := []struct{ mech, user, pass string }{
		{"PLAIN", clustertest.PlainUser, clustertest.PlainSecret},
		{"SCRAM-SHA-256", clustertest.Scram256User, clustertest.Scram256Secret},
		{"SCRAM-SHA-512", clustertest.Scram512User, clustertest.Scram512Secret},
	}
	for _, u := range users {
		t.Run(u.mech, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := kgocheck.Login(ctx, addrs, kgocheck.Mechanism(t, u.mech, u.user, u.pass)); err != nil {
				t.Fatalf("login as %s: %v", u.user, err)
			}
			kgocheck.RoundTrip(t, addrs, 5, kgo.SASL(kgocheck.Mechanism(t, u.mech, u.user, u.pass)))
			if err := kgocheck.Login(ctx, addrs, kgocheck.Mechanism(t, u.mech, u.user, "wrong-"+u.pass)); err == nil {
				t.Errorf("login as %s with a wrong password succeeded", u.user)
			}
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := kgocheck.Login(ctx, addrs, nil); err == nil {
		t.Error("a client without SASL got a metadata answer from the SASL broker")
	}
}
