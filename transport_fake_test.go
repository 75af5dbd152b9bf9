package kafka

import (
	"crypto/tls"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/apiversions"
	"github.com/segmentio/kafka-go/protocol/metadata"
)

// tpFakeCluster is a set of fake brokers on loopback listeners that speak the
// protocol through the protocol package: ApiVersions and Metadata are
// answered from the fields below, anything else by handle.
type tpFakeCluster struct {
	t       testing.TB
	brokers []*tpFakeBroker

	mu       sync.Mutex
	leaders  map[int32]int32 // partition of topic "t" -> leader ID
	extra    []string        // more topics, one partition led by broker 1
	seen     []tpFakeSeen    // every request received, in order
	metaReqs []*metadata.Request
	metaHold chan struct{} // when set, Metadata answers wait for it to close
	handle   func(r *tpFakeRequest)
}

type tpFakeSeen struct {
	broker  int32
	conn    int
	key     protocol.ApiKey
	version int16
}

type tpFakeBroker struct {
	cluster *tpFakeCluster
	id      int32
	ln      net.Listener
	host    string
	port    int32

	mu       sync.Mutex
	apiKeys  []apiversions.ApiKeyResponse
	conns    []net.Conn
	closed   int // connections closed by the client
	authMode func(c *tpFakeConn, r *tpFakeRequest) bool
}

// tpFakeConn is the server side of one connection.
type tpFakeConn struct {
	b   *tpFakeBroker
	nc  net.Conn
	num int
	wmu sync.Mutex
}

// tpFakeRequest is one request received; reply answers it (at any time, from
// any goroutine).
type tpFakeRequest struct {
	conn    *tpFakeConn
	Broker  int32
	Version int16
	ID      int32
	Msg     protocol.Message
}

func (r *tpFakeRequest) reply(msg protocol.Message) {
	r.conn.wmu.Lock()
	defer r.conn.wmu.Unlock()
	// A failed write means the client closed the connection, which tests
	// observe from the client side; the test may even be over by now.
	_ = protocol.WriteResponse(r.conn.nc, r.Version, r.ID, msg)
}

// closeConn drops the connection the request came on.
func (r *tpFakeRequest) closeConn() { r.conn.nc.Close() }

// tpAllApiKeys advertises every API registered in the protocol package, in
// the versions the package supports.
func tpAllApiKeys() []apiversions.ApiKeyResponse {
	var keys []apiversions.ApiKeyResponse
	for k := protocol.ApiKey(0); k < 80; k++ {
		if _, err := protocol.NegotiateVersion(k, 0, 1<<15-1); err != nil {
			continue // not registered
		}
		keys = append(keys, apiversions.ApiKeyResponse{ApiKey: int16(k), MinVersion: k.MinVersion(), MaxVersion: k.MaxVersion()})
	}
	return keys
}

func tpNewFakeCluster(t testing.TB, n int) *tpFakeCluster {
	return tpNewFakeClusterTLS(t, n, nil)
}

// tpNewFakeClusterTLS starts brokers that speak TLS with conf when it is not
// nil.
func tpNewFakeClusterTLS(t testing.TB, n int, conf *tls.Config) *tpFakeCluster {
	fc := &tpFakeCluster{t: t, leaders: map[int32]int32{0: 1}}
	for i := 0; i < n; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if conf != nil {
			ln = tls.NewListener(ln, conf)
		}
		host, port, _ := net.SplitHostPort(ln.Addr().String())
		p, _ := strconv.Atoi(port)
		b := &tpFakeBroker{cluster: fc, id: int32(i + 1), ln: ln, host: host, port: int32(p), apiKeys: tpAllApiKeys()}
		fc.brokers = append(fc.brokers, b)
		go b.serve()
	}
	t.Cleanup(fc.close)
	return fc
}

func (fc *tpFakeCluster) close() {
	for _, b := range fc.brokers {
		b.ln.Close()
		b.mu.Lock()
		for _, c := range b.conns {
			c.Close()
		}
		b.mu.Unlock()
	}
}

func (fc *tpFakeCluster) addr() net.Addr { return TCP(fc.brokers[0].ln.Addr().String()) }

func (fc *tpFakeCluster) setLeader(partition, broker int32) {
	fc.mu.Lock()
	fc.leaders[partition] = broker
	fc.mu.Unlock()
}

