package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/compress"
)

// crc32cBitwise is CRC-32C computed bit by bit from the polynomial (reflected
// 0x82F63B78), independently of hash/crc32's tables and CPU instructions.
func crc32cBitwise(b []byte) uint32 {
	crc := ^uint32(0)
	for _, c := range b {
		crc ^= uint32(c)
		for i := 0; i < 8; i++ {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0x82F63B78
			} else {
				crc >>= 1
			}
		}
	}
	return ^crc
}

func TestCRC32CBitwiseVector(t *testing.T) {
	// The check value of CRC-32C (RFC 3720, appendix B.4 catalogue value).
	if got := crc32cBitwise([]byte("123456789")); got != 0xE3069283 {
		t.Fatalf("crc32c(123456789) = %#x", got)
	}
	if got := rbCRC32C([]byte("123456789")); got != 0xE3069283 {
		t.Fatalf("rbCRC32C(123456789) = %#x", got)
	}
}

// goldenV2 is a v2 record batch written by hand from the format described in
// Kafka's documentation ("Record Batch"), holding two records:
//
//	record 0: time t0, key "k", value "v1", header "h"="x"
//	record 1: time t0+5ms, null key, value "v2", no headers
func goldenV2(t0 int64) []byte {
	records := []byte{
		// record 0 (offset 61 in the batch)
		0x1a,      // length: varint 13
		0x00,      // attributes
		0x00,      // timestampDelta: varint 0
		0x00,      // offsetDelta: varint 0
		0x02, 'k', // key: varint length 1, "k"
		0x04, 'v', '1', // value: varint length 2, "v1"
		0x02,      // header count: varint 1
		0x02, 'h', // header key: varint length 1, "h"
		0x02, 'x', // header value: varint length 1, "x"
		// record 1 (offset 75 in the batch)
		0x10,           // length: varint 8
		0x00,           // attributes
		0x0a,           // timestampDelta: varint 5
		0x02,           // offsetDelta: varint 1
		0x01,           // key: varint length -1 (null)
		0x04, 'v', '2', // value: varint length 2, "v2"
		0x00, // header count: varint 0
	}
	b := make([]byte, 61, 61+len(records))
	be := binary.BigEndian
	be.PutUint64(b[0:], 0)                          //  0: baseOffset
	be.PutUint32(b[8:], uint32(61-12+len(records))) //  8: batchLength (bytes after this field)
	be.PutUint32(b[12:], 0xffffffff)                // 12: partitionLeaderEpoch -1
	b[16] = 2                                       // 16: magic
	//                                                17: crc (below)
	be.PutUint16(b[21:], 0)                  // 21: attributes: no codec, CreateTime
	be.PutUint32(b[23:], 1)                  // 23: lastOffsetDelta
	be.PutUint64(b[27:], uint64(t0))         // 27: baseTimestamp
	be.PutUint64(b[35:], uint64(t0+5))       // 35: maxTimestamp
	be.PutUint64(b[43:], 0xffffffffffffffff) // 43: producerId -1
	be.PutUint16(b[51:], 0xffff)             // 51: producerEpoch -1
	be.PutUint32(b[53:], 0xffffffff)         // 53: baseSequence -1
	be.PutUint32(b[57:], 2)                  // 57: records count
	b = append(b, records...)                // 61: records
	be.PutUint32(b[17:], crc32cBitwise(b[21:]))
	return b
}

var goldenT0 = time.UnixMilli(1700000000123)

func goldenRecords() []Record {
	return []Record{
		{Time: goldenT0, Key: NewBytes([]byte("k")), Value: NewBytes([]byte("v1")),
			Headers: []Header{{Key: "h", Value: []byte("x")}}},
		{Time: goldenT0.Add(5 * time.Millisecond), Value: NewBytes([]byte("v2"))},
	}
}

func TestRecordSetWriteToV2Golden(t *testing.T) {
	rs := RecordSet{Version: 2, Records: NewRecordReader(goldenRecords()...)}
	var buf bytes.Buffer
	n, err := rs.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	want := goldenV2(goldenT0.UnixMilli())
	if n != int64(len(want)) || !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("WriteTo wrote %d bytes\n got %x\nwant %x", n, buf.Bytes(), want)
	}
}

func TestRecordSetReadFromV2Golden(t *testing.T) {
	in := goldenV2(goldenT0.UnixMilli())
	binary.BigEndian.PutUint64(in[0:], 1000) // base offset
	binary.BigEndian.PutUint32(in[12:], 7)   // leader epoch (not under the CRC)

	var rs RecordSet
	n, err := rs.ReadFrom(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len(in)) || rs.Version != 2 || rs.Attributes != 0 {
		t.Fatalf("n=%d version=%d attributes=%v", n, rs.Version, rs.Attributes)
	}
	stream := rs.Records.(*RecordStream)
	if len(stream.Records) != 1 {
		t.Fatalf("%d batches", len(stream.Records))
	}
	batch := stream.Records[0].(*RecordBatch)
	if batch.BaseOffset != 1000 || batch.PartitionLeaderEpoch != 7 || batch.ProducerID != -1 ||
		batch.ProducerEpoch != -1 || batch.BaseSequence != -1 || batch.Offset() != 1000 || batch.Version() != 2 {
		t.Fatalf("batch header %+v", batch)
	}
	want := []testRecord{
		{Offset: 1000, Time: goldenT0, Key: "k", Value: "v1", Headers: []Header{{Key: "h", Value: []byte("x")}}},
		{Offset: 1001, Time: goldenT0.Add(5 * time.Millisecond), Key: "<nil>", Value: "v2"},
	}
	checkRecords(t, rs.Records, want)
}

