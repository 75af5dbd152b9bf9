// Package fakebroker is the fake Kafka cluster of the unit tests: brokers on
// loopback listeners that decode every request with the protocol package
// and answer ApiVersions and Metadata themselves, anything else as the test
// scripts it (Cluster.SetHandler for every broker, Broker.Intercept for one,
// before the built-in answers). Tests that need bytes no encoder would
// write (cut or corrupt frames, refusals in odd layouts) write them to
// Request.Conn.NC themselves.
package fakebroker

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

// Cluster is a set of fake brokers on loopback listeners that speak the
// protocol through the protocol package: ApiVersions and Metadata are
// answered from the fields below, anything else by Handle. Tests may read
// and change the fields under Mu.
type Cluster struct {
	T       testing.TB
	Brokers []*Broker

	Mu       sync.Mutex
	Leaders  map[int32]int32 // partition of topic "t" -> leader ID
	Extra    []string        // more topics, one partition led by broker 1
	Seen     []Seen          // every request received, in order
	MetaReqs []*metadata.Request
	MetaHold chan struct{} // when set, Metadata answers wait for it to close
	Handle   func(r *Request)
}

// Seen is a request as the cluster logged it.
type Seen struct {
	Broker   int32
	Conn     int
	Key      protocol.ApiKey
	Version  int16
	ClientID string
}

// Broker is one fake broker. Intercept, when set, sees every request of
// the broker first, and answers it itself by returning true.
type Broker struct {
	Cluster *Cluster
	ID      int32
	Ln      net.Listener
	Host    string
	Port    int32

	Mu        sync.Mutex
	ApiKeys   []apiversions.ApiKeyResponse
	Conns     []net.Conn
	Closed    int // connections closed by the client
	Intercept func(c *Conn, r *Request) bool
}

// Conn is the server side of one connection.
type Conn struct {
	Broker *Broker
	NC     net.Conn
	Num    int
	WMu    sync.Mutex
}

// Request is one request received; Reply answers it (at any time, from
// any goroutine).
type Request struct {
	Conn    *Conn
	Broker  int32
	Version int16
	ID      int32
	Msg     protocol.Message
}

func (r *Request) Reply(msg protocol.Message) {
	r.Conn.WMu.Lock()
	defer r.Conn.WMu.Unlock()
	// A failed write means the client closed the connection, which tests
	// observe from the client side; the test may even be over by now.
	_ = protocol.WriteResponse(r.Conn.NC, r.Version, r.ID, msg)
}

// CloseConn drops the connection the request came on.
func (r *Request) CloseConn() { r.Conn.NC.Close() }

// AllApiKeys advertises every API registered in the protocol package, in
// the versions the package supports.
func AllApiKeys() []apiversions.ApiKeyResponse {
	var keys []apiversions.ApiKeyResponse
	for k := protocol.ApiKey(0); k < 80; k++ {
		if _, err := protocol.NegotiateVersion(k, 0, 1<<15-1); err != nil {
			continue // not registered
		}
		keys = append(keys, apiversions.ApiKeyResponse{ApiKey: int16(k), MinVersion: k.MinVersion(), MaxVersion: k.MaxVersion()})
	}
	return keys
}

// New starts n plaintext brokers, closed when the test ends.
func New(t testing.TB, n int) *Cluster {
	return NewTLS(t, n, nil)
}

// NewTLS starts brokers that speak TLS with conf when it is not
// nil.
func NewTLS(t testing.TB, n int, conf *tls.Config) *Cluster {
	fc := &Cluster{T: t, Leaders: map[int32]int32{0: 1}}
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
		b := &Broker{Cluster: fc, ID: int32(i + 1), Ln: ln, Host: host, Port: int32(p), ApiKeys: AllApiKeys()}
		fc.Brokers = append(fc.Brokers, b)
		go b.serve()
	}
	t.Cleanup(fc.Close)
	return fc
}

// Close stops every broker.
func (fc *Cluster) Close() {
	for _, b := range fc.Brokers {
		b.Ln.Close()
		b.Mu.Lock()
		for _, c := range b.Conns {
			c.Close()
		}
		b.Mu.Unlock()
	}
}

// Addr is the address of the first broker, the one to bootstrap from.
func (fc *Cluster) Addr() net.Addr { return fc.Brokers[0].Ln.Addr() }

// SetLeader makes broker lead partition of topic "t".
func (fc *Cluster) SetLeader(partition, broker int32) {
	fc.Mu.Lock()
	fc.Leaders[partition] = broker
	fc.Mu.Unlock()
}

// Count returns how many requests of key were received (by broker, when
// broker > 0).
func (fc *Cluster) Count(key protocol.ApiKey, broker int32) int {
	fc.Mu.Lock()
	defer fc.Mu.Unlock()
	n := 0
	for _, s := range fc.Seen {
		if s.Key == key && (broker == 0 || s.Broker == broker) {
			n++
		}
	}
	return n
}

// Requests returns the requests of key received so far, in order.
func (fc *Cluster) Requests(key protocol.ApiKey) []Seen {
	fc.Mu.Lock()
	defer fc.Mu.Unlock()
	var out []Seen
	for _, s := range fc.Seen {
		if s.Key == key {
			out = append(out, s)
		}
	}
	return out
}

