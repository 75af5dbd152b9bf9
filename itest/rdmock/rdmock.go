// Package rdmock runs librdkafka's mock Kafka cluster, a broker
// implementation written independently of kfake, for the tests of this
// project. The cluster is the C program in c/rdmock.c (built with gcc
// against Debian's librdkafka-dev), one process per Start, driven through
// its stdin: create topics, move leaders, take brokers down, queue errors,
// add round-trip time.
//
// The program is found through RDMOCK_BIN (.ci/run builds it and sets it),
// or else compiled once per test binary. When it cannot be built (no gcc or
// no librdkafka-dev), tests skip, or fail when KAFKA_REQUIRE_BROKERS is set.
package rdmock

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Environment variables read by this package.
const (
	EnvBin            = "RDMOCK_BIN"            // a built rdmock program
	EnvRequireBrokers = "KAFKA_REQUIRE_BROKERS" // a missing toolchain fails instead of skipping
)

// Required reports whether KAFKA_REQUIRE_BROKERS asks for what the tests
// need to be there, so that missing pieces fail instead of skipping.
func Required() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(EnvRequireBrokers))) {
	case "", "0", "false", "no":
		return false
	}
	return true
}

// Unavailable skips the test, or fails it when Required().
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if Required() {
		t.Fatalf("%s (%s is set, so this is a failure)", msg, EnvRequireBrokers)
	}
	t.Skip(msg)
}

// Source returns the path of c/rdmock.c.
func Source() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "c", "rdmock.c")
}

// BuildCommand is the compiler invocation that builds the program from src
// into out; .ci/run runs the same one.
func BuildCommand(src, out string) []string {
	return []string{"sh", "-c", `exec gcc -O2 -Wall -Wextra -Werror -o "$1" "$2" $(pkg-config --cflags --libs rdkafka)`, "sh", out, src}
}

var built struct {
	once sync.Once
	path string
	err  error
}

// Bin returns the path of the rdmock program, building it on first use.
func Bin(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(EnvBin); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("rdmock: %s=%s: %v", EnvBin, p, err)
		}
		return p
	}
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "rdmock-")
		if err != nil {
			built.err = err
			return
		}
		out := filepath.Join(dir, "rdmock")
		argv := BuildCommand(Source(), out)
		b, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("building %s: %v\n%s", Source(), err, b)
			return
		}
		built.path = out
	})
	if built.err != nil {
		Unavailable(t, "rdmock: %v (needs gcc, pkg-config and librdkafka-dev)", built.err)
	}
	return built.path
}

// Cluster is one running mock cluster.
type Cluster struct {
	// Addrs are the brokers' addresses, broker id i+1 at Addrs[i].
	Addrs []string

	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr *lockedBuffer
	mu     sync.Mutex // one command at a time
}

// Start starts a mock cluster of n brokers on 127.0.0.1 and stops it when
// the test ends. Each topic is "NAME:PARTITIONS[:REPLICAS]".
func Start(t testing.TB, n int, topics ...string) *Cluster {
	t.Helper()
	args := []string{"-brokers", fmt.Sprint(n)}
	for _, topic := range topics {
		args = append(args, "-topic", topic)
	}
	cmd := exec.Command(Bin(t), args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{t: t, cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout), stderr: &lockedBuffer{}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("rdmock: %v", err)
	}
	t.Cleanup(c.stop)
	line, err := c.readLine(30 * time.Second)
	if err != nil || !strings.HasPrefix(line, "bootstrap ") {
		t.Fatalf("rdmock did not start: %q, %v; stderr:\n%s", line, err, c.stderr)
	}
	c.Addrs = strings.Split(strings.TrimPrefix(line, "bootstrap "), ",")
	if len(c.Addrs) != n {
		t.Fatalf("rdmock: %d brokers asked, bootstrap %q", n, line)
	}
	return c
}

// Bootstrap is the brokers' addresses joined by commas, as kcat takes them.
func (c *Cluster) Bootstrap() string { return strings.Join(c.Addrs, ",") }

