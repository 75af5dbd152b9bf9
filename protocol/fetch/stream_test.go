package fetch_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/fetch"
)

// streamedKV is a record as the stream's consumer sees it.
type streamedKV struct {
	topic     string
	partition int32
	offset    int64
	key, val  string
}

func kvString(b protocol.Bytes) string {
	if b == nil {
		return "<nil>"
	}
	v, _ := protocol.ReadAll(b)
	return string(v)
}

// readStreamed decodes a response body (after the correlation ID) with
// ReadResponseStream through a small buffer, reading every record.
func readStreamed(body []byte, v int16) (*fetch.Response, []streamedKV, error) {
	var got []streamedKV
	src := bufio.NewReaderSize(bytes.NewReader(body), 16)
	res, err := fetch.ReadResponseStream(src, len(body), v, func(topic string, p *fetch.ResponsePartition, bs *protocol.BatchStream) error {
		for {
			b, err := bs.Next()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			for {
				rec, err := b.ReadRecord()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return err
				}
				got = append(got, streamedKV{topic, p.Partition, rec.Offset, kvString(rec.Key), kvString(rec.Value)})
			}
		}
	})
	if err == nil {
		if rest, _ := io.ReadAll(src); len(rest) != 0 {
			err = fmt.Errorf("%d bytes left after the response", len(rest))
		}
	}
	return res, got, err
}

// readWhole decodes the same body with protocol.ReadResponse and moves the
// records out of the response, so that the rest compares with the stream's.
func readWhole(body []byte, v int16) (*fetch.Response, []streamedKV, error) {
	frame := binary.BigEndian.AppendUint32(nil, uint32(4+len(body)))
	frame = binary.BigEndian.AppendUint32(frame, 1)
	frame = append(frame, body...)
	_, msg, err := protocol.ReadResponse(bytes.NewReader(frame), protocol.Fetch, v)
	if err != nil {
		return nil, nil, err
	}
	res := msg.(*fetch.Response)
	var got []streamedKV
	for i := range res.Topics {
		t := &res.Topics[i]
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if p.RecordSet.Records != nil {
				for {
					rec, err := p.RecordSet.Records.ReadRecord()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						return nil, nil, err
					}
					got = append(got, streamedKV{t.Topic, p.Partition, rec.Offset, kvString(rec.Key), kvString(rec.Value)})
				}
			}
			p.RecordSet = protocol.RecordSet{}
		}
	}
	return res, got, nil
}

func sampleResponse() *fetch.Response {
	set := func(c protocol.Attributes, vals ...string) protocol.RecordSet {
		recs := make([]protocol.Record, len(vals))
		for i, v := range vals {
			recs[i] = protocol.Record{Time: time.UnixMilli(1700000000000), Key: protocol.NewBytes([]byte("k" + v)), Value: protocol.NewBytes([]byte(v))}
		}
		return protocol.RecordSet{Version: 2, Attributes: c, Records: protocol.NewRecordReader(recs...)}
	}
	return &fetch.Response{
		ThrottleTimeMs: 5, ErrorCode: 0, SessionID: 9,
		Topics: []fetch.ResponseTopic{
			{Topic: "a", Partitions: []fetch.ResponsePartition{
				{Partition: 0, HighWatermark: 10, LastStableOffset: 10, LogStartOffset: 1, PreferredReadReplica: -1,
					AbortedTransactions: []fetch.ResponseTransaction{{ProducerID: 3, FirstOffset: 4}},
					DivergingEpoch:      fetch.ResponseEpochEndOffset{Epoch: -1, EndOffset: -1},
					CurrentLeader:       fetch.ResponseLeader{LeaderID: 2, LeaderEpoch: 7},
					SnapshotID:          fetch.ResponseSnapshotID{EndOffset: -1, Epoch: -1},
					RecordSet:           set(0, "x", "yy", "zzz")},
				{Partition: 1, ErrorCode: 6, HighWatermark: -1, LastStableOffset: -1, LogStartOffset: -1, PreferredReadReplica: -1,
					DivergingEpoch: fetch.ResponseEpochEndOffset{Epoch: -1, EndOffset: -1},
					CurrentLeader:  fetch.ResponseLeader{LeaderID: -1, LeaderEpoch: -1},
					SnapshotID:     fetch.ResponseSnapshotID{EndOffset: -1, Epoch: -1}},
			}},
			{Topic: "b", Partitions: []fetch.ResponsePartition{
				{Partition: 2, HighWatermark: 3, LastStableOffset: 3, LogStartOffset: 0, PreferredReadReplica: -1,
					DivergingEpoch: fetch.ResponseEpochEndOffset{Epoch: -1, EndOffset: -1},
					CurrentLeader:  fetch.ResponseLeader{LeaderID: -1, LeaderEpoch: -1},
					SnapshotID:     fetch.ResponseSnapshotID{EndOffset: 5, Epoch: 1},
					RecordSet:      set(protocol.Attributes(2), "p", "q")},
			}},
		},
	}
}

