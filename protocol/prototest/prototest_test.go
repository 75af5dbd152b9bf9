package prototest

import (
	"bytes"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
)

const sampleKey protocol.ApiKey = 1002

type sampleTopic struct {
	Name       string  `kafka:"v0+"`
	Partitions []int32 `kafka:"v0+"`
	Comment    string  `kafka:"v1+,tag=0"`
}

type sampleRequest struct {
	_      struct{}      `kafka:"versions=v0-1,flexible=v1"`
	ID     int64         `kafka:"v0+"`
	Topics []sampleTopic `kafka:"v0+"`
	Blob   []byte        `kafka:"v0+,nullable"`
}

func (*sampleRequest) ApiKey() protocol.ApiKey { return sampleKey }

type sampleResponse struct {
	_     struct{} `kafka:"versions=v0-1,flexible=v1"`
	Error int16    `kafka:"v0+"`
	Names []string `kafka:"v0+,nullable"`
}

func (*sampleResponse) ApiKey() protocol.ApiKey { return sampleKey }

func init() {
	protocol.Register(&sampleRequest{}, &sampleResponse{})
}

func TestSampleMessages(t *testing.T) {
	req := &sampleRequest{
		ID:     -3,
		Topics: []sampleTopic{{Name: "a", Partitions: []int32{0, 1}}, {Name: "b"}},
		Blob:   []byte("blob"),
	}
	TestRequest(t, 0, req)
	req.Topics[0].Comment = "only in v1"
	TestRequest(t, 1, req)
	TestResponse(t, 0, &sampleResponse{Error: 7, Names: []string{"x", "y"}})
	TestResponse(t, 1, &sampleResponse{Error: 7})
}

func TestCompareDetectsDifferences(t *testing.T) {
	base := func() *sampleRequest {
		return &sampleRequest{ID: 1, Topics: []sampleTopic{{Name: "a", Partitions: []int32{1}}}}
	}
	if d := compare(base(), base()); d != "" {
		t.Fatalf("equal messages reported different: %s", d)
	}
	changed := base()
	changed.Topics[0].Partitions[0] = 2
	if d := compare(base(), changed); !strings.Contains(d, "Partitions[0]") {
		t.Fatalf("difference not reported precisely: %q", d)
	}
	// nil and empty slices are the same on the wire.
	empty := base()
	empty.Blob = []byte{}
	if d := compare(base(), empty); d != "" {
		t.Fatalf("nil and empty bytes reported different: %s", d)
	}
}

type recordsHolder struct {
	Records protocol.RecordReader
	Raw     io.Reader
	Key     protocol.Bytes
}

func TestCompareRecordsAndSnapshot(t *testing.T) {
	now := time.UnixMilli(1700000000000)
	recs := func(v string) protocol.RecordReader {
		return &memRecords{records: []memRecord{{offset: 0, time: now, key: nil, value: []byte(v)}}}
	}
	if d := compare(&recordsHolder{Records: recs("a")}, &recordsHolder{Records: recs("a")}); d != "" {
		t.Fatalf("same records reported different: %s", d)
	}
	if d := compare(&recordsHolder{Records: recs("a")}, &recordsHolder{Records: recs("b")}); !strings.Contains(d, "value") {
		t.Fatalf("different values not reported: %q", d)
	}
	if d := compare(&recordsHolder{Key: String("k")}, &recordsHolder{Key: Bytes([]byte("j"))}); d == "" {
		t.Fatal("different Bytes not reported")
	}

	// A snapshot refills readers that were consumed.
	h := &recordsHolder{Records: recs("v"), Raw: bytes.NewReader([]byte("raw")), Key: String("key")}
	s := &snapshotState{}
	s.walk(reflect.ValueOf(h))
	for i := 0; i < 2; i++ {
		s.restore()
		got, err := drainRecords(h.Records)
		if err != nil || len(got) != 1 || string(got[0].value) != "v" {
			t.Fatalf("round %d: records %+v, err %v", i, got, err)
		}
		raw, _ := io.ReadAll(h.Raw)
		if string(raw) != "raw" {
			t.Fatalf("round %d: raw %q", i, raw)
		}
		if key := readBytes(h.Key); string(key) != "key" {
			t.Fatalf("round %d: key %q", i, key)
		}
	}
}