func (c *Cluster) stop() {
	c.stdin.Close() // the program exits at the end of its input
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			c.t.Errorf("rdmock exited with %v; stderr:\n%s", err, c.stderr)
		}
	case <-time.After(30 * time.Second):
		c.cmd.Process.Kill()
		<-done
		c.t.Errorf("rdmock did not exit at the end of its input; stderr:\n%s", c.stderr)
	}
}

// readLine reads one line of the program's output, within d.
func (c *Cluster) readLine(d time.Duration) (string, error) {
	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		l, err := c.out.ReadString('\n')
		ch <- result{strings.TrimRight(l, "\r\n"), err}
	}()
	select {
	case r := <-ch:
		return r.line, r.err
	case <-time.After(d):
		c.cmd.Process.Kill()
		return "", fmt.Errorf("no answer from rdmock in %v", d)
	}
}

// Do runs one command (see c/rdmock.c) and returns what follows "ok".
func (c *Cluster) Do(format string, args ...any) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cmd := fmt.Sprintf(format, args...)
	if _, err := io.WriteString(c.stdin, cmd+"\n"); err != nil {
		return "", fmt.Errorf("rdmock %q: %v", cmd, err)
	}
	line, err := c.readLine(30 * time.Second)
	switch {
	case err != nil:
		return "", fmt.Errorf("rdmock %q: %v; stderr:\n%s", cmd, err, c.stderr)
	case line == "ok":
		return "", nil
	case strings.HasPrefix(line, "ok "):
		return strings.TrimPrefix(line, "ok "), nil
	}
	return "", fmt.Errorf("rdmock %q: %s", cmd, line)
}

// Must is Do failing the test on error.
func (c *Cluster) Must(format string, args ...any) string {
	c.t.Helper()
	out, err := c.Do(format, args...)
	if err != nil {
		c.t.Fatal(err)
	}
	return out
}

// CreateTopic creates a topic whose partitions are spread over the brokers.
func (c *Cluster) CreateTopic(name string, partitions int) {
	c.t.Helper()
	c.Must("topic %s %d %d", name, partitions, min(len(c.Addrs), 3))
}

// SetLeader moves a partition's leader to broker (an id, 1..n).
func (c *Cluster) SetLeader(topic string, partition, broker int) {
	c.t.Helper()
	c.Must("leader %s %d %d", topic, partition, broker)
}

// Down closes broker's connections and refuses new ones; Up undoes it.
// Leadership does not move.
func (c *Cluster) Down(broker int) { c.t.Helper(); c.Must("down %d", broker) }
func (c *Cluster) Up(broker int)   { c.t.Helper(); c.Must("up %d", broker) }

// SetRTT delays every answer of broker (-1: all) by d.
func (c *Cluster) SetRTT(broker int, d time.Duration) {
	c.t.Helper()
	c.Must("rtt %d %d", broker, d.Milliseconds())
}

// PushErrors makes the next requests of apiKey, to any broker, fail with
// codes in order.
func (c *Cluster) PushErrors(apiKey int, codes ...int) {
	c.t.Helper()
	s := make([]string, len(codes))
	for i, code := range codes {
		s[i] = fmt.Sprint(code)
	}
	c.Must("errors %d %s", apiKey, strings.Join(s, " "))
}

// PushBrokerErrors is PushErrors for one broker.
func (c *Cluster) PushBrokerErrors(broker, apiKey int, codes ...int) {
	c.t.Helper()
	s := make([]string, len(codes))
	for i, code := range codes {
		s[i] = fmt.Sprint(code)
	}
	c.Must("broker_errors %d %d %s", broker, apiKey, strings.Join(s, " "))
}

// BrokerErrorsLeft is how many errors queued by PushBrokerErrors have not
// been answered yet.
func (c *Cluster) BrokerErrorsLeft(broker, apiKey int) int {
	c.t.Helper()
	var n int
	if _, err := fmt.Sscan(c.Must("errstack %d %d", broker, apiKey), &n); err != nil {
		c.t.Fatal(err)
	}
	return n
}

// lockedBuffer is a bytes.Buffer safe for the writes of exec's copying
// goroutine and reads from the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