// MetadataResponse is the Metadata answer: every broker, topic "t" with
// its leaders, and the extra topics.
func (fc *Cluster) MetadataResponse() *metadata.Response {
	fc.Mu.Lock()
	defer fc.Mu.Unlock()
	res := &metadata.Response{ClusterID: "fake", ControllerID: 1}
	for _, b := range fc.Brokers {
		res.Brokers = append(res.Brokers, metadata.ResponseBroker{NodeID: b.ID, Host: b.Host, Port: b.Port})
	}
	topic := metadata.ResponseTopic{Name: "t"}
	for p := int32(0); p < int32(len(fc.Leaders)); p++ {
		topic.Partitions = append(topic.Partitions, metadata.ResponsePartition{
			PartitionIndex: p, LeaderID: fc.Leaders[p], ReplicaNodes: []int32{fc.Leaders[p]}, IsrNodes: []int32{fc.Leaders[p]},
		})
	}
	res.Topics = []metadata.ResponseTopic{topic}
	for _, name := range fc.Extra {
		res.Topics = append(res.Topics, metadata.ResponseTopic{Name: name, Partitions: []metadata.ResponsePartition{{LeaderID: 1}}})
	}
	return res
}

func (b *Broker) serve() {
	for {
		nc, err := b.Ln.Accept()
		if err != nil {
			return
		}
		b.Mu.Lock()
		b.Conns = append(b.Conns, nc)
		st := &Conn{Broker: b, NC: nc, Num: len(b.Conns)}
		b.Mu.Unlock()
		go b.serveConn(st)
	}
}

func (b *Broker) serveConn(c *Conn) {
	defer func() {
		c.NC.Close()
		b.Mu.Lock()
		b.Closed++
		b.Mu.Unlock()
	}()
	fc := b.Cluster
	for {
		version, id, clientID, msg, err := protocol.ReadRequest(c.NC)
		if err != nil {
			return
		}
		r := &Request{Conn: c, Broker: b.ID, Version: version, ID: id, Msg: msg}
		fc.Mu.Lock()
		fc.Seen = append(fc.Seen, Seen{Broker: b.ID, Conn: c.Num, Key: msg.ApiKey(), Version: version, ClientID: clientID})
		handle, hold := fc.Handle, fc.MetaHold
		fc.Mu.Unlock()

		b.Mu.Lock()
		auth := b.Intercept
		b.Mu.Unlock()
		if auth != nil && auth(c, r) {
			continue
		}
		switch msg.ApiKey() {
		case protocol.ApiVersions:
			b.Mu.Lock()
			keys := append([]apiversions.ApiKeyResponse(nil), b.ApiKeys...)
			b.Mu.Unlock()
			r.Reply(&apiversions.Response{ApiKeys: keys})
		case protocol.Metadata:
			fc.Mu.Lock()
			fc.MetaReqs = append(fc.MetaReqs, msg.(*metadata.Request))
			fc.Mu.Unlock()
			if m := msg.(*metadata.Request); m.AllowAutoTopicCreation {
				names := m.TopicNames
				for _, t := range m.Topics {
					names = append(names, t.Name)
				}
				fc.AddTopics(names...)
			}
			if hold != nil {
				go func() {
					<-hold
					r.Reply(fc.MetadataResponse())
				}()
				continue
			}
			r.Reply(fc.MetadataResponse())
		default:
			if handle != nil {
				handle(r)
			}
		}
	}
}

// NumClosed is the number of connections the client closed.
func (b *Broker) NumClosed() int {
	b.Mu.Lock()
	defer b.Mu.Unlock()
	return b.Closed
}

// NumConns is the number of connections accepted.
func (b *Broker) NumConns() int {
	b.Mu.Lock()
	defer b.Mu.Unlock()
	return len(b.Conns)
}

// Stop closes the broker's listener and connections, as if it went down.
func (b *Broker) Stop() {
	b.Ln.Close()
	b.Mu.Lock()
	defer b.Mu.Unlock()
	for _, c := range b.Conns {
		c.Close()
	}
}

// AddTopics adds topics of one partition led by broker 1 (as auto-creation
// would).
func (fc *Cluster) AddTopics(names ...string) {
	fc.Mu.Lock()
	defer fc.Mu.Unlock()
next:
	for _, name := range names {
		if name == "t" {
			continue
		}
		for _, x := range fc.Extra {
			if x == name {
				continue next
			}
		}
		fc.Extra = append(fc.Extra, name)
	}
}

// SetHandler scripts the answers to every request but ApiVersions and
// Metadata.
func (fc *Cluster) SetHandler(h func(r *Request)) {
	fc.Mu.Lock()
	fc.Handle = h
	fc.Mu.Unlock()
}

// SetApiKey makes the broker advertise [min, max] for key.
func (b *Broker) SetApiKey(key protocol.ApiKey, min, max int16) {
	b.Mu.Lock()
	defer b.Mu.Unlock()
	for i := range b.ApiKeys {
		if b.ApiKeys[i].ApiKey == int16(key) {
			b.ApiKeys[i].MinVersion, b.ApiKeys[i].MaxVersion = min, max
		}
	}
}