// count returns how many requests of key were received (by broker, when
// broker > 0).
func (fc *tpFakeCluster) count(key protocol.ApiKey, broker int32) int {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	n := 0
	for _, s := range fc.seen {
		if s.key == key && (broker == 0 || s.broker == broker) {
			n++
		}
	}
	return n
}

func (fc *tpFakeCluster) requests(key protocol.ApiKey) []tpFakeSeen {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	var out []tpFakeSeen
	for _, s := range fc.seen {
		if s.key == key {
			out = append(out, s)
		}
	}
	return out
}

func (fc *tpFakeCluster) metadataResponse() *metadata.Response {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	res := &metadata.Response{ClusterID: "fake", ControllerID: 1}
	for _, b := range fc.brokers {
		res.Brokers = append(res.Brokers, metadata.ResponseBroker{NodeID: b.id, Host: b.host, Port: b.port})
	}
	topic := metadata.ResponseTopic{Name: "t"}
	for p := int32(0); p < int32(len(fc.leaders)); p++ {
		topic.Partitions = append(topic.Partitions, metadata.ResponsePartition{
			PartitionIndex: p, LeaderID: fc.leaders[p], ReplicaNodes: []int32{fc.leaders[p]}, IsrNodes: []int32{fc.leaders[p]},
		})
	}
	res.Topics = []metadata.ResponseTopic{topic}
	for _, name := range fc.extra {
		res.Topics = append(res.Topics, metadata.ResponseTopic{Name: name, Partitions: []metadata.ResponsePartition{{LeaderID: 1}}})
	}
	return res
}

func (b *tpFakeBroker) serve() {
	for {
		nc, err := b.ln.Accept()
		if err != nil {
			return
		}
		b.mu.Lock()
		b.conns = append(b.conns, nc)
		st := &tpFakeConn{b: b, nc: nc, num: len(b.conns)}
		b.mu.Unlock()
		go b.serveConn(st)
	}
}

func (b *tpFakeBroker) serveConn(c *tpFakeConn) {
	defer func() {
		c.nc.Close()
		b.mu.Lock()
		b.closed++
		b.mu.Unlock()
	}()
	fc := b.cluster
	for {
		version, id, _, msg, err := protocol.ReadRequest(c.nc)
		if err != nil {
			return
		}
		r := &tpFakeRequest{conn: c, Broker: b.id, Version: version, ID: id, Msg: msg}
		fc.mu.Lock()
		fc.seen = append(fc.seen, tpFakeSeen{broker: b.id, conn: c.num, key: msg.ApiKey(), version: version})
		handle, hold := fc.handle, fc.metaHold
		fc.mu.Unlock()

		b.mu.Lock()
		auth := b.authMode
		b.mu.Unlock()
		if auth != nil && auth(c, r) {
			continue
		}
		switch msg.ApiKey() {
		case protocol.ApiVersions:
			b.mu.Lock()
			keys := append([]apiversions.ApiKeyResponse(nil), b.apiKeys...)
			b.mu.Unlock()
			r.reply(&apiversions.Response{ApiKeys: keys})
		case protocol.Metadata:
			fc.mu.Lock()
			fc.metaReqs = append(fc.metaReqs, msg.(*metadata.Request))
			fc.mu.Unlock()
			if m := msg.(*metadata.Request); m.AllowAutoTopicCreation {
				names := m.TopicNames
				for _, t := range m.Topics {
					names = append(names, t.Name)
				}
				fc.addTopics(names...)
			}
			if hold != nil {
				go func() {
					<-hold
					r.reply(fc.metadataResponse())
				}()
				continue
			}
			r.reply(fc.metadataResponse())
		default:
			if handle != nil {
				handle(r)
			}
		}
	}
}

func (b *tpFakeBroker) numClosed() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}

func (b *tpFakeBroker) numConns() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.conns)
}

// stop closes the broker's listener and connections, as if it went down.
func (b *tpFakeBroker) stop() {
	b.ln.Close()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.conns {
		c.Close()
	}
}

func (fc *tpFakeCluster) addTopics(names ...string) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
next:
	for _, name := range names {
		if name == "t" {
			continue
		}
		for _, x := range fc.extra {
			if x == name {
				continue next
			}
		}
		fc.extra = append(fc.extra, name)
	}
}
