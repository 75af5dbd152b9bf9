package kafka

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/protocol"
)

// keepValue is the value of the record at offset o: long enough that a
// batch's records fill a buffer worth recycling, and different at every
// offset.
func keepValue(o int64) string {
	return fmt.Sprintf("v%d-%s", o, bytes.Repeat([]byte{byte('a' + o%26)}, 200+int(o%50)))
}

// compressedBatch encodes records from to to-1 as one v2 batch compressed
// with codec (keys "k<offset>", values keepValue), an empty value at every
// offset divisible by 7 and a null key at every offset divisible by 5.
func compressedBatch(t *testing.T, codec CompressionCodec, from, to int64) []byte {
	var recs []protocol.Record
	for o := from; o < to; o++ {
		rec := protocol.Record{Offset: o, Time: time.UnixMilli(1000 + o), Value: protocol.NewBytes([]byte(keepValue(o)))}
		if o%5 != 0 {
			rec.Key = protocol.NewBytes([]byte(fmt.Sprintf("k%d", o)))
		}
		if o%7 == 0 {
			rec.Value = protocol.NewBytes([]byte{})
		}
		recs = append(recs, rec)
	}
	var buf bytes.Buffer
	rs := protocol.RecordSet{Version: 2, Attributes: protocol.Attributes(codec.Code()), Records: protocol.NewRecordReader(recs...)}
	if _, err := rs.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	binary.BigEndian.PutUint64(b, uint64(from)) // outside the CRC
	return b
}

// The messages of compressed batches keep their keys and values: a
// program that holds every message it read, while the Reader goes on
// decompressing more batches, finds each one as it was written; writing
// to or appending to one message's key or value changes no other message.
func TestReaderCompressedMessagesKept(t *testing.T) {
	for _, codec := range []CompressionCodec{Zstd.Codec(), Gzip.Codec(), Snappy.Codec(), Lz4.Codec()} {
		t.Run(codec.Name(), func(t *testing.T) {
			const end, perBatch = 600, 20
			sb := newStreamBroker(t, end, func(_ int, r *fakebroker.Request, offset int64) {
				var batches [][]byte
				for from := offset; from < end && len(batches) < 5; from += perBatch {
					batches = append(batches, compressedBatch(t, codec, from, min(from+perBatch, end)))
				}
				writeRaw(r, fetchFrameV11(r.ID, end, batches...)...)
			})
			r := newStreamReader(t, sb, nil)
			ctx := context.Background()
			var kept []Message
			for i := 0; i < end; i++ {
				m, err := r.ReadMessage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				kept = append(kept, m)
			}
			for i := range kept {
				// Scribble over every message's value within its length, and
				// append to its key, then check every other message.
				if m := &kept[i]; len(m.Value) > 0 {
					m.Value[0] = '#'
					m.Key = append(m.Key, "#####"...)
				}
			}
			for i, m := range kept {
				o := int64(i)
				wantKey, wantValue := fmt.Sprintf("k%d", o), keepValue(o)
				if o%5 == 0 {
					wantKey = ""
				}
				if o%7 == 0 {
					wantValue = ""
				} else {
					wantValue = "#" + wantValue[1:]
					wantKey += "#####"
				}
				if m.Offset != o || string(m.Key) != wantKey || string(m.Value) != wantValue {
					t.Fatalf("message %d: offset %d, key %q, value %.20q...", o, m.Offset, m.Key, m.Value)
				}
				if o%5 == 0 && o%7 == 0 && m.Key != nil {
					t.Fatalf("message %d: null key read as %q", o, m.Key)
				}
				if o%7 == 0 && (m.Value == nil || len(m.Value) != 0) {
					t.Fatalf("message %d: empty value read as %v", o, m.Value)
				}
			}
		})
	}
}
