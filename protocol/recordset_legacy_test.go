package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/compress"
)

// legacyMessage builds a v0 or v1 message by hand from the documented
// layout: offset int64, size int32, crc uint32 (IEEE, over the rest), magic
// int8, attributes int8, timestamp int64 (v1 only), key and value as int32
// length (-1 for null) and bytes.
func legacyMessage(offset int64, magic, attrs int8, ts int64, key, value []byte) []byte {
	var body []byte
	body = append(body, byte(magic), byte(attrs))
	if magic >= 1 {
		body = binary.BigEndian.AppendUint64(body, uint64(ts))
	}
	for _, b := range [][]byte{key, value} {
		if b == nil {
			body = binary.BigEndian.AppendUint32(body, 0xffffffff)
		} else {
			body = binary.BigEndian.AppendUint32(body, uint32(len(b)))
			body = append(body, b...)
		}
	}
	m := binary.BigEndian.AppendUint64(nil, uint64(offset))
	m = binary.BigEndian.AppendUint32(m, uint32(4+len(body)))
	m = binary.BigEndian.AppendUint32(m, crc32.ChecksumIEEE(body))
	return append(m, body...)
}

func compressWith(t testing.TB, c compress.Compression, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w := c.Codec().NewWriter(&out)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func readSet(t testing.TB, in []byte) RecordSet {
	t.Helper()
	var rs RecordSet
	n, err := rs.ReadFrom(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len(in)) {
		t.Fatalf("read %d bytes of %d", n, len(in))
	}
	return rs
}

func TestRecordSetWriteToV1Golden(t *testing.T) {
	t0 := goldenT0
	rs := RecordSet{Version: 1, Records: NewRecordReader(
		Record{Offset: 42, Time: t0, Key: NewBytes([]byte("k")), Value: NewBytes([]byte("v"))},
		Record{Time: t0.Add(time.Second), Value: NewBytes([]byte{})},
	)}
	var buf bytes.Buffer
	if _, err := rs.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	want := append(legacyMessage(0, 1, 0, t0.UnixMilli(), []byte("k"), []byte("v")),
		legacyMessage(1, 1, 0, t0.UnixMilli()+1000, nil, []byte{})...)
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("\n got %x\nwant %x", buf.Bytes(), want)
	}
}

func TestRecordSetWriteToV1CompressedWrapper(t *testing.T) {
	t0 := goldenT0
	rs := RecordSet{Version: 1, Attributes: Gzip, Records: NewRecordReader(
		Record{Time: t0, Value: NewBytes([]byte("a"))},
		Record{Time: t0.Add(3 * time.Millisecond), Value: NewBytes([]byte("b"))},
		Record{Time: t0.Add(time.Millisecond), Value: NewBytes([]byte("c"))},
	)}
	var buf bytes.Buffer
	if _, err := rs.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.Bytes()
	// One wrapper: offset of the last inner message, gzip attribute, the
	// highest inner timestamp, null key.
	if got := int64(binary.BigEndian.Uint64(out)); got != 2 {
		t.Errorf("wrapper offset %d", got)
	}
	if size := int(binary.BigEndian.Uint32(out[8:])); size != len(out)-12 {
		t.Fatalf("wrapper size %d of %d bytes", size, len(out))
	}
	if out[16] != 1 || out[17] != byte(compress.Gzip) {
		t.Errorf("magic %d attributes %d", out[16], out[17])
	}
	if ts := int64(binary.BigEndian.Uint64(out[18:])); ts != t0.UnixMilli()+3 {
		t.Errorf("wrapper timestamp %d", ts)
	}
	if k := int32(binary.BigEndian.Uint32(out[26:])); k != -1 {
		t.Errorf("wrapper key length %d", k)
	}
	vlen := int(binary.BigEndian.Uint32(out[30:]))
	if 34+vlen != len(out) {
		t.Fatalf("value length %d in %d bytes", vlen, len(out))
	}
	var inner bytes.Buffer
	zr := compress.Gzip.Codec().NewReader(bytes.NewReader(out[34:]))
	if _, err := inner.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	zr.Close()
	want := append(legacyMessage(0, 1, 0, t0.UnixMilli(), nil, []byte("a")),
		legacyMessage(1, 1, 0, t0.UnixMilli()+3, nil, []byte("b"))...)
	want = append(want, legacyMessage(2, 1, 0, t0.UnixMilli()+1, nil, []byte("c"))...)
	if !bytes.Equal(inner.Bytes(), want) {
		t.Fatalf("inner messages\n got %x\nwant %x", inner.Bytes(), want)
	}
}