// testRecord is a Record with its key and value read out ("<nil>" for null).
type testRecord struct {
	Offset  int64
	Time    time.Time
	Key     string
	Value   string
	Headers []Header
}

func bytesString(b Bytes) string {
	if b == nil {
		return "<nil>"
	}
	v, err := ReadAll(b)
	if err != nil {
		return "error: " + err.Error()
	}
	b.Close()
	return string(v)
}

func readRecords(t testing.TB, r RecordReader) []testRecord {
	t.Helper()
	var out []testRecord
	for {
		rec, err := r.ReadRecord()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, testRecord{
			Offset:  rec.Offset,
			Time:    rec.Time,
			Key:     bytesString(rec.Key),
			Value:   bytesString(rec.Value),
			Headers: rec.Headers,
		})
	}
}

func checkRecords(t testing.TB, r RecordReader, want []testRecord) {
	t.Helper()
	got := readRecords(t, r)
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d:\n%v", len(got), len(want), got)
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Offset != w.Offset || !g.Time.Equal(w.Time) || g.Key != w.Key || g.Value != w.Value || !headersEqual(g.Headers, w.Headers) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

func headersEqual(a, b []Header) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key || !bytes.Equal(a[i].Value, b[i].Value) || (a[i].Value == nil) != (b[i].Value == nil) {
			return false
		}
	}
	return true
}

// sampleRecords covers null and empty keys and values and headers, and
// times that go backwards.
func sampleRecords(n int) ([]Record, []testRecord) {
	var recs []Record
	var want []testRecord
	for i := 0; i < n; i++ {
		tm := goldenT0.Add(time.Duration(i%7-3) * time.Second)
		r := Record{Offset: 99, Time: tm}
		w := testRecord{Offset: int64(i), Time: tm, Key: "<nil>", Value: "<nil>"}
		switch i % 4 {
		case 0:
			r.Key, w.Key = NewBytes([]byte(fmt.Sprint("key-", i))), fmt.Sprint("key-", i)
			r.Value, w.Value = NewBytes([]byte(strings.Repeat("v", i))), strings.Repeat("v", i)
		case 1:
			r.Key, w.Key = NewBytes([]byte{}), ""
			r.Value, w.Value = NewBytes([]byte("value")), "value"
		case 2:
			r.Value, w.Value = NewBytes([]byte{}), ""
		}
		if i%3 == 0 {
			r.Headers = []Header{{Key: "a", Value: []byte(fmt.Sprint(i))}, {Key: "", Value: nil}, {Key: "empty", Value: []byte{}}}
			w.Headers = r.Headers
		}
		recs = append(recs, r)
		want = append(want, w)
	}
	return recs, want
}

func TestRecordSetRoundTripUncompressed(t *testing.T) {
	for _, version := range []int8{0, 1, 2} {
		t.Run(fmt.Sprint("v", version), func(t *testing.T) {
			recs, want := sampleRecords(20)
			if version < 2 {
				for i := range want {
					want[i].Headers = nil // not in the legacy format
				}
			}
			var buf bytes.Buffer
			rs := RecordSet{Version: version, Records: NewRecordReader(recs...)}
			if _, err := rs.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
			var out RecordSet
			if _, err := out.ReadFrom(&buf); err != nil {
				t.Fatal(err)
			}
			if wantVersion := max(version, 1); out.Version != wantVersion {
				t.Errorf("version %d, want %d", out.Version, wantVersion)
			}
			checkRecords(t, out.Records, want)
		})
	}
}

var allCodecs = []compress.Compression{compress.Gzip, compress.Snappy, compress.Lz4, compress.Zstd}

func TestRecordSetRoundTripCompressed(t *testing.T) {
	for _, codec := range allCodecs {
		for _, version := range []int8{0, 1, 2} {
			t.Run(fmt.Sprint(codec, "/v", version), func(t *testing.T) {
				if rbCodec(codec) == nil {
					t.Fatalf("compress: no %v codec", codec)
				}
				recs, want := sampleRecords(50)
				if version < 2 {
					for i := range want {
						want[i].Headers = nil
					}
				}
				var buf bytes.Buffer
				rs := RecordSet{Version: version, Attributes: Attributes(codec), Records: NewRecordReader(recs...)}
				if _, err := rs.WriteTo(&buf); err != nil {
					t.Fatal(err)
				}
				var out RecordSet
				if _, err := out.ReadFrom(&buf); err != nil {
					t.Fatal(err)
				}
				if out.Version != max(version, 1) || out.Attributes.Compression() != codec {
					t.Errorf("version %d attributes %v", out.Version, out.Attributes)
				}
				checkRecords(t, out.Records, want)
			})
		}
	}
}
