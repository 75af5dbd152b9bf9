// Command cluster runs an embedded Kafka cluster (franz-go's kfake) for the
// integration tests and examples of this repository, so that no JVM or
// Docker is needed:
//
//   - three brokers on 127.0.0.1:9092, 9093 and 9094 (one cluster);
//   - a separate single-broker cluster on 127.0.0.1:9096 that requires SASL
//     (PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 users, see -help).
//
// Both allow automatic topic creation with 3 partitions per topic. Once the
// listeners are open the command prints the addresses and a line "ready",
// then runs until SIGINT or SIGTERM. State lives in memory only.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/segmentio/kafka-go/itest/internal/fakecluster"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

type config struct {
	ports       []int
	saslPort    int
	partitions  int
	slowProduce time.Duration
	logLevel    kfake.LogLevel
	cpuProfile  string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	fs.SetOutput(stderr)
	portsFlag := fs.String("ports", joinInts(fakecluster.DefaultPorts), "comma-separated ports of the plaintext brokers (one broker per port, 0 = random)")
	saslPort := fs.Int("sasl-port", fakecluster.DefaultSASLPort, "port of the SASL broker (0 = random, -1 = no SASL cluster)")
	partitions := fs.Int("partitions", fakecluster.DefaultPartitions, "partitions of auto-created topics")
	slow := fs.Duration("slow-produce", 0, "delay every Produce request by this long (for benchmarks); 0 disables")
	verbose := fs.Bool("v", false, "log every request kfake handles to stderr")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the brokers to this file, from ready until shutdown (to tell broker-side costs from client-side ones in benchmarks)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: cluster [flags]\n\nSASL users: PLAIN %s/%s, SCRAM-SHA-256 %s/%s, SCRAM-SHA-512 %s/%s\n\n",
			fakecluster.PlainUser, fakecluster.PlainSecret,
			fakecluster.Scram256User, fakecluster.Scram256Secret,
			fakecluster.Scram512User, fakecluster.Scram512Secret)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	ports, err := parseInts(*portsFlag)
	if err != nil {
		return config{}, fmt.Errorf("-ports: %w", err)
	}
	if *partitions < 1 {
		return config{}, errors.New("-partitions must be at least 1")
	}
	if *slow < 0 {
		return config{}, errors.New("-slow-produce must not be negative")
	}
	cfg := config{
		ports:       ports,
		saslPort:    *saslPort,
		partitions:  *partitions,
		slowProduce: *slow,
		logLevel:    kfake.LogLevelNone,
		cpuProfile:  *cpuProfile,
	}
	if *verbose {
		cfg.logLevel = kfake.LogLevelInfo
	}
	return cfg, nil
}

// run starts the clusters described by args and blocks until ctx is done.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}

	clusters, err := start(cfg, stderr)
	if err != nil {
		return err
	}
	defer func() {
		for _, c := range clusters {
			c.cluster.Close()
		}
	}()

	for _, c := range clusters {
		fmt.Fprintf(stdout, "%s %s\n", c.name, strings.Join(c.cluster.ListenAddrs(), ","))
	}
	if cfg.slowProduce > 0 {
		fmt.Fprintf(stdout, "slow-produce %s\n", cfg.slowProduce)
	}
	if cfg.cpuProfile != "" {
		stopProfile, err := startCPUProfile(cfg.cpuProfile)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	fmt.Fprintln(stdout, "ready")

	<-ctx.Done()
	fmt.Fprintln(stdout, "stopping")
	return nil
}

// startCPUProfile profiles the whole process (the brokers' request loops,
// their storage and GC) until the returned function is called.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

type namedCluster struct {
	name    string
	cluster *kfake.Cluster
}

// start brings up the plaintext cluster and, unless disabled, the SASL one.
// On error anything already started is closed again so the ports are freed.
func start(cfg config, logOut io.Writer) ([]namedCluster, error) {
	// Later options win in kfake, so the -partitions flag overrides the
	// default from BaseOptions.
	common := append(fakecluster.BaseOptions(),
		kfake.DefaultNumPartitions(cfg.partitions),
		kfake.WithLogger(kfake.BasicLogger(logOut, cfg.logLevel)),
	)

	plainOpts := append(append([]kfake.Opt{}, common...), kfake.Ports(cfg.ports...), kfake.ClusterID("itest-plain"))
	plain, err := kfake.NewCluster(plainOpts...)
	if err != nil {
		return nil, fmt.Errorf("starting brokers on ports %v: %w", cfg.ports, err)
	}
	fakecluster.DelayProduce(plain, cfg.slowProduce)
	out := []namedCluster{{"brokers", plain}}

	if cfg.saslPort >= 0 {
		saslOpts := append(append([]kfake.Opt{}, common...), kfake.Ports(cfg.saslPort), kfake.ClusterID("itest-sasl"))
		saslOpts = append(saslOpts, fakecluster.SASLOptions()...)
		sasl, err := kfake.NewCluster(saslOpts...)
		if err != nil {
			plain.Close()
			return nil, fmt.Errorf("starting SASL broker on port %d: %w", cfg.saslPort, err)
		}
		fakecluster.DelayProduce(sasl, cfg.slowProduce)
		out = append(out, namedCluster{"sasl", sasl})
	}
	return out, nil
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, err
		}
		if n < 0 || n > 65535 {
			return nil, fmt.Errorf("port %d out of range", n)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("at least one port is required")
	}
	return out, nil
}

func joinInts(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}