func TestRecordSetReadFromV0(t *testing.T) {
	in := append(legacyMessage(7, 0, 0, 0, []byte("k"), []byte("v")),
		legacyMessage(8, 0, 0, 0, nil, nil)...)
	rs := readSet(t, in)
	if rs.Version != 0 {
		t.Errorf("version %d", rs.Version)
	}
	stream := rs.Records.(*RecordStream)
	if len(stream.Records) != 1 {
		t.Fatalf("%d batches, want one message set", len(stream.Records))
	}
	if ms := stream.Records[0].(*MessageSet); ms.BaseOffset != 7 || ms.Offset() != 7 || ms.Version() != 1 {
		t.Errorf("message set %+v", ms)
	}
	checkRecords(t, rs.Records, []testRecord{
		{Offset: 7, Key: "k", Value: "v"},
		{Offset: 8, Key: "<nil>", Value: "<nil>"},
	})
}

func TestRecordSetReadFromLegacyWrapperOffsets(t *testing.T) {
	ts := goldenT0.UnixMilli()
	tests := []struct {
		name          string
		magic         int8
		wrapperOffset int64
		innerOffsets  []int64
		want          []int64
	}{
		// v1: inner offsets are relative, the wrapper has the last absolute one.
		{"v1 relative", 1, 102, []int64{0, 1, 2}, []int64{100, 101, 102}},
		// v1 inner offsets with a gap (compacted): still relative to the last.
		{"v1 compacted", 1, 50, []int64{0, 3, 5}, []int64{45, 48, 50}},
		// v0: inner offsets are absolute already.
		{"v0 absolute", 0, 102, []int64{100, 101, 102}, []int64{100, 101, 102}},
		// A wrapper left at offset 0 by its writer: the inner ones are kept.
		{"wrapper at 0", 1, 0, []int64{0, 1, 2}, []int64{0, 1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, codec := range allCodecs {
				var inner []byte
				var want []testRecord
				for i, off := range tt.innerOffsets {
					v := []byte{'a' + byte(i)}
					inner = append(inner, legacyMessage(off, tt.magic, 0, ts+int64(i), nil, v)...)
					w := testRecord{Offset: tt.want[i], Key: "<nil>", Value: string(v)}
					if tt.magic >= 1 {
						w.Time = time.UnixMilli(ts + int64(i))
					}
					want = append(want, w)
				}
				in := legacyMessage(tt.wrapperOffset, tt.magic, int8(codec), ts, nil, compressWith(t, codec, inner))
				rs := readSet(t, in)
				if rs.Attributes.Compression() != codec || rs.Version != tt.magic {
					t.Errorf("%v: attributes %v version %d", codec, rs.Attributes, rs.Version)
				}
				ms := rs.Records.(*RecordStream).Records[0].(*MessageSet)
				if ms.BaseOffset != tt.want[0] {
					t.Errorf("%v: base offset %d", codec, ms.BaseOffset)
				}
				checkRecords(t, rs.Records, want)
			}
		})
	}
}

func TestRecordSetReadFromLegacyLogAppendTime(t *testing.T) {
	inner := append(legacyMessage(0, 1, 0, 111, nil, []byte("a")), legacyMessage(1, 1, 0, 222, nil, []byte("b"))...)
	appendTime := goldenT0.UnixMilli()
	in := legacyMessage(1, 1, int8(Gzip|rbLogAppendTime), appendTime, nil, compressWith(t, compress.Gzip, inner))
	rs := readSet(t, in)
	checkRecords(t, rs.Records, []testRecord{
		{Offset: 0, Time: goldenT0, Key: "<nil>", Value: "a"},
		{Offset: 1, Time: goldenT0, Key: "<nil>", Value: "b"},
	})
}

