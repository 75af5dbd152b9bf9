package rawproduce_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/prototest"
	"github.com/segmentio/kafka-go/protocol/rawproduce"
)

// rawRecords encodes records with the regular record set writer, so the
// raw request carries what a produce request would.
func rawRecords(t *testing.T, version int8, records ...protocol.Record) protocol.RawRecordSet {
	t.Helper()
	rs := protocol.RecordSet{Version: version, Records: protocol.NewRecordReader(records...)}
	var buf bytes.Buffer
	if _, err := rs.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return protocol.RawRecordSet{Reader: &buf}
}

func TestRawProduceMatchesProduce(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	for _, c := range []struct {
		v      int16
		format int8
	}{{0, 1}, {3, 2}, {9, 2}, {11, 2}} {
		req := &rawproduce.Request{
			Acks:    -1,
			Timeout: 100,
			Topics: []rawproduce.RequestTopic{{Topic: "t", Partitions: []rawproduce.RequestPartition{{
				Partition: 1,
				RecordSet: rawRecords(t, c.format, protocol.Record{Time: t0, Key: prototest.String("k"), Value: prototest.String("v")}),
			}}}},
		}
		prototest.TestRequestWithOverride(t, c.v, req)
	}
	if (&rawproduce.Request{}).HasResponse() || !(&rawproduce.Request{Acks: 1}).HasResponse() {
		t.Error("HasResponse must be false exactly for acks=0")
	}
}
