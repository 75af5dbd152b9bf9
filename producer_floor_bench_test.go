package kafka

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"testing"

	"github.com/segmentio/kafka-go/compress"
	"github.com/segmentio/kafka-go/protocol"
	produceAPI "github.com/segmentio/kafka-go/protocol/produce"
)

// The floor of a producer's CPU per message: what turning N messages into
// a produce request costs (record encoding, CRC-32C, compression, framing)
// and what handing the frame to a loopback socket costs, with nothing of
// the Writer around it (no batching, no goroutines, no acknowledgements).
// docs/bench/PRODUCER-PROFILE.md sets the bench tool's CPU per message
// against these figures. Each sub-benchmark reports ns/msg.
//
//	go test -run '^$' -bench ProducerFloor -benchmem .

// floorValues returns the n values of size bytes that one partition gets
// when the bench tool's load generators (bench/clients/loadgen) cut values
// from word salad and spread them over partitions in turn: every stride-th
// value (3 for the Writer's RoundRobin over 3 partitions, 1 for franz-go's
// sticky partitioner), so that codecs see data compressible like theirs.
func floorValues(n, size, stride int) []Message {
	words := []string{"kafka", "broker", "partition", "offset", "record", "batch",
		"producer", "consumer", "topic", "leader", "replica", "commit", "fetch",
		"2026", "event", "user", "order", "id", "status", "ok", "{", "}", ":", ","}
	r := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	for sb.Len() < max(1<<16, 4*size) {
		sb.WriteString(words[r.IntN(len(words))])
		if r.IntN(4) == 0 {
			fmt.Fprintf(&sb, "%d", r.IntN(100000))
		}
		sb.WriteByte(' ')
	}
	pool := []byte(sb.String())
	msgs := make([]Message, n)
	for i := range msgs {
		off := (i * stride * 7919) % (len(pool) - size)
		msgs[i].Value = append([]byte(nil), pool[off:off+size]...)
	}
	return msgs
}

// floorCases are the batches measured: the bench tool's value sizes, with
// the batches the Writer builds there (BatchSize 1000, round robin over 3
// partitions) and those franz-go builds with its defaults (batches of up
// to 1 MB, ~5000 records of 100 B, from a sticky partitioner).
var floorCases = []struct {
	name                  string
	size, records, stride int
}{
	{"writer", 100, 1000, 3}, {"franz", 100, 5000, 1},
	{"writer", 1024, 1000, 3}, {"franz", 1024, 1000, 1},
}

var floorCodecs = []compress.Compression{0, compress.Zstd, compress.Snappy, compress.Lz4, compress.Gzip}

func floorName(c compress.Compression) string {
	if c == 0 {
		return "none"
	}
	return c.String()
}

func floorRequest(codec compress.Compression, records protocol.RecordReader) *produceAPI.Request {
	return &produceAPI.Request{
		Acks: 1, Timeout: 5000,
		Topics: []produceAPI.RequestTopic{{
			Topic: "bench",
			Partitions: []produceAPI.RequestPartition{{
				RecordSet: protocol.RecordSet{Attributes: protocol.Attributes(codec) & 7, Records: records},
			}},
		}},
	}
}

func reportPerMsg(b *testing.B, records int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(records), "ns/msg")
}

// BenchmarkProducerFloor/encode: a whole produce request (v9, one
// partition) encoded into a reused frame buffer, as the Writer's transport
// does before the socket write. The records were encoded when the batch
// took them (writeBatch.add, outside the loop): what is measured is the
// batch header, the copy (or compression) of the records and the request.
func BenchmarkProducerFloor(b *testing.B) {
	for _, fc := range floorCases {
		msgs := floorValues(fc.records, fc.size, fc.stride)
		for _, codec := range floorCodecs {
			b.Run(fmt.Sprintf("encode/%s/%dB/%s-%d", floorName(codec), fc.size, fc.name, fc.records), func(b *testing.B) {
				frame := &frameBuffer{} // the transport's
				var batch writeBatch
				for i := range msgs {
					batch.add(&msgs[i], false)
				}
				b.SetBytes(int64(fc.size * fc.records))
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					frame.b = frame.b[:0]
					req := floorRequest(codec, batch.recs.Reader())
					req.Prepare(9) // the record set version, as the transport sets it
					if err := protocol.WriteRequest(frame, 9, 1, "bench", req); err != nil {
						b.Fatal(err)
					}
				}
				reportPerMsg(b, fc.records)
			})
		}
		// The parts: CRC-32C over the uncompressed records and each codec
		// alone on them.
		var raw bytes.Buffer
		var batch writeBatch
		for i := range msgs {
			batch.add(&msgs[i], false)
		}
		rs := protocol.RecordSet{Version: 2, Records: batch.recs.Reader()}
		if _, err := rs.WriteTo(&raw); err != nil {
			b.Fatal(err)
		}
		table := crc32.MakeTable(crc32.Castagnoli)
		b.Run(fmt.Sprintf("crc32c/%dB/%s-%d", fc.size, fc.name, fc.records), func(b *testing.B) {
			b.SetBytes(int64(raw.Len()))
			for i := 0; i < b.N; i++ {
				crc32.Checksum(raw.Bytes(), table)
			}
			reportPerMsg(b, fc.records)
		})
		for _, codec := range floorCodecs[1:] {
			b.Run(fmt.Sprintf("codec/%s/%dB/%s-%d", floorName(codec), fc.size, fc.name, fc.records), func(b *testing.B) {
				var out bytes.Buffer
				b.SetBytes(int64(raw.Len()))
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					out.Reset()
					w := codec.Codec().NewWriter(&out)
					if _, err := w.Write(raw.Bytes()); err != nil {
						b.Fatal(err)
					}
					if err := w.Close(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(raw.Len())/float64(out.Len()), "ratio")
				reportPerMsg(b, fc.records)
			})
		}
		// The socket: one write of an uncompressed frame of this batch to
		// a loopback TCP connection drained by another goroutine.
		b.Run(fmt.Sprintf("socket/%dB/%s-%d", fc.size, fc.name, fc.records), func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			done := make(chan struct{})
			go func() {
				defer close(done)
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				_, _ = io.Copy(io.Discard, c)
			}()
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(raw.Len()))
			for i := 0; i < b.N; i++ {
				if _, err := c.Write(raw.Bytes()); err != nil {
					b.Fatal(err)
				}
			}
			reportPerMsg(b, fc.records)
			c.Close()
			<-done
		})
	}
}