func TestRecordSetReadFromLegacyNestedCompression(t *testing.T) {
	innermost := legacyMessage(0, 1, 0, 0, nil, []byte("x"))
	nested := legacyMessage(0, 1, int8(Gzip), 0, nil, compressWith(t, compress.Gzip, innermost))
	in := legacyMessage(0, 1, int8(Gzip), 0, nil, compressWith(t, compress.Gzip, nested))
	var rs RecordSet
	if _, err := rs.ReadFrom(bytes.NewReader(in)); err == nil {
		t.Fatal("nested compressed message accepted")
	}
}

func TestRecordSetReadFromLegacyNullWrapper(t *testing.T) {
	rs := readSet(t, legacyMessage(5, 1, int8(Snappy), 0, nil, nil))
	checkRecords(t, rs.Records, nil)
}

func TestRecordSetReadFromMixedFormats(t *testing.T) {
	ts := goldenT0.UnixMilli()
	var in []byte
	in = append(in, legacyMessage(10, 0, 0, 0, nil, []byte("m10"))...)
	in = append(in, legacyMessage(11, 1, 0, ts, nil, []byte("m11"))...)
	v2 := goldenV2(ts)
	binary.BigEndian.PutUint64(v2, 12) // base offset is not under the CRC
	in = append(in, v2...)
	inner := append(legacyMessage(0, 1, 0, ts, nil, []byte("m14")), legacyMessage(1, 1, 0, ts, nil, []byte("m15"))...)
	in = append(in, legacyMessage(15, 1, int8(Lz4), ts, nil, compressWith(t, compress.Lz4, inner))...)
	in = append(in, legacyMessage(16, 1, 0, ts, nil, []byte("m16"))...)

	rs := readSet(t, in)
	if rs.Version != 2 || rs.Attributes.Compression() != compress.Lz4 {
		t.Errorf("version %d attributes %v", rs.Version, rs.Attributes)
	}
	batches := rs.Records.(*RecordStream).Records
	if len(batches) != 4 {
		t.Fatalf("%d batches", len(batches))
	}
	for i, want := range []int64{10, 12, 14, 16} {
		type offsetter interface{ Offset() int64 }
		if got := batches[i].(offsetter).Offset(); got != want {
			t.Errorf("batch %d (%T) offset %d, want %d", i, batches[i], got, want)
		}
	}
	var offsets []int64
	var values []string
	for _, r := range readRecords(t, rs.Records) {
		offsets = append(offsets, r.Offset)
		values = append(values, r.Value)
	}
	if want := []int64{10, 11, 12, 13, 14, 15, 16}; !equalSlices(offsets, want) {
		t.Errorf("offsets %v, want %v", offsets, want)
	}
	if want := []string{"m10", "m11", "v1", "v2", "m14", "m15", "m16"}; !equalSlices(values, want) {
		t.Errorf("values %v, want %v", values, want)
	}
}

func equalSlices[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRecordSetReadFromLegacyWrapperPartialInner(t *testing.T) {
	inner := legacyMessage(0, 1, 0, 0, nil, []byte("abc"))
	in := legacyMessage(0, 1, int8(Gzip), 0, nil, compressWith(t, compress.Gzip, inner[:len(inner)-1]))
	var rs RecordSet
	_, err := rs.ReadFrom(bytes.NewReader(in))
	if err == nil || errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err=%v, want a corruption error", err)
	}
	inner[16] = 2 // an inner message claiming format v2
	binary.BigEndian.PutUint32(inner[12:], crc32.ChecksumIEEE(inner[16:]))
	in = legacyMessage(0, 1, int8(Gzip), 0, nil, compressWith(t, compress.Gzip, inner))
	if _, err := rs.ReadFrom(bytes.NewReader(in)); err == nil {
		t.Fatal("inner message of magic 2 accepted")
	}
}
