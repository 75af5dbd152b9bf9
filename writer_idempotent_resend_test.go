package kafka

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/initproducerid"
	produceAPI "github.com/segmentio/kafka-go/protocol/produce"
)

// resendLog is ackAll that keeps the wire bytes of every record batch it
// is sent, and loses the reply of each Produce request that carries the
// first batch of some partition (an unknown outcome: the batch is sent
// again), so that every partition resends.
type resendLog struct {
	ackAll
	mu      sync.Mutex
	lost    map[int32]bool // partitions that had a reply lost
	batches map[int32][][]byte
}

func (l *resendLog) RoundTrip(ctx context.Context, addr net.Addr, req Request) (Response, error) {
	if _, ok := req.(*initproducerid.Request); ok {
		return &initproducerid.Response{ProducerID: 7, ProducerEpoch: 0}, nil
	}
	r, ok := req.(*produceAPI.Request)
	if !ok {
		return l.ackAll.RoundTrip(ctx, addr, req)
	}
	l.mu.Lock()
	lose := false
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			if !l.lost[p.Partition] {
				l.lost[p.Partition] = true
				lose = true
			}
			var buf bytes.Buffer
			rs := p.RecordSet // the transport sets the version it negotiated
			rs.Version = 2
			if _, err := rs.WriteTo(&buf); err != nil {
				l.mu.Unlock()
				return nil, err
			}
			l.batches[p.Partition] = append(l.batches[p.Partition], buf.Bytes())
		}
	}
	l.mu.Unlock()
	if lose {
		return nil, io.ErrUnexpectedEOF
	}
	return l.ackAll.RoundTrip(ctx, addr, req)
}

// TestIdempotentWriterResendsSameBytes: an idempotent Writer whose replies
// are lost sends each batch again with the very bytes of its first attempt
// (records, timestamps given to messages without one, sequence, CRC), on
// every partition and with every codec.
func TestIdempotentWriterResendsSameBytes(t *testing.T) {
	for _, codec := range []Compression{0, Gzip, Snappy, Lz4, Zstd} {
		t.Run(fmt.Sprint("codec", codec), func(t *testing.T) {
			const partitions = 8
			l := &resendLog{ackAll: ackAll{partitions: partitions}, lost: map[int32]bool{}, batches: map[int32][][]byte{}}
			w := &Writer{Addr: TCP("stub"), Topic: "t", Transport: l, Balancer: &RoundRobin{},
				RequiredAcks: RequireAll, Idempotent: true, Compression: codec, BatchSize: 5,
				BatchTimeout: time.Millisecond, WriteBackoffMin: time.Millisecond, WriteBackoffMax: time.Millisecond,
				MaxAttempts: 10}
			defer w.Close()
			var msgs []Message
			for i := 0; i < 200; i++ {
				m := Message{Value: []byte(fmt.Sprint("v", i))}
				if i%3 == 0 {
					m.Time = time.UnixMilli(int64(1_700_000_000_000 - i*1000))
				}
				if i%4 == 0 {
					m.Headers = []Header{{Key: "h", Value: nil}, {Key: "e", Value: []byte{}}}
				}
				msgs = append(msgs, m)
			}
			if err := w.WriteMessages(testContext(t), msgs...); err != nil {
				t.Fatal(err)
			}
			l.mu.Lock()
			defer l.mu.Unlock()
			for p, sent := range l.batches {
				// Attempts of one batch carry the same base sequence; the
				// sequences of a partition follow each other.
				bySeq := map[int32][]byte{}
				for i, b := range sent {
					if len(b) < 61 || b[16] != 2 {
						t.Fatalf("partition %d attempt %d: not a v2 record batch", p, i)
					}
					seq := int32(b[53])<<24 | int32(b[54])<<16 | int32(b[55])<<8 | int32(b[56])
					if first, ok := bySeq[seq]; ok && !bytes.Equal(first, b) {
						t.Fatalf("partition %d: batch of sequence %d sent again with other bytes", p, seq)
					}
					bySeq[seq] = b
				}
				if len(bySeq) == len(sent) {
					t.Fatalf("partition %d: no batch was sent twice: the test lost no reply", p)
				}
			}
			var n int
			for _, sent := range l.batches {
				seen := map[string]bool{}
				for _, b := range sent {
					if seen[string(b)] {
						continue
					}
					seen[string(b)] = true
					rs := protocol.RecordSet{}
					if _, err := rs.ReadFrom(bytes.NewReader(b)); err != nil {
						t.Fatal(err)
					}
					for {
						if _, err := rs.Records.ReadRecord(); err != nil {
							break
						}
						n++
					}
				}
			}
			if n != len(msgs) {
				t.Fatalf("%d distinct records sent, want %d", n, len(msgs))
			}
		})
	}
}
