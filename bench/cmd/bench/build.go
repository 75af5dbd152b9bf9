package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// binaries are the programs a benchmark needs, built from the repository
// into a temporary directory.
type binaries struct {
	cluster string
	clients map[string]string // load generator module name -> binary
	failed  map[string]string // module name -> build error
}

// loadgens are the load generator modules under bench/clients. fork builds
// against this repository (replace directive), upstream against v0.4.51.
var loadgens = []string{"fork", "upstream", "franz", "sarama"}

// build compiles the cluster (unless external brokers are used) and every
// load generator in need. A load generator that fails to build is recorded
// and its cases are reported as failed; the fork build is retried, since
// the Writer may be mid-edit by someone else when the tool runs.
func build(ctx context.Context, repo, dir string, needCluster bool, need map[string]bool) (*binaries, error) {
	b := &binaries{clients: map[string]string{}, failed: map[string]string{}}
	if needCluster {
		b.cluster = filepath.Join(dir, "cluster")
		if err := goBuild(ctx, filepath.Join(repo, "itest"), b.cluster, "./cmd/cluster"); err != nil {
			return nil, fmt.Errorf("building the embedded cluster: %w", err)
		}
	}
	for _, name := range loadgens {
		if !need[name] {
			continue
		}
		out := filepath.Join(dir, "lg-"+name)
		src := filepath.Join(repo, "bench", "clients", name)
		attempts := 1
		if name == "fork" {
			attempts = 3
		}
		var err error
		for i := 1; i <= attempts; i++ {
			if err = goBuild(ctx, src, out, "."); err == nil {
				break
			}
			if i < attempts {
				logf("build %s failed (attempt %d of %d), retrying in 30s: %v", name, i, attempts, firstLine(err.Error()))
				select {
				case <-time.After(30 * time.Second):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
		}
		if err != nil {
			logf("build %s FAILED: %v", name, err)
			b.failed[name] = firstLine(err.Error())
			continue
		}
		b.clients[name] = out
	}
	return b, nil
}

func goBuild(ctx context.Context, dir, out, pkg string) error {
	start := time.Now()
	cmd := exec.CommandContext(ctx, goCmd(), "build", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	msg, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build in %s: %v: %s", dir, err, strings.TrimSpace(string(msg)))
	}
	logf("built %s (%s)", filepath.Base(out), time.Since(start).Round(100*time.Millisecond))
	return nil
}

// goCmd is the go command that runs this tool when there is one ($GOROOT
// of `go run`), else the one on PATH.
func goCmd() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	if root := os.Getenv("GOROOT"); root != "" {
		p := filepath.Join(root, "bin", "go")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "go"
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
