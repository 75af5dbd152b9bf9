package findcoordinator_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/findcoordinator"
	"github.com/segmentio/kafka-go/protocol/prototest"
	"github.com/stretchr/testify/assert"
)

func TestFindCoordinatorRoundTrip(t *testing.T) {
	prototest.TestRequest(t, 0, &findcoordinator.Request{Key: "group"})
	prototest.TestRequest(t, 1, &findcoordinator.Request{Key: "txn", KeyType: 1})
	prototest.TestRequest(t, 3, &findcoordinator.Request{Key: "txn", KeyType: 1})

	prototest.TestResponse(t, 0, &findcoordinator.Response{ErrorCode: 15, NodeID: 1, Host: "h", Port: 9092})
	prototest.TestResponse(t, 1, &findcoordinator.Response{ThrottleTimeMs: 2, ErrorCode: 15, ErrorMessage: "m", NodeID: -1, Port: -1})
	prototest.TestResponse(t, 3, &findcoordinator.Response{ThrottleTimeMs: 2, ErrorMessage: "m", NodeID: 1, Host: "h", Port: 9092})
}

func TestFindCoordinatorGoldenV0(t *testing.T) {
	want := prototest.Wire{}.String("g")
	if got := prototest.RequestBody(t, 0, false, &findcoordinator.Request{Key: "g", KeyType: 1}); !bytes.Equal(got, want) {
		t.Errorf("v0 request (no key type):\ngot  % x\nwant % x", got, want)
	}
	res := &findcoordinator.Response{ErrorCode: 15, NodeID: -1, Port: -1}
	want = prototest.Wire{}.I16(15).I32(-1).String("").I32(-1)
	if got := prototest.ResponseBody(t, 0, false, res); !bytes.Equal(got, want) {
		t.Errorf("v0 response:\ngot  % x\nwant % x", got, want)
	}
	if got := prototest.ReadResponse(t, protocol.FindCoordinator, 0, false, want); !reflect.DeepEqual(got, res) {
		t.Errorf("v0 response decoded as %+v", got)
	}
}

func TestFindCoordinatorGoldenV2(t *testing.T) {
	want := prototest.Wire{}.String("g").I8(1)
	if got := prototest.RequestBody(t, 2, false, &findcoordinator.Request{Key: "g", KeyType: 1}); !bytes.Equal(got, want) {
		t.Errorf("v2 request:\ngot  % x\nwant % x", got, want)
	}

	res := &findcoordinator.Response{ThrottleTimeMs: 1, NodeID: 3, Host: "h", Port: 9094}
	want = prototest.Wire{}.I32(1).I16(0).I16(-1).I32(3).String("h").I32(9094)
	if got := prototest.ResponseBody(t, 2, false, res); !bytes.Equal(got, want) {
		t.Errorf("v2 response:\ngot  % x\nwant % x", got, want)
	}
	if got := prototest.ReadResponse(t, protocol.FindCoordinator, 2, false, want); !reflect.DeepEqual(got, res) {
		t.Errorf("v2 response decoded as %+v", got)
	}
}

func TestFindCoordinatorGoldenV3(t *testing.T) {
	req := &findcoordinator.Request{Key: "g"}
	want := prototest.Wire{}.CompactString("g").I8(0).Uvarint(0)
	if got := prototest.RequestBody(t, 3, true, req); !bytes.Equal(got, want) {
		t.Errorf("v3 request:\ngot  % x\nwant % x", got, want)
	}
	if got := prototest.ReadRequestBody(t, protocol.FindCoordinator, 3, true, want); !reflect.DeepEqual(got, req) {
		t.Errorf("v3 request decoded as %+v", got)
	}
	res := &findcoordinator.Response{NodeID: 3, Host: "h", Port: 9094}
	want = prototest.Wire{}.I32(0).I16(0).Uvarint(0).I32(3).CompactString("h").I32(9094).Uvarint(0)
	if got := prototest.ResponseBody(t, 3, true, res); !bytes.Equal(got, want) {
		t.Errorf("v3 response:\ngot  % x\nwant % x", got, want)
	}
	if got := prototest.ReadResponse(t, protocol.FindCoordinator, 3, true, want); !reflect.DeepEqual(got, res) {
		t.Errorf("v3 response decoded as %+v", got)
	}
}

// v4 and later batch several keys per request: not supported.
func TestFindCoordinatorNoV4(t *testing.T) {
	if v := protocol.FindCoordinator.MaxVersion(); v != 3 {
		t.Fatalf("max version %d, want 3", v)
	}
	var buf bytes.Buffer
	if err := protocol.WriteRequest(&buf, 4, 1, "c", &findcoordinator.Request{Key: "g"}); err == nil {
		t.Error("v4 request written")
	}
}

// Request and Response stay comparable, as upstream's are: code that
// compares them with == or uses them as map keys keeps compiling (the map
// types below do not compile otherwise), and equal values find each other.
func TestFindCoordinatorComparable(t *testing.T) {
	requests := map[findcoordinator.Request]int{{Key: "g"}: 1}
	responses := map[findcoordinator.Response]int{{NodeID: 1, Host: "h"}: 2}
	assert.Equal(t, 1, requests[findcoordinator.Request{Key: "g"}])
	assert.Equal(t, 2, responses[findcoordinator.Response{NodeID: 1, Host: "h"}])
	assert.Zero(t, requests[findcoordinator.Request{Key: "h"}])
	assert.Zero(t, responses[findcoordinator.Response{NodeID: 2, Host: "h"}])
}

func TestFindCoordinatorResponseCoordinator(t *testing.T) {
	res := &findcoordinator.Response{NodeID: 4, Host: "h", Port: 1, ErrorCode: 15, ErrorMessage: "m"}
	c, ok := res.Coordinator("g")
	want := findcoordinator.ResponseCoordinator{Key: "g", NodeID: 4, Host: "h", Port: 1, ErrorCode: 15, ErrorMessage: "m"}
	if !ok || c != want {
		t.Errorf("Coordinator(g) = %+v %v, want %+v", c, ok, want)
	}
}
