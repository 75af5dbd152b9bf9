package rdmock

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// The independent clients that check what kafka-go wrote or read: kcat
// (librdkafka, Debian package kcat) and kafka-python (pure Python, Debian
// package python3-kafka). Neither shares code with kafka-go or kfake.

// Record is one record as an independent client saw it.
type Record struct {
	Partition int
	Offset    int64
	Key       []byte
	Value     []byte
	Headers   []Header
}

// Header is a record header.
type Header struct {
	Key   string
	Value []byte
}

func (r Record) String() string {
	var hs []string
	for _, h := range r.Headers {
		hs = append(hs, fmt.Sprintf("%s=%q", h.Key, h.Value))
	}
	return fmt.Sprintf("p%d@%d %q=%q [%s]", r.Partition, r.Offset, r.Key, r.Value, strings.Join(hs, " "))
}

// EnvPython names the Python interpreter that has kafka-python; by default
// Debian's /usr/bin/python3, then python3 on PATH.
const EnvPython = "RDMOCK_PYTHON"

//go:embed oracle.py
var oraclePy string

var python struct {
	once sync.Once
	path string
	err  error
}

// Python returns an interpreter that can import kafka-python.
func Python(t testing.TB) string {
	t.Helper()
	python.once.Do(func() {
		cands := []string{os.Getenv(EnvPython), "/usr/bin/python3", "python3"}
		for _, c := range cands {
			if c == "" {
				continue
			}
			if err := exec.Command(c, "-c", "import kafka").Run(); err == nil {
				python.path = c
				return
			}
		}
		python.err = fmt.Errorf("no python3 with kafka-python among %q (Debian package python3-kafka)", cands)
	})
	if python.err != nil {
		Unavailable(t, "rdmock: %v", python.err)
	}
	return python.path
}

// Kcat returns the kcat program's path.
func Kcat(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("kcat")
	if err != nil {
		Unavailable(t, "rdmock: kcat not found (Debian package kcat): %v", err)
	}
	return p
}

// run runs a program with a hang guard and returns its stdout.
func run(t testing.TB, stdin []byte, name string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes()
}

type pyRecord struct {
	Partition int         `json:"partition"`
	Offset    int64       `json:"offset"`
	Key       []byte      `json:"key"`   // base64 in JSON
	Value     []byte      `json:"value"` // base64 in JSON
	Headers   [][2]string `json:"headers,omitempty"`
}

func (p pyRecord) record(t testing.TB) Record {
	r := Record{Partition: p.Partition, Offset: p.Offset, Key: p.Key, Value: p.Value}
	for _, h := range p.Headers {
		v, err := base64.StdEncoding.DecodeString(h[1])
		if err != nil {
			t.Fatalf("kafka-python header %q: %v", h, err)
		}
		r.Headers = append(r.Headers, Header{Key: h[0], Value: v})
	}
	return r
}

func decodeLines[T any](t testing.TB, who string, out []byte) []T {
	t.Helper()
	var res []T
	for _, line := range bytes.Split(out, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatalf("%s: bad output line %q: %v", who, line, err)
		}
		res = append(res, v)
	}
	return res
}

// PythonConsume reads count records of every partition of topic with
// kafka-python, from the beginning, giving up after timeout (with fewer).
func PythonConsume(t testing.TB, bootstrap, topic string, count int, timeout time.Duration) []Record {
	t.Helper()
	out := run(t, nil, Python(t), "-c", oraclePy, "consume", bootstrap, topic, fmt.Sprint(count), fmt.Sprint(timeout.Seconds()))
	var recs []Record
	for _, p := range decodeLines[pyRecord](t, "kafka-python", out) {
		recs = append(recs, p.record(t))
	}
	return recs
}

