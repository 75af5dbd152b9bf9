package kafka

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/apiversions"
	"github.com/segmentio/kafka-go/protocol/fetch"
	"github.com/segmentio/kafka-go/protocol/listoffsets"
)

// wireFetchStub is a partition leader whose fetch responses go through the
// wire format: it holds one encoded response frame (batches of
// batchRecords records, as many as fit in maxBytes, as a broker fills a
// fetch up to MaxBytes), patches the base offsets of its batches for the fetch
// offset (they are outside the batch CRC, as on a real broker), and
// decodes it with protocol.ReadResponse. A Reader on it pays for frame
// reading, record set decoding, decompression and delivery, as against a
// broker, without a network or a broker's CPU in the measure.
type wireFetchStub struct {
	mu      sync.Mutex
	frame   []byte
	batches []int // positions of the batches' base offsets in frame
	perSet  int64 // records in the frame
	batch   int64 // records per batch
}

const wireFetchVersion = 11

func newWireFetchStub(tb testing.TB, valueSize, batchRecords, maxBytes int, codec CompressionCodec) *wireFetchStub {
	value := bytes.Repeat([]byte("kafka broker partition offset 2026 "), valueSize/35+1)[:valueSize]
	return newWireFetchStubOf(tb, func() []protocol.Record {
		recs := make([]protocol.Record, batchRecords)
		for i := range recs {
			recs[i] = protocol.Record{Time: time.UnixMilli(1_700_000_000_000),
				Key: protocol.NewBytes([]byte(fmt.Sprintf("user-%04d", i))), Value: protocol.NewBytes(value)}
		}
		return recs
	}, maxBytes, codec)
}

// newWireFetchStubOf fills a response with batches of the records batch
// returns (the same number each time).
func newWireFetchStubOf(tb testing.TB, batch func() []protocol.Record, maxBytes int, codec CompressionCodec) *wireFetchStub {
	s := &wireFetchStub{}
	var sets, one bytes.Buffer
	for {
		recs := batch()
		s.batch = int64(len(recs))
		rs := protocol.RecordSet{Version: 2, Records: protocol.NewRecordReader(recs...)}
		if codec != nil {
			rs.Attributes = protocol.Attributes(codec.Code())
		}
		one.Reset()
		if _, err := rs.WriteTo(&one); err != nil {
			tb.Fatal(err)
		}
		if sets.Len()+one.Len() > maxBytes {
			break // as a broker fills a fetch up to MaxBytes
		}
		sets.Write(one.Bytes())
		s.perSet += s.batch
	}
	records := sets.Bytes()
	// Encode a response around the first batch, then put all the batches in
	// its place: re-encoding a decoded set would merge them into one.
	first := records[:12+int(binary.BigEndian.Uint32(records[8:]))]
	var rs protocol.RecordSet
	if _, err := rs.ReadFrom(bytes.NewReader(first)); err != nil {
		tb.Fatal(err)
	}
	res := &fetch.Response{Topics: []fetch.ResponseTopic{{Topic: "t", Partitions: []fetch.ResponsePartition{{
		HighWatermark: 1 << 50, LastStableOffset: 1 << 50, RecordSet: rs,
	}}}}}
	var buf bytes.Buffer
	if err := protocol.WriteResponse(&buf, wireFetchVersion, 1, res); err != nil {
		tb.Fatal(err)
	}
	frame := buf.Bytes()
	// The records are the last field of a v11 response; the batch was
	// renumbered from 0 like the original, so it compares equal.
	if !bytes.HasSuffix(frame, first) {
		tb.Fatal("record set not at the end of the encoded frame")
	}
	start := len(frame) - len(first)
	frame = append(frame[:start], records...)
	binary.BigEndian.PutUint32(frame[start-4:], uint32(len(records)))
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	s.frame = frame
	for pos := start; pos < len(frame); {
		s.batches = append(s.batches, pos)
		pos += 12 + int(binary.BigEndian.Uint32(frame[pos+8:]))
	}
	return s
}

func (s *wireFetchStub) RoundTrip(ctx context.Context, _ net.Addr, req Request) (Response, error) {
	switch r := req.(type) {
	case *listoffsets.Request:
		p := r.Topics[0].Partitions[0]
		offset := int64(1 << 50)
		if p.Timestamp == FirstOffset {
			offset = 0
		}
		return &listoffsets.Response{Topics: []listoffsets.ResponseTopic{{
			Topic:      "t",
			Partitions: []listoffsets.ResponsePartition{{Partition: p.Partition, Offset: offset}},
		}}}, nil
	case *fetch.Request:
		s.mu.Lock()
		defer s.mu.Unlock()
		base := r.Topics[0].Partitions[0].FetchOffset
		for i, pos := range s.batches {
			binary.BigEndian.PutUint64(s.frame[pos:], uint64(base+int64(i)*s.batch))
		}
		_, msg, err := protocol.ReadResponse(bytes.NewReader(s.frame), protocol.Fetch, wireFetchVersion)
		return msg, err
	}
	return nil, fmt.Errorf("unexpected %T", req)
}

