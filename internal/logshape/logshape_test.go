package logshape

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/fetch"
)

// decodeBatches decodes record bytes with the protocol package.
func decodeBatches(t *testing.T, b []byte) []protocol.RecordReader {
	t.Helper()
	var rs protocol.RecordSet
	if _, err := rs.ReadFrom(bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	if rs.Records == nil {
		return nil
	}
	return rs.Records.(*protocol.RecordStream).Records
}

func readAll(t *testing.T, r protocol.RecordReader) []*protocol.Record {
	t.Helper()
	var out []*protocol.Record
	for {
		rec, err := r.ReadRecord()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		c := *rec
		out = append(out, &c)
	}
}

func bytesOf(t *testing.T, b protocol.Bytes) []byte {
	t.Helper()
	v, err := protocol.ReadAll(b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The encoded log decodes, with the protocol package, to the batches of
// the model: header offsets (compacted tails included), producers, flags,
// and every record left, field by field.
func TestEncodeDecodes(t *testing.T) {
	for seed := int64(1); seed <= 10; seed++ {
		l := Random(rand.New(rand.NewSource(seed)), 40)
		all, err := l.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		got := decodeBatches(t, all)
		if len(got) != len(l.Batches) {
			t.Fatalf("seed %d: %d batches decoded, %d in the log", seed, len(got), len(l.Batches))
		}
		for i, want := range l.Batches {
			var base, last, pid int64
			var attrs protocol.Attributes
			var count int32
			switch b := got[i].(type) {
			case *protocol.RecordBatch:
				base, last, pid, attrs, count = b.BaseOffset, b.LastOffset(), b.ProducerID, b.Attributes, b.RecordCount
			case *protocol.ControlBatch:
				base, last, pid, attrs, count = b.BaseOffset, b.LastOffset(), b.ProducerID, b.Attributes, b.RecordCount
			default:
				t.Fatalf("seed %d batch %d: %T", seed, i, b)
			}
			if base != want.Base || last != want.Last || pid != want.ProducerID || int(count) != len(want.Records) ||
				attrs.Transactional() != want.Transactional || attrs.Control() != (want.Marker != NoMarker) {
				t.Fatalf("seed %d batch %d: header %d..%d pid %d attrs %v count %d, want %+v", seed, i, base, last, pid, attrs, count, want)
			}
			if len(want.Records) != 0 && attrs.Compression() != want.Codec {
				t.Fatalf("seed %d batch %d: codec %v, want %v", seed, i, attrs.Compression(), want.Codec)
			}
			recs := readAll(t, got[i])
			if len(recs) != len(want.Records) {
				t.Fatalf("seed %d batch %d: %d records, want %d", seed, i, len(recs), len(want.Records))
			}
			for j, r := range recs {
				w := want.Records[j]
				wantTime := w.Time
				if !want.AppendTime.IsZero() {
					wantTime = want.AppendTime
				}
				if r.Offset != w.Offset || r.Time.UnixMilli() != wantTime.UnixMilli() {
					t.Fatalf("seed %d batch %d record %d: offset %d time %v, want %d %v", seed, i, j, r.Offset, r.Time, w.Offset, wantTime)
				}
				if want.Marker != NoMarker {
					cr, err := protocol.ReadControlRecord(r)
					if err != nil || (cr.Type == 1) != (want.Marker == Commit) {
						t.Fatalf("seed %d batch %d: marker %+v %v, want %v", seed, i, cr, err, want.Marker)
					}
					continue
				}
				k, v := bytesOf(t, r.Key), bytesOf(t, r.Value)
				if !sameBytes(k, w.Key) || !sameBytes(v, w.Value) || fmt.Sprint(r.Headers) != fmt.Sprint(w.Headers) {
					t.Fatalf("seed %d batch %d record %d: %q=%q %v, want %q=%q %v", seed, i, j, k, v, r.Headers, w.Key, w.Value, w.Headers)
				}
			}
		}
	}
}

func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

// Fetch answers as Kafka does: from the batch holding the offset (or the
// first after it), the first batch whole, cut at MaxBytes, within one
// segment, up to the last stable offset when reading committed records,
// with every aborted transaction a consumer needs listed and none whose
// marker is before the offset.
func TestFetchAsKafka(t *testing.T) {
	for seed := int64(1); seed <= 10; seed++ {
		rng := rand.New(rand.NewSource(seed))
		l := Random(rng, 40)
		all, _ := l.Bytes()
		for k := 0; k < 40; k++ {
			req := FetchRequest{Offset: rng.Int63n(l.End() + 1), MaxBytes: rng.Intn(len(all)), ReadCommitted: rng.Intn(2) == 0, Rand: rng}
			res, err := l.Fetch(req)
			if err != nil {
				t.Fatal(err)
			}
			if res.HighWatermark != l.End() || res.LastStableOffset != l.End() || res.ErrorCode != 0 {
				t.Fatalf("seed %d: %+v", seed, res)
			}
			if (res.Aborted == nil) == req.ReadCommitted {
				t.Fatalf("seed %d: aborted list %v reading committed %v", seed, res.Aborted, req.ReadCommitted)
			}
			first := -1
			for i, b := range l.Batches {
				if b.Last >= req.Offset {
					first = i
					break
				}
			}
			if first < 0 {
				if len(res.Records) != 0 {
					t.Fatalf("seed %d: records past the end", seed)
				}
				continue
			}
			// The records are the log's bytes from the first batch on.
			pos := 0
			for _, e := range l.enc[:first] {
				pos += len(e)
			}
			if !bytes.HasPrefix(all[pos:], res.Records) || len(res.Records) < len(l.enc[first]) {
				t.Fatalf("seed %d offset %d: records are not the log from batch %d, whole", seed, req.Offset, first)
			}
			if len(res.Records) > max(req.MaxBytes, len(l.enc[first])) {
				t.Fatalf("seed %d: %d bytes for MaxBytes %d", seed, len(res.Records), req.MaxBytes)
			}
			batches := decodeBatches(t, res.Records)
			seg := l.segment(l.Batches[first].Base)
			for j := range batches {
				if l.segment(l.Batches[first+j].Base) != seg {
					t.Fatalf("seed %d: batches of two segments", seed)
				}
			}
			end := l.Batches[first+len(batches)-1].Last + 1 // after the whole batches
			for _, a := range res.Aborted {
				found := false
				for _, txn := range l.Aborted {
					if txn.ProducerID == a.ProducerID && txn.FirstOffset == a.FirstOffset && txn.MarkerOffset >= req.Offset {
						found = true
					}
				}
				if !found {
					t.Fatalf("seed %d: %+v listed", seed, a)
				}
			}
			for _, txn := range l.Aborted {
				if req.ReadCommitted && txn.MarkerOffset >= req.Offset && txn.FirstOffset < end {
					listed := false
					for _, a := range res.Aborted {
						listed = listed || a == fetch.ResponseTransaction{ProducerID: txn.ProducerID, FirstOffset: txn.FirstOffset}
					}
					if !listed {
						t.Fatalf("seed %d offset %d: %+v not listed in %v (records end at %d)", seed, req.Offset, txn, res.Aborted, end)
					}
				}
			}
		}
	}
}

// The response frame decodes, with the protocol package, to the fields
// and records of the answer, in the non-flexible and flexible layouts.
func TestFrameDecodes(t *testing.T) {
	l := Random(rand.New(rand.NewSource(7)), 30)
	res, err := l.Fetch(FetchRequest{Offset: 3, MaxBytes: 500, ReadCommitted: true})
	if err != nil {
		t.Fatal(err)
	}
	res.Aborted = append(res.Aborted, fetch.ResponseTransaction{ProducerID: 9, FirstOffset: 1})
	for _, v := range []int16{4, 7, 11, 12} {
		frame, err := res.Frame(v, 42, "t", 3)
		if err != nil {
			t.Fatal(err)
		}
		id, msg, err := protocol.ReadResponse(bytes.NewReader(frame), protocol.Fetch, v)
		if err != nil || id != 42 {
			t.Fatalf("v%d: %v (id %d)", v, err, id)
		}
		p := msg.(*fetch.Response).Topics[0].Partitions[0]
		if p.Partition != 3 || p.HighWatermark != res.HighWatermark || p.LastStableOffset != res.LastStableOffset ||
			fmt.Sprint(p.AbortedTransactions) != fmt.Sprint(res.Aborted) {
			t.Fatalf("v%d: %+v", v, p)
		}
		var rs protocol.RecordSet
		if _, err := rs.ReadFrom(bytes.NewReader(res.Records)); err != nil {
			t.Fatal(err)
		}
		if got, want := len(p.RecordSet.Records.(*protocol.RecordStream).Records), len(rs.Records.(*protocol.RecordStream).Records); got != want {
			t.Fatalf("v%d: %d batches, want %d", v, got, want)
		}
	}
}

// The log of the first case of the issue this fixture was written for:
// reading committed records from the abort marker returns the next,
// committed transaction of the same producer.
func TestConsumeAfterAbortMarker(t *testing.T) {
	l := AbortThenCommit()
	got := fmt.Sprint(offsets(l.Consume(2, true)))
	if got != "[3 4 6]" {
		t.Fatalf("read committed from 2: %s", got)
	}
	if got := fmt.Sprint(offsets(l.Consume(0, true))); got != "[1 3 4 6]" {
		t.Fatalf("read committed from 0: %s", got)
	}
	if got := fmt.Sprint(offsets(l.Consume(2, false))); got != "[3 4 6]" {
		t.Fatalf("read uncommitted from 2: %s", got)
	}
	if got := fmt.Sprint(offsets(l.Consume(0, false))); got != "[0 1 3 4 6]" {
		t.Fatalf("read uncommitted from 0: %s", got)
	}
}

func offsets(recs []Record) []int64 {
	out := make([]int64, len(recs))
	for i, r := range recs {
		out[i] = r.Offset
	}
	return out
}