// PythonProduce writes recs to their partitions with kafka-python, in order,
// and returns them with the offsets the broker gave.
func PythonProduce(t testing.TB, bootstrap, topic string, recs []Record) []Record {
	t.Helper()
	var in bytes.Buffer
	for _, r := range recs {
		p := pyRecord{Partition: r.Partition, Key: r.Key, Value: r.Value}
		for _, h := range r.Headers {
			p.Headers = append(p.Headers, [2]string{h.Key, base64.StdEncoding.EncodeToString(h.Value)})
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		in.Write(append(b, '\n'))
	}
	out := run(t, in.Bytes(), Python(t), "-c", oraclePy, "produce", bootstrap, topic)
	acks := decodeLines[pyRecord](t, "kafka-python", out)
	if len(acks) != len(recs) {
		t.Fatalf("kafka-python acknowledged %d of %d records", len(acks), len(recs))
	}
	res := make([]Record, len(recs))
	for i, r := range recs {
		r.Partition, r.Offset = acks[i].Partition, acks[i].Offset
		res[i] = r
	}
	return res
}

// PythonCommitted returns the offsets group committed for partitions
// 0..partitions-1 of topic, as kafka-python reads them (-1: none).
func PythonCommitted(t testing.TB, bootstrap, group, topic string, partitions int) map[int]int64 {
	t.Helper()
	out := run(t, nil, Python(t), "-c", oraclePy, "committed", bootstrap, group, topic, fmt.Sprint(partitions))
	res := map[int]int64{}
	for _, p := range decodeLines[pyRecord](t, "kafka-python", out) {
		res[p.Partition] = p.Offset
	}
	return res
}

type kcatRecord struct {
	Partition int      `json:"partition"`
	Offset    int64    `json:"offset"`
	Key       *string  `json:"key"`
	Payload   *string  `json:"payload"`
	Headers   []string `json:"headers"`
}

// KcatConsume reads count records of topic (all partitions) with kcat from
// the beginning. kcat prints keys and values as JSON strings, so tests that
// use it keep them to printable ASCII.
func KcatConsume(t testing.TB, bootstrap, topic string, count int) []Record {
	t.Helper()
	out := run(t, nil, Kcat(t), "-C", "-b", bootstrap, "-t", topic, "-o", "beginning",
		"-c", fmt.Sprint(count), "-J", "-q", "-X", "topic.metadata.refresh.interval.ms=1000")
	var recs []Record
	for _, k := range decodeLines[kcatRecord](t, "kcat", out) {
		r := Record{Partition: k.Partition, Offset: k.Offset}
		if k.Key != nil {
			r.Key = []byte(*k.Key)
		}
		if k.Payload != nil {
			r.Value = []byte(*k.Payload)
		}
		for i := 0; i+1 < len(k.Headers); i += 2 {
			r.Headers = append(r.Headers, Header{Key: k.Headers[i], Value: []byte(k.Headers[i+1])})
		}
		recs = append(recs, r)
	}
	return recs
}

// KcatProduce writes one record per key=value pair to partition of topic
// with kcat, each carrying headers; keys and values are printable ASCII
// without '=' or newlines.
func KcatProduce(t testing.TB, bootstrap, topic string, partition int, pairs [][2]string, headers []Header, compression string) {
	t.Helper()
	var in bytes.Buffer
	for _, p := range pairs {
		fmt.Fprintf(&in, "%s=%s\n", p[0], p[1])
	}
	// A long linger puts the records in as few batches as possible.
	args := []string{"-P", "-b", bootstrap, "-t", topic, "-p", fmt.Sprint(partition), "-K", "=", "-q", "-X", "linger.ms=300"}
	for _, h := range headers {
		args = append(args, "-H", h.Key+"="+string(h.Value))
	}
	if compression != "" {
		args = append(args, "-z", compression)
	}
	run(t, in.Bytes(), Kcat(t), args...)
}

// ByPartition groups records by partition, each in the order given.
func ByPartition(recs []Record) map[int][]Record {
	m := map[int][]Record{}
	for _, r := range recs {
		m[r.Partition] = append(m[r.Partition], r)
	}
	return m
}

// SameRecords checks that got holds exactly want's records: the same count,
// and per partition the same keys, values and headers in the same order.
// Offsets are compared when compareOffsets is set. want's partitions are
// the ones the writer was told or chose.
func SameRecords(t testing.TB, who string, got, want []Record, compareOffsets bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d records, want %d", who, len(got), len(want))
	}
	g, w := ByPartition(got), ByPartition(want)
	parts := map[int]bool{}
	for p := range g {
		parts[p] = true
	}
	for p := range w {
		parts[p] = true
	}
	var ps []int
	for p := range parts {
		ps = append(ps, p)
	}
	sort.Ints(ps)
	shown := 0
	for _, p := range ps {
		gs, ws := g[p], w[p]
		if len(gs) != len(ws) {
			t.Errorf("%s: partition %d: %d records, want %d", who, p, len(gs), len(ws))
		}
		for i := 0; i < min(len(gs), len(ws)); i++ {
			a, b := gs[i], ws[i]
			same := bytes.Equal(a.Key, b.Key) && bytes.Equal(a.Value, b.Value) && sameHeaders(a.Headers, b.Headers)
			if compareOffsets && a.Offset != b.Offset {
				same = false
			}
			if !same {
				t.Errorf("%s: partition %d record %d: got %v, want %v", who, p, i, a, b)
				if shown++; shown > 10 {
					t.Fatalf("%s: too many differences", who)
				}
			}
		}
	}
}

func sameHeaders(a, b []Header) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key || !bytes.Equal(a[i].Value, b[i].Value) {
			return false
		}
	}
	return true
}

// KcatMember is a kcat process consuming as a member of a consumer group
// (librdkafka's balanced consumer, range assignor first like kafka-go).
type KcatMember struct{ member }

// member is a consumer group member run as a process that prints the
// records it reads on stdout and logs on stderr.
type member struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	recs   []Record
	stderr lockedBuffer
	done   chan struct{}
}

