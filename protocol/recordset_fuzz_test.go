package protocol

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// fuzzSeeds are valid inputs of every kind the decoder knows, and a few
// damaged ones. The committed corpus in testdata/fuzz/FuzzRecordSetReadFrom
// holds the same kinds.
func fuzzSeeds(t testing.TB) [][]byte {
	ts := goldenT0.UnixMilli()
	v2 := goldenV2(ts)
	var seeds [][]byte
	seeds = append(seeds, v2, v2[:40], append(append([]byte{}, v2...), v2[:70]...))
	for _, c := range allCodecs {
		seeds = append(seeds, encodeValues(t, Attributes(c), "a", "bb", "ccc"))
		inner := append(legacyMessage(0, 1, 0, ts, []byte("k"), []byte("v")), legacyMessage(1, 1, 0, ts, nil, nil)...)
		seeds = append(seeds, legacyMessage(1, 1, int8(c), ts, nil, compressWith(t, c, inner)))
	}
	seeds = append(seeds,
		legacyMessage(3, 0, 0, 0, []byte("k"), []byte("v")),
		append(legacyMessage(3, 1, 0, ts, nil, []byte("v")), v2...),
		encodeValues(t, Transactional|Control, "\x00\x00\x00\x01"),
	)
	marker := RecordSet{Version: 2, Attributes: Transactional | Control, Records: NewControlBatch(
		ControlRecord{Time: goldenT0, Type: 1, Data: commitMarker})}
	var buf bytes.Buffer
	if _, err := marker.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	seeds = append(seeds, append(encodeValues(t, Transactional, "t"), buf.Bytes()...))
	return seeds
}

func FuzzRecordSetReadFrom(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var rs RecordSet
		n, err := rs.ReadFrom(bytes.NewReader(in))
		if n != int64(len(in)) {
			t.Fatalf("consumed %d of %d bytes", n, len(in))
		}
		if err != nil {
			if rs.Records != nil {
				t.Fatalf("records along with error %v", err)
			}
			return
		}
		if (rs.Records == nil) != (len(in) == 0) {
			t.Fatalf("%d bytes read without error gave records %v", len(in), rs.Records)
		}
		if rs.Records == nil {
			return
		}
		// Every batch reads to its end without error, control batches too.
		data := 0
		for _, batch := range rs.Records.(*RecordStream).Records {
			cb, control := batch.(*ControlBatch)
			for {
				var err error
				if control {
					_, err = cb.ReadControlRecord() // may reject the record, must not fail the batch
					if err != nil && !errors.Is(err, io.EOF) {
						continue
					}
				} else {
					var rec *Record
					if rec, err = batch.ReadRecord(); err == nil {
						data++
						if _, e := ReadAll(rec.Key); e != nil {
							t.Fatal(e)
						}
						rbCloseRecord(rec)
					}
				}
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
		}
		// What decodes re-encodes, and decodes again to as many records.
		var again RecordSet
		again.ReadFrom(bytes.NewReader(in))
		var buf bytes.Buffer
		again.Version = 2
		again.Attributes = 0
		if _, err := again.WriteTo(&buf); err != nil {
			if errors.Is(err, ErrNoRecord) && data == 0 {
				return
			}
			t.Fatal(err)
		}
		var back RecordSet
		if _, err := back.ReadFrom(&buf); err != nil {
			t.Fatal(err)
		}
		if got := len(readRecords(t, back.Records)); got != data {
			t.Fatalf("re-encoded %d records as %d", data, got)
		}
	})
}