// At every version, the stream decodes the fields ReadResponse decodes and
// the same records.
func TestReadResponseStreamSameAsReadResponse(t *testing.T) {
	for v := int16(0); v <= 12; v++ {
		var buf bytes.Buffer
		if err := protocol.WriteResponse(&buf, v, 1, sampleResponse()); err != nil {
			t.Fatal(err)
		}
		body := buf.Bytes()[8:]
		want, wantKV, err := readWhole(body, v)
		if err != nil {
			t.Fatalf("v%d: ReadResponse: %v", v, err)
		}
		got, gotKV, err := readStreamed(body, v)
		if err != nil {
			t.Fatalf("v%d: stream: %v", v, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("v%d:\n got %+v\nwant %+v", v, got, want)
		}
		if !reflect.DeepEqual(gotKV, wantKV) || len(gotKV) != 5 {
			t.Errorf("v%d records:\n got %v\nwant %v", v, gotKV, wantKV)
		}
	}
}

// An error from the callback stops the decoding and is returned.
func TestReadResponseStreamCallbackError(t *testing.T) {
	var buf bytes.Buffer
	if err := protocol.WriteResponse(&buf, 11, 1, sampleResponse()); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	calls := 0
	_, err := fetch.ReadResponseStream(bufio.NewReader(bytes.NewReader(buf.Bytes()[8:])), buf.Len()-8, 11,
		func(string, *fetch.ResponsePartition, *protocol.BatchStream) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("err %v after %d calls", err, calls)
	}
}

// The stream decoder never panics; on what ReadResponse decodes and whose
// records all read, it decodes the same.
func FuzzFetchResponseStream(f *testing.F) {
	for v := int16(0); v <= 12; v++ {
		var buf bytes.Buffer
		if err := protocol.WriteResponse(&buf, v, 1, sampleResponse()); err == nil {
			f.Add(uint8(v), buf.Bytes()[8:])
		}
	}
	f.Fuzz(func(t *testing.T, v uint8, body []byte) {
		version := int16(v) % 13
		got, gotKV, gerr := readStreamed(body, version)
		want, wantKV, werr := readWhole(body, version)
		if werr != nil || gerr != nil {
			return
		}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotKV, wantKV) {
			t.Fatalf("v%d:\n got %+v %v\nwant %+v %v", version, got, gotKV, want, wantKV)
		}
	})
}

