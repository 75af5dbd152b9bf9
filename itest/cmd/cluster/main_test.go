package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/segmentio/kafka-go/itest/internal/fakecluster"
	"github.com/segmentio/kafka-go/itest/internal/kgocheck"
)

// The test binary doubles as the cluster command: with this variable set it
// runs main() instead of the tests, which lets the test exercise the real
// process, flag parsing and signal handling without a separate go build.
const runMainEnv = "ITEST_CLUSTER_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		os.Args = append([]string{"cluster"}, strings.Fields(os.Getenv(runMainEnv+"_ARGS"))...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type process struct {
	cmd    *exec.Cmd
	lines  chan string
	addrs  map[string][]string
	waited chan error
}

// startProcess runs the command on random ports and waits for "ready".
func startProcess(t *testing.T, args ...string) *process {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), runMainEnv+"=1", runMainEnv+"_ARGS="+strings.Join(args, " "))
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, lines: make(chan string, 16), addrs: map[string][]string{}, waited: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})

	timeout := time.After(60 * time.Second)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("cluster exited before printing ready: %v", cmd.Wait())
			}
			if line == "ready" {
				return p
			}
			if name, list, ok := strings.Cut(line, " "); ok {
				p.addrs[name] = strings.Split(list, ",")
			}
		case <-timeout:
			t.Fatal("cluster did not print ready within 60s")
		}
	}
}

func (p *process) stop(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("cluster exited with %v after %v, want a clean exit", err, sig)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("cluster did not exit within 30s of %v", sig)
	}
	var rest []string
	for line := range p.lines {
		rest = append(rest, line)
	}
	if len(rest) != 1 || rest[0] != "stopping" {
		t.Errorf("output after the signal = %q, want [stopping]", rest)
	}
}

func TestClusterProcess(t *testing.T) {
	p := startProcess(t, "-ports", "0,0,0", "-sasl-port", "0")

	brokers, sasl := p.addrs["brokers"], p.addrs["sasl"]
	if len(brokers) != 3 || len(sasl) != 1 {
		t.Fatalf("printed addresses: %v, want 3 brokers and 1 sasl broker", p.addrs)
	}

	t.Run("plaintext", func(t *testing.T) {
		nb, np := kgocheck.Metadata(t, brokers, kgocheck.TopicName(t))
		if nb != 3 || np != fakecluster.DefaultPartitions {
			t.Errorf("metadata: %d brokers, %d partitions; want 3 and %d", nb, np, fakecluster.DefaultPartitions)
		}
		kgocheck.RoundTrip(t, brokers, 50)
	})

	t.Run("sasl", func(t *testing.T) {
		checkSASL(t, sasl)
	})

	// Every listener must be closed after a clean shutdown, otherwise a
	// restarted cluster could not bind the fixed ports again.
	p.stop(t, syscall.SIGTERM)
	for _, a := range append(brokers, sasl...) {
		if c, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			c.Close()
			t.Errorf("%s still accepts connections after shutdown", a)
		}
	}
}

func TestClusterSIGINTAndNoSASL(t *testing.T) {
	profile := filepath.Join(t.TempDir(), "cpu.pprof")
	p := startProcess(t, "-ports", "0", "-sasl-port", "-1", "-partitions", "5", "-slow-produce", "10ms", "-cpuprofile", profile)
	if len(p.addrs["brokers"]) != 1 || p.addrs["sasl"] != nil {
		t.Fatalf("printed addresses: %v, want one broker and no sasl", p.addrs)
	}
	if got := p.addrs["slow-produce"]; len(got) != 1 || got[0] != "10ms" {
		t.Errorf("slow-produce line = %v, want 10ms", got)
	}
	if _, np := kgocheck.Metadata(t, p.addrs["brokers"], kgocheck.TopicName(t)); np != 5 {
		t.Errorf("auto-created topic has %d partitions, want 5 from -partitions", np)
	}
	kgocheck.RoundTrip(t, p.addrs["brokers"], 5)
	p.stop(t, syscall.SIGINT)

	// The profile is complete once the process has exited.
	f, err := os.Open(profile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// A pprof profile is a gzipped protocol buffer.
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("-cpuprofile: %v", err)
	}
	if n, err := io.Copy(io.Discard, zr); err != nil || n == 0 {
		t.Fatalf("-cpuprofile: %d bytes of profile, %v", n, err)
	}
}

// checkSASL logs in with every configured user, then checks that a wrong
// password and an unknown user are refused.
func checkSASL(t *testing.T, addrs []string) {
	users := []struct{ mech, user, pass string }{
		{"PLAIN", fakecluster.PlainUser, fakecluster.PlainSecret},
		{"SCRAM-SHA-256", fakecluster.Scram256User, fakecluster.Scram256Secret},
		{"SCRAM-SHA-512", fakecluster.Scram512User, fakecluster.Scram512Secret},
	}
	for _, u := range users {
		t.Run(u.mech, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := kgocheck.Login(ctx, addrs, kgocheck.Mechanism(t, u.mech, u.user, u.pass)); err != nil {
				t.Fatalf("login as %s: %v", u.user, err)
			}
			kgocheck.RoundTrip(t, addrs, 5, kgo.SASL(kgocheck.Mechanism(t, u.mech, u.user, u.pass)))

			for _, bad := range []struct{ user, pass string }{
				{u.user, u.pass + "-wrong"},
				{"nobody", u.pass},
			} {
				// kfake drops the connection where real Kafka answers
				// SASL_AUTHENTICATION_FAILED first; either way the
				// login must fail, whereas the same call with the right
				// password succeeded above.
				err := kgocheck.Login(ctx, addrs, kgocheck.Mechanism(t, u.mech, bad.user, bad.pass))
				if err == nil {
					t.Errorf("login as %s/%s succeeded, want a failure", bad.user, bad.pass)
				}
			}
		})
	}

	// A client that skips SASL must not get any real answer.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := kgocheck.Login(ctx, addrs, nil); err == nil {
		t.Error("metadata request without SASL succeeded on the SASL broker")
	}
}