// start runs m.cmd (named what in errors), collecting the records that
// decode reads from its stdout until it fails; Stop is called at the end of
// the test.
func (m *member) start(t testing.TB, what string, decode func(*json.Decoder) (Record, error)) {
	t.Helper()
	m.done = make(chan struct{})
	stdout, err := m.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	m.cmd.Stderr = &m.stderr
	if err := m.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	go func() {
		defer close(m.done)
		dec := json.NewDecoder(stdout)
		for {
			r, err := decode(dec)
			if err != nil {
				return
			}
			m.mu.Lock()
			m.recs = append(m.recs, r)
			m.mu.Unlock()
		}
	}()
	t.Cleanup(func() { m.Stop() })
}

// Records returns what the member has read so far.
func (m *member) Records() []Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Record(nil), m.recs...)
}

// Log returns the member's stderr so far.
func (m *member) Log() string { return m.stderr.String() }

// Stop interrupts the member (SIGINT: it leaves the group) and waits for
// it; it is killed if it has not stopped within 15 s.
func (m *member) Stop() {
	if m.cmd.ProcessState != nil {
		return
	}
	m.cmd.Process.Signal(os.Interrupt)
	select {
	case <-m.done:
	case <-time.After(15 * time.Second):
		m.cmd.Process.Kill()
		<-m.done
	}
	m.cmd.Wait()
}

// KcatJoin starts kcat as a member of group reading topic from the
// beginning, with librdkafka's consumer group debug log on stderr (see
// Log: it says whether kcat led, and whether it could parse every member's
// subscription). Stop ends it.
func KcatJoin(t testing.TB, bootstrap, group, topic string) *KcatMember {
	t.Helper()
	return KcatJoinWith(t, bootstrap, group, topic, "range,roundrobin")
}

// KcatJoinWith is KcatJoin with the given partition.assignment.strategy
// and further librdkafka properties ("name=value", passed with -X).
func KcatJoinWith(t testing.TB, bootstrap, group, topic, strategy string, props ...string) *KcatMember {
	t.Helper()
	m := &KcatMember{}
	args := []string{"-b", bootstrap, "-G", group, "-J", "-u",
		"-X", "auto.offset.reset=earliest", "-X", "partition.assignment.strategy=" + strategy,
		"-X", "enable.auto.commit=false"}
	for _, p := range props {
		args = append(args, "-X", p)
	}
	m.cmd = exec.Command(Kcat(t), append(args, "-d", "cgrp", topic)...)
	m.start(t, "kcat", func(dec *json.Decoder) (Record, error) {
		var k kcatRecord
		if err := dec.Decode(&k); err != nil {
			return Record{}, err
		}
		r := Record{Partition: k.Partition, Offset: k.Offset}
		if k.Key != nil {
			r.Key = []byte(*k.Key)
		}
		if k.Payload != nil {
			r.Value = []byte(*k.Payload)
		}
		for i := 0; i+1 < len(k.Headers); i += 2 {
			r.Headers = append(r.Headers, Header{Key: k.Headers[i], Value: []byte(k.Headers[i+1])})
		}
		return r, nil
	})
	return m
}

// Upstream builds itest/rdmock/upstream, a consumer group member made with
// upstream kafka-go v0.4.51 (its own module, fetched through the Go module
// proxy), once per test binary, and returns the program's path.
func Upstream(t testing.TB) string {
	t.Helper()
	upstream.once.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			upstream.err = err
			return
		}
		dir, err := os.MkdirTemp("", "rdmock-upstream-")
		if err != nil {
			upstream.err = err
			return
		}
		out := filepath.Join(dir, "upstream")
		cmd := exec.Command(goBin, "build", "-o", out, ".")
		cmd.Dir = filepath.Join(filepath.Dir(Source()), "..", "upstream")
		if b, err := cmd.CombinedOutput(); err != nil {
			upstream.err = fmt.Errorf("building %s: %v\n%s", cmd.Dir, err, b)
			return
		}
		upstream.path = out
	})
	if upstream.err != nil {
		t.Fatalf("rdmock: %v", upstream.err)
	}
	return upstream.path
}

var upstream struct {
	once sync.Once
	path string
	err  error
}

// UpstreamMember is the upstream kafka-go v0.4.51 program reading as a
// member of a consumer group.
type UpstreamMember struct{ member }

type upstreamRecord struct {
	Partition int         `json:"partition"`
	Offset    int64       `json:"offset"`
	Key       []byte      `json:"key"`
	Value     []byte      `json:"value"`
	Headers   [][2][]byte `json:"headers"`
}

// UpstreamJoin starts the upstream program as a member of group reading
// topic; Stop ends it.
func UpstreamJoin(t testing.TB, bootstrap, group, topic string) *UpstreamMember {
	t.Helper()
	m := &UpstreamMember{}
	m.cmd = exec.Command(Upstream(t), "-brokers", bootstrap, "-group", group, "-topic", topic)
	m.start(t, "upstream member", func(dec *json.Decoder) (Record, error) {
		var u upstreamRecord
		if err := dec.Decode(&u); err != nil {
			return Record{}, err
		}
		r := Record{Partition: u.Partition, Offset: u.Offset, Key: u.Key, Value: u.Value}
		for _, h := range u.Headers {
			r.Headers = append(r.Headers, Header{Key: string(h[0]), Value: h[1]})
		}
		return r, nil
	})
	return m
}
