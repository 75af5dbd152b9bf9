package protocol

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"testing"
)

// noPeek hides a source's Peek, so that a BatchStream copies each record
// out before parsing it.
type noPeek struct{ *bufio.Reader }

func (noPeek) Peek(int) {}

// BenchmarkBatchStreamRecordFields reads uncompressed batches (1000-record
// batches of 100 B or 1 KiB values with 9-byte keys, as a fetch response
// carries them) through a BatchStream over a 32 KiB read-ahead buffer,
// the way kafka-go's Reader does: records parsed where the buffer holds
// them ("in-place"), or copied out first ("copy", a source without Peek).
// Per record; the keys and values are not copied out here.
func BenchmarkBatchStreamRecordFields(b *testing.B) {
	for _, size := range []int{100, 1024} {
		recs := make([]Record, 1000)
		value := bytes.Repeat([]byte("v"), size)
		for i := range recs {
			recs[i] = Record{Key: NewBytes([]byte(fmt.Sprintf("user-%04d", i))), Value: NewBytes(value)}
		}
		var buf bytes.Buffer
		if _, err := (&RecordSet{Version: 2, Records: NewRecordReader(recs...)}).WriteTo(&buf); err != nil {
			b.Fatal(err)
		}
		in := buf.Bytes()
		for _, mode := range []string{"in-place", "copy"} {
			b.Run(fmt.Sprintf("%dB/%s", size, mode), func(b *testing.B) {
				br := bufio.NewReaderSize(nil, 32<<10)
				var f RecordFields
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for done := 0; done < b.N; {
					br.Reset(bytes.NewReader(in))
					var src StreamSource = br
					if mode == "copy" {
						src = noPeek{br}
					}
					s := NewBatchStream(src, len(in))
					batch, err := s.Next()
					if err != nil {
						b.Fatal(err)
					}
					fr := batch.(*RecordBatch).Records.(RecordFieldsReader)
					for ; done < b.N; done++ {
						if err := fr.ReadRecordFields(&f); err == io.EOF {
							break
						} else if err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}

// BenchmarkBatchStreamHeaders is BenchmarkBatchStreamRecordFields (100 B,
// in-place) for records without headers and with two whose keys repeat, as
// tracing headers do. Per record.
func BenchmarkBatchStreamHeaders(b *testing.B) {
	for _, nh := range []int{0, 2} {
		recs := make([]Record, 1000)
		value := bytes.Repeat([]byte("v"), 100)
		for i := range recs {
			recs[i] = Record{Key: NewBytes([]byte(fmt.Sprintf("user-%04d", i))), Value: NewBytes(value)}
			for h := 0; h < nh; h++ {
				recs[i].Headers = append(recs[i].Headers, Header{Key: fmt.Sprintf("h%d", h), Value: []byte(fmt.Sprintf("%016x", i))})
			}
		}
		var buf bytes.Buffer
		if _, err := (&RecordSet{Version: 2, Records: NewRecordReader(recs...)}).WriteTo(&buf); err != nil {
			b.Fatal(err)
		}
		in := buf.Bytes()
		b.Run(fmt.Sprintf("headers=%d", nh), func(b *testing.B) {
			br := bufio.NewReaderSize(nil, 32<<10)
			var f RecordFields
			b.ReportAllocs()
			for done := 0; done < b.N; {
				br.Reset(bytes.NewReader(in))
				s := NewBatchStream(br, len(in))
				batch, err := s.Next()
				if err != nil {
					b.Fatal(err)
				}
				fr := batch.(*RecordBatch).Records.(RecordFieldsReader)
				for ; done < b.N; done++ {
					if err := fr.ReadRecordFields(&f); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
