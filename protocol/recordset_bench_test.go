package protocol

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

// benchRecords is a reusable record source: reset rewinds the reader and the
// keys and values in place, so that the benchmark loop measures WriteTo
// alone.
type benchRecords struct {
	reader rbSliceReader
	keys   []rbSliceBytes
	values []rbSliceBytes
	data   [][2][]byte
}

func newBenchRecords(n int) *benchRecords {
	b := &benchRecords{keys: make([]rbSliceBytes, n), values: make([]rbSliceBytes, n)}
	b.reader.records = make([]Record, n)
	for i := 0; i < n; i++ {
		key := []byte(fmt.Sprintf("key-%06d", i))
		value := bytes.Repeat([]byte(fmt.Sprintf("value %d, ", i)), 10)
		b.data = append(b.data, [2][]byte{key, value})
		b.reader.records[i] = Record{Time: goldenT0, Key: &b.keys[i], Value: &b.values[i]}
		if i%2 == 0 {
			b.reader.records[i].Headers = []Header{{Key: "trace-id", Value: key}}
		}
	}
	b.reset()
	return b
}

func (b *benchRecords) reset() {
	b.reader.next = 0
	for i, d := range b.data {
		b.keys[i].Reset(d[0])
		b.values[i].Reset(d[1])
	}
}

var benchCounts = []int{10, 100, 1000}

func benchAttributes() []Attributes {
	out := []Attributes{0}
	for _, c := range allCodecs {
		out = append(out, Attributes(c))
	}
	return out
}

func BenchmarkRecordSetWriteTo(b *testing.B) {
	for _, version := range []int8{1, 2} {
		for _, attrs := range benchAttributes() {
			for _, n := range benchCounts {
				b.Run(fmt.Sprintf("v%d/%v/records=%d", version, attrs, n), func(b *testing.B) {
					recs := newBenchRecords(n)
					rs := RecordSet{Version: version, Attributes: attrs, Records: &recs.reader}
					var out bytes.Buffer
					rs.WriteTo(&out)
					b.SetBytes(int64(out.Len()))
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						recs.reset()
						out.Reset()
						if _, err := rs.WriteTo(&out); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

func BenchmarkRecordSetReadFrom(b *testing.B) {
	for _, version := range []int8{1, 2} {
		for _, attrs := range benchAttributes() {
			for _, n := range benchCounts {
				b.Run(fmt.Sprintf("v%d/%v/records=%d", version, attrs, n), func(b *testing.B) {
					recs := newBenchRecords(n)
					var in bytes.Buffer
					rs := RecordSet{Version: version, Attributes: attrs, Records: &recs.reader}
					if _, err := rs.WriteTo(&in); err != nil {
						b.Fatal(err)
					}
					var src bytes.Reader
					scratch := make([]byte, 1024)
					b.SetBytes(int64(in.Len()))
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						src.Reset(in.Bytes())
						var out RecordSet
						if _, err := out.ReadFrom(&src); err != nil {
							b.Fatal(err)
						}
						count := 0
						for {
							rec, err := out.Records.ReadRecord()
							if err == io.EOF {
								break
							}
							if err != nil {
								b.Fatal(err)
							}
							io.ReadFull(rec.Key, scratch[:rec.Key.Len()])
							io.ReadFull(rec.Value, scratch[:rec.Value.Len()])
							rec.Key.Close()
							rec.Value.Close()
							count++
						}
						if count != n {
							b.Fatalf("%d records, want %d", count, n)
						}
					}
				})
			}
		}
	}
}
