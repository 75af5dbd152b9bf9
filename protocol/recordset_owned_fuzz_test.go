package protocol

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// readOwned (the fetch path: uncompressed batches stay in the frame,
// compressed ones are copied out and decompressed lazily) never panics on
// damaged input, and, where ReadFrom reads every record, it reads the same
// keys and values.
func FuzzRecordSetReadOwned(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		want, wantOK := fuzzAllRecords(func(rs *RecordSet) error {
			_, err := rs.ReadFrom(bytes.NewReader(in))
			return err
		})
		frame := append([]byte(nil), in...)
		got, gotOK := fuzzAllRecords(func(rs *RecordSet) error { return rs.readOwned(frame) })
		if !wantOK || !gotOK {
			return
		}
		if len(want) != len(got) {
			t.Fatalf("ReadFrom read %d keys and values, readOwned %d", len(want), len(got))
		}
		for i := range want {
			if !bytes.Equal(want[i], got[i]) {
				t.Fatalf("field %d: ReadFrom %q, readOwned %q", i, want[i], got[i])
			}
		}
	})
}

// fuzzAllRecords decodes with read and returns every record's key and value
// (copied), and whether all of it read without error.
func fuzzAllRecords(read func(*RecordSet) error) (out [][]byte, ok bool) {
	var rs RecordSet
	if err := read(&rs); err != nil || rs.Records == nil {
		return nil, err == nil
	}
	stream, isStream := rs.Records.(*RecordStream)
	if !isStream {
		return nil, false
	}
	ok = true
	for _, batch := range stream.Records {
		if _, control := batch.(*ControlBatch); control {
			continue
		}
		for {
			rec, err := batch.ReadRecord()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				ok = false
				break
			}
			k, e1 := ReadAll(rec.Key)
			v, e2 := ReadAll(rec.Value)
			if e1 != nil || e2 != nil {
				ok = false
			}
			out = append(out, append([]byte(nil), k...), append([]byte(nil), v...))
		}
	}
	return out, ok
}