// The pull form: each partition comes with the fields before its records
// decoded; v12's tagged fields, which follow the records on the wire, are
// set once the caller moves on. Records the caller left are skipped.
func TestResponseStreamPull(t *testing.T) {
	var buf bytes.Buffer
	if err := protocol.WriteResponse(&buf, 12, 1, sampleResponse()); err != nil {
		t.Fatal(err)
	}
	body := buf.Bytes()[8:]
	src := bufio.NewReaderSize(bytes.NewReader(body), 16)
	s, err := fetch.NewResponseStream(src, len(body), 12)
	if err != nil {
		t.Fatal(err)
	}
	topic, p, records, err := s.Next()
	if err != nil || topic != "a" || p.Partition != 0 || p.HighWatermark != 10 || len(p.AbortedTransactions) != 1 {
		t.Fatalf("first partition: %q %+v %v", topic, p, err)
	}
	if p.CurrentLeader.LeaderID != 0 {
		t.Fatalf("a tagged field after the records is decoded before they were read: %+v", p.CurrentLeader)
	}
	first := p
	b, err := records.Next()
	if err != nil {
		t.Fatal(err)
	}
	if rec, err := b.ReadRecord(); err != nil || kvString(rec.Value) != "x" {
		t.Fatalf("first record %v %v", rec, err)
	}
	// Leave "yy" and "zzz" unread.
	topic, p, records, err = s.Next()
	if err != nil || topic != "a" || p.Partition != 1 || p.ErrorCode != 6 || records != nil {
		t.Fatalf("second partition, with an error and null records: %q %+v %v %v", topic, p, records, err)
	}
	if first.CurrentLeader != (fetch.ResponseLeader{LeaderID: 2, LeaderEpoch: 7}) {
		t.Fatalf("the first partition's tagged field once past it: %+v", first.CurrentLeader)
	}
	topic, p, records, err = s.Next()
	if err != nil || topic != "b" || p.Partition != 2 {
		t.Fatalf("third partition: %q %+v %v", topic, p, err)
	}
	var vals []string
	for b, err := records.Next(); err == nil; b, err = records.Next() {
		for rec, err := b.ReadRecord(); err == nil; rec, err = b.ReadRecord() {
			vals = append(vals, kvString(rec.Value))
		}
	}
	if fmt.Sprint(vals) != "[p q]" {
		t.Fatalf("records of b/2: %v", vals)
	}
	if _, _, _, err := s.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("end: %v", err)
	}
	if rest, _ := io.ReadAll(src); len(rest) != 0 {
		t.Fatalf("%d bytes left after the response", len(rest))
	}
	res := s.Response()
	if len(res.Topics) != 2 || res.Topics[1].Partitions[0].SnapshotID != (fetch.ResponseSnapshotID{EndOffset: 5, Epoch: 1}) || res.SessionID != 9 {
		t.Fatalf("response %+v", res)
	}
	if res.Topics[0].Partitions[0].RecordSet.Records != nil {
		t.Fatal("the response holds records")
	}
}

// A stream cut anywhere ends with io.ErrUnexpectedEOF (never io.EOF, which
// would read as a complete response), and Close stops it at any point.
func TestResponseStreamCutAndClose(t *testing.T) {
	var buf bytes.Buffer
	if err := protocol.WriteResponse(&buf, 12, 1, sampleResponse()); err != nil {
		t.Fatal(err)
	}
	body := buf.Bytes()[8:]
	for cut := 0; cut < len(body); cut++ {
		s, err := fetch.NewResponseStream(bufio.NewReader(bytes.NewReader(body[:cut])), len(body), 12)
		if err != nil {
			t.Fatal(err)
		}
		var last error
		for {
			_, _, records, err := s.Next()
			if err != nil {
				last = err
				break
			}
			for records != nil {
				if _, err := records.Next(); err != nil {
					break
				}
			}
		}
		if !errors.Is(last, io.ErrUnexpectedEOF) {
			t.Fatalf("cut at %d: %v", cut, last)
		}
	}
	s, err := fetch.NewResponseStream(bufio.NewReader(bytes.NewReader(body)), len(body), 12)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s.Close()
	if _, _, _, err := s.Next(); err == nil || errors.Is(err, io.EOF) {
		t.Fatalf("Next after Close: %v", err)
	}
}
