package protocol

import (
	"bytes"
	"io"
	"testing"
)

// TestRecordSetAllocsDoNotGrow checks the hot paths' allocation counts: a
// batch of 1000 records costs as many allocations as a batch of 10 (none
// when writing uncompressed), whether written or read.
func TestRecordSetAllocsDoNotGrow(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not stable under the race detector")
	}
	write := func(n int) float64 {
		recs := newBenchRecords(n)
		rs := RecordSet{Version: 2, Records: &recs.reader}
		var out bytes.Buffer
		out.Grow(1 << 20)
		return testing.AllocsPerRun(50, func() {
			recs.reset()
			out.Reset()
			if _, err := rs.WriteTo(&out); err != nil {
				t.Fatal(err)
			}
		})
	}
	if small, large := write(10), write(1000); small != 0 || large != 0 {
		t.Errorf("WriteTo allocations: %v for 10 records, %v for 1000", small, large)
	}

	read := func(n int) float64 {
		recs := newBenchRecords(n)
		var in bytes.Buffer
		if _, err := (&RecordSet{Version: 2, Records: &recs.reader}).WriteTo(&in); err != nil {
			t.Fatal(err)
		}
		var src bytes.Reader
		scratch := make([]byte, 1024)
		return testing.AllocsPerRun(50, func() {
			src.Reset(in.Bytes())
			var rs RecordSet
			if _, err := rs.ReadFrom(&src); err != nil {
				t.Fatal(err)
			}
			for {
				rec, err := rs.Records.ReadRecord()
				if err != nil {
					break
				}
				io.ReadFull(rec.Value, scratch[:rec.Value.Len()])
				rbCloseRecord(rec)
			}
		})
	}
	if small, large := read(10), read(1000); small != large || large > 12 {
		t.Errorf("ReadFrom allocations: %v for 10 records, %v for 1000", small, large)
	}
}