// serveOver answers the fetches of a Reader from s over loopback, as a
// broker does: the frame (v11) is written to the connection, and the
// Reader reads it through its Transport (records streamed off the socket).
func (s *wireFetchStub) serveOver(tb testing.TB) *fakebroker.Cluster {
	fc := fakebroker.New(tb, 1)
	b := fc.Brokers[0]
	b.Mu.Lock()
	keys := append([]apiversions.ApiKeyResponse(nil), b.ApiKeys...)
	for i := range keys {
		if protocol.ApiKey(keys[i].ApiKey) == protocol.Fetch {
			keys[i].MaxVersion = wireFetchVersion
		}
	}
	b.ApiKeys = keys
	b.Mu.Unlock()
	fc.SetHandler(func(r *fakebroker.Request) {
		switch req := r.Msg.(type) {
		case *listoffsets.Request:
			res, _ := s.RoundTrip(context.Background(), nil, req)
			r.Reply(res)
		case *fetch.Request:
			s.mu.Lock()
			base := req.Topics[0].Partitions[0].FetchOffset
			for i, pos := range s.batches {
				binary.BigEndian.PutUint64(s.frame[pos:], uint64(base+int64(i)*s.batch))
			}
			binary.BigEndian.PutUint32(s.frame[4:], uint32(r.ID))
			r.Conn.WMu.Lock()
			r.Conn.NC.Write(s.frame)
			r.Conn.WMu.Unlock()
			s.mu.Unlock()
		}
	})
	return fc
}

// BenchmarkReaderReadMessage measures a partition Reader's hot path per
// message: reading fetch responses off a loopback connection (frame,
// record batches, decompression) and ReadMessage, with the Reader's
// defaults (QueueCapacity 100, MaxBytes 1 MB), on messages with a 9-byte
// key. The fake broker's writes are in the measure too (cpu-ns/op counts
// both sides). -benchmem shows the allocations per message.
func BenchmarkReaderReadMessage(b *testing.B) {
	for _, size := range []int{100, 1024} {
		for _, codec := range []CompressionCodec{nil, Zstd.Codec()} {
			name := "none"
			if codec != nil {
				name = codec.Name()
			}
			b.Run(fmt.Sprintf("%dB/%s", size, name), func(b *testing.B) {
				stub := newWireFetchStub(b, size, 1000*100/size, 1e6, codec)
				fc := stub.serveOver(b)
				r := NewReader(ReaderConfig{Brokers: []string{fc.Addr().String()}, Topic: "t"})
				defer r.Close()
				ctx := context.Background()
				if _, err := r.ReadMessage(ctx); err != nil { // start-up out of the measure
					b.Fatal(err)
				}
				b.SetBytes(int64(size))
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := processCPU()
				for i := 0; i < b.N; i++ {
					m, err := r.ReadMessage(ctx)
					if err != nil {
						b.Fatal(err)
					}
					if len(m.Value) != size || len(m.Key) != 9 || m.Offset != int64(i+1) {
						b.Fatalf("message %d: offset %d, key %q, %d bytes", i+1, m.Offset, m.Key, len(m.Value))
					}
				}
				// Both sides' CPU (the fake broker's writes too), per message.
				b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// BenchmarkReaderReadMessageText is BenchmarkReaderReadMessage on messages
// shaped like those of the bench tool's load generator, which franz-go
// writes there: values cut at random offsets of a text of words and numbers
// (compressing about as text does, where the repeated value above
// compresses to almost nothing), in batches of up to 1 MB. Compressed
// batches then cost what they cost in the consumer rows of docs/bench: a
// decompressed batch larger than a cache, compressed bytes a good part of
// what a fetch reads.
func BenchmarkReaderReadMessageText(b *testing.B) {
	for _, size := range []int{100, 1024} {
		for _, codec := range []CompressionCodec{nil, Zstd.Codec()} {
			name := "none"
			if codec != nil {
				name = codec.Name()
			}
			b.Run(fmt.Sprintf("%dB/%s", size, name), func(b *testing.B) {
				text := benchText(1 << 16)
				rnd := rand.New(rand.NewPCG(5, 6))
				perBatch := 1_000_000 / (size + 20)
				stub := newWireFetchStubOf(b, func() []protocol.Record {
					recs := make([]protocol.Record, perBatch)
					for i := range recs {
						off := rnd.IntN(len(text) - size)
						recs[i] = protocol.Record{Time: time.UnixMilli(1_700_000_000_000),
							Key: protocol.NewBytes([]byte(fmt.Sprintf("user-%04d", i))), Value: protocol.NewBytes(text[off : off+size])}
					}
					return recs
				}, 3e6, codec)
				fc := stub.serveOver(b)
				r := NewReader(ReaderConfig{Brokers: []string{fc.Addr().String()}, Topic: "t"})
				defer r.Close()
				ctx := context.Background()
				if _, err := r.ReadMessage(ctx); err != nil { // start-up out of the measure
					b.Fatal(err)
				}
				b.SetBytes(int64(size))
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := processCPU()
				for i := 0; i < b.N; i++ {
					m, err := r.ReadMessage(ctx)
					if err != nil {
						b.Fatal(err)
					}
					if len(m.Value) != size || len(m.Key) != 9 || m.Offset != int64(i+1) {
						b.Fatalf("message %d: offset %d, key %q, %d bytes", i+1, m.Offset, m.Key, len(m.Value))
					}
				}
				b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// benchText returns n bytes of words and numbers in a random order.
func benchText(n int) []byte {
	words := []string{"kafka", "broker", "partition", "offset", "record", "batch",
		"producer", "consumer", "topic", "leader", "replica", "commit", "fetch"}
	rnd := rand.New(rand.NewPCG(1, 2))
	var b []byte
	for len(b) < n {
		b = append(b, words[rnd.IntN(len(words))]...)
		if rnd.IntN(4) == 0 {
			b = strconv.AppendInt(b, int64(rnd.IntN(100000)), 10)
		}
		b = append(b, ' ')
	}
	return b
}
