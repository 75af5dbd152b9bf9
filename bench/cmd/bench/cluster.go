package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// cluster is a running embedded cluster (itest/cmd/cluster) started by the
// tool on ports of its own, so it never collides with a cluster someone
// else runs on 9092-9094.
type cluster struct {
	cmd     *exec.Cmd
	brokers string
	done    chan struct{}
	log     *tailBuffer
}

// startCluster runs the cluster binary with free ports (see freePorts) and
// no SASL broker, and waits for its "ready" line.
func startCluster(ctx context.Context, bin string, slowProduce time.Duration) (*cluster, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	args := []string{"-ports", ports, "-sasl-port", "-1"}
	if slowProduce > 0 {
		args = append(args, "-slow-produce", slowProduce.String())
	}
	cmd := exec.Command(bin, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c := &cluster{cmd: cmd, done: make(chan struct{}), log: &tailBuffer{max: 4096}}
	cmd.Stderr = c.log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting cluster: %w", err)
	}
	go func() {
		cmd.Wait()
		close(c.done)
	}()

	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		var brokers string
		for sc.Scan() {
			line := sc.Text()
			if b, ok := strings.CutPrefix(line, "brokers "); ok {
				brokers = b
			}
			if line == "ready" {
				c.brokers = brokers
				if brokers == "" {
					ready <- errors.New(`cluster printed "ready" without a "brokers" line`)
				} else {
					ready <- nil
				}
				io.Copy(io.Discard, out) // keep the pipe from filling up
				return
			}
		}
		if err := sc.Err(); err != nil {
			ready <- err
		} else {
			ready <- errors.New("cluster output ended before ready")
		}
	}()

	select {
	case err := <-ready:
		if err == nil {
			return c, nil
		}
		c.stop()
		return nil, fmt.Errorf("%w; stderr: %s", err, c.log)
	case <-c.done:
		return nil, fmt.Errorf("cluster exited before ready: %s", c.log)
	case <-time.After(60 * time.Second):
		c.stop()
		return nil, errors.New("cluster not ready after 60s")
	case <-ctx.Done():
		c.stop()
		return nil, ctx.Err()
	}
}

// reservedPort reports the ports the tool leaves alone even when free:
// those of `make cluster` (9092-9096) and the ranges 19000-19999,
// 29000-29999, ... 59000-59999, which people sharing a machine give
// their own clusters. A port the kernel picked at random could otherwise
// take one of them while its owner's cluster is down.
func reservedPort(p int) bool {
	return (p >= 9092 && p <= 9096) || (p >= 19000 && p < 60000 && p%10000 >= 9000)
}

// freePorts returns n distinct free TCP ports on 127.0.0.1 outside the
// reserved ones, comma-separated. They are free when picked; the cluster
// binds them right after.
func freePorts(n int) (string, error) {
	var ports []string
	seen := map[int]bool{}
	for tries := 0; len(ports) < n; tries++ {
		if tries > 1000 {
			return "", errors.New("no free ports outside the reserved ranges")
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if reservedPort(p) || seen[p] {
			continue
		}
		seen[p] = true
		ports = append(ports, strconv.Itoa(p))
	}
	return strings.Join(ports, ","), nil
}

// cpuSec is the cluster's CPU time so far (user + system) read from
// /proc, or -1 when unavailable.
func (c *cluster) cpuSec() float64 {
	if c == nil {
		return -1
	}
	return procCPU(c.cmd.Process.Pid)
}

// stop ends the cluster with SIGTERM (it shuts down cleanly on it) and
// kills it if it lingers.
func (c *cluster) stop() {
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
	}
}

// clockTick is USER_HZ, the unit of the times in /proc/<pid>/stat: 100 on
// every Linux architecture Go supports.
const clockTick = 100

func procCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	return parseProcStatCPU(string(b))
}

// parseProcStatCPU extracts utime+stime (fields 14 and 15) from a
// /proc/<pid>/stat line. The command name (field 2) may contain spaces and
// parentheses, so fields are counted from its closing parenthesis.
func parseProcStatCPU(s string) float64 {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state), so utime (14) is f[11] and stime (15) f[12].
	if len(f) < 13 {
		return -1
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return float64(u+st) / clockTick
}

// tailBuffer keeps the last max bytes written to it, for error messages.
type tailBuffer struct {
	max int
	mu  sync.Mutex
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}
