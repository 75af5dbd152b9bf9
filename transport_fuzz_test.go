package kafka

import (
	"bufio"
	"bytes"
	"net"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/findcoordinator"
	"github.com/segmentio/kafka-go/protocol/metadata"
)

// FuzzBrokerConnResponses feeds arbitrary bytes to the response reader of
// a connection with requests waiting: it must deliver every waiting request
// exactly one result (a response or an error) and never panic.
func FuzzBrokerConnResponses(f *testing.F) {
	var good bytes.Buffer
	protocol.WriteResponse(&good, 12, 1, &metadata.Response{ClusterID: "c", Brokers: []metadata.ResponseBroker{{NodeID: 1, Host: "h", Port: 1}}})
	protocol.WriteResponse(&good, 3, 2, &findcoordinator.Response{NodeID: 1, Host: "h"})
	f.Add(good.Bytes())
	f.Add(good.Bytes()[:good.Len()/2])
	f.Add([]byte{0, 0, 0, 4, 0, 0, 0, 9})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1})
	f.Add([]byte{0, 0, 0, 6, 0, 0, 0, 2, 0xff, 0xff})

	f.Fuzz(func(t *testing.T, data []byte) {
		client, server := net.Pipe()
		defer server.Close()
		c := &brokerConn{
			nc:      client,
			address: "fuzz",
			wsem:    make(chan struct{}, 1),
			pending: make(map[int32]*pendingCall),
			done:    make(chan struct{}),
		}
		calls := []*pendingCall{
			{key: protocol.Metadata, version: 12, result: make(chan callResult, 1)},
			{key: protocol.FindCoordinator, version: 3, result: make(chan callResult, 1)},
		}
		for i, call := range calls {
			c.pending[int32(i+1)] = call
		}
		c.readLoop(bufio.NewReader(bytes.NewReader(data)))
		<-c.done
		for i, call := range calls {
			select {
			case r := <-call.result:
				if (r.msg == nil) == (r.err == nil) {
					t.Fatalf("call %d: response %v and error %v", i+1, r.msg, r.err)
				}
			default:
				t.Fatalf("call %d got no result", i+1)
			}
		}
		if c.broken() == nil {
			t.Fatal("the connection is usable after its stream ended")
		}
	})
}
