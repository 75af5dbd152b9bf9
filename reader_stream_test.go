package kafka

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/apiversions"
	"github.com/segmentio/kafka-go/protocol/fetch"
	"github.com/segmentio/kafka-go/protocol/listoffsets"
)

// streamBroker is a fake leader of partition 0 of topic "t" (offsets 0 to
// end) whose Fetch answers are raw frames written by the test, in pieces,
// so that a test controls where a response stops, stalls or breaks.
type streamBroker struct {
	fc  *fakebroker.Cluster
	end int64

	mu      sync.Mutex
	fetches []int64 // fetch offsets, in order
	answer  func(n int, r *fakebroker.Request, offset int64)
}

func newStreamBroker(t *testing.T, end int64, answer func(n int, r *fakebroker.Request, offset int64)) *streamBroker {
	return newStreamBrokerOn(t, fakebroker.New(t, 1), end, answer)
}

// newStreamBrokerOn is newStreamBroker on the fake cluster fc (one broker).
func newStreamBrokerOn(t *testing.T, fc *fakebroker.Cluster, end int64, answer func(n int, r *fakebroker.Request, offset int64)) *streamBroker {
	sb := &streamBroker{fc: fc, end: end, answer: answer}
	b := sb.fc.Brokers[0]
	b.Mu.Lock()
	for i, k := range b.ApiKeys {
		if protocol.ApiKey(k.ApiKey) == protocol.Fetch {
			b.ApiKeys[i].MaxVersion = 11 // the frames below are v11
		}
	}
	b.ApiKeys = append([]apiversions.ApiKeyResponse(nil), b.ApiKeys...)
	b.Mu.Unlock()
	sb.fc.SetHandler(func(r *fakebroker.Request) {
		switch m := r.Msg.(type) {
		case *listoffsets.Request:
			p := m.Topics[0].Partitions[0]
			offset := sb.end
			if p.Timestamp == FirstOffset {
				offset = 0
			}
			r.Reply(&listoffsets.Response{Topics: []listoffsets.ResponseTopic{{
				Topic: "t", Partitions: []listoffsets.ResponsePartition{{Partition: p.Partition, Offset: offset}},
			}}})
		case *fetch.Request:
			offset := m.Topics[0].Partitions[0].FetchOffset
			sb.mu.Lock()
			n := len(sb.fetches)
			sb.fetches = append(sb.fetches, offset)
			sb.mu.Unlock()
			if offset >= sb.end {
				// Nothing new: answer empty after a while, as a broker
				// holds a fetch for MaxWait.
				go func() {
					time.Sleep(5 * time.Millisecond)
					writeRaw(r, fetchFrameV11(r.ID, sb.end, nil)...)
				}()
				return
			}
			go sb.answer(n, r, offset)
		}
	})
	return sb
}

func (sb *streamBroker) fetchOffsets() []int64 {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return append([]int64(nil), sb.fetches...)
}

// writeRaw writes the pieces to the connection of r, in order, each in
// its own write.
func writeRaw(r *fakebroker.Request, pieces ...[]byte) {
	r.Conn.WMu.Lock()
	defer r.Conn.WMu.Unlock()
	for _, p := range pieces {
		if _, err := r.Conn.NC.Write(p); err != nil {
			return
		}
	}
}

// streamBatch encodes records from to to-1 as one uncompressed v2 batch
// (keys "k<offset>", values "v<offset>").
func streamBatch(t *testing.T, from, to int64) []byte {
	var buf bytes.Buffer
	rs := protocol.RecordSet{Version: 2, Records: protocol.NewRecordReader(stubRecords(from, to)...)}
	if _, err := rs.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	binary.BigEndian.PutUint64(b, uint64(from)) // outside the CRC
	return b
}

// fetchFrameV11 returns a v11 Fetch response frame for partition 0 of "t"
// whose records are the concatenation of batches, split in two pieces: the
// frame up to the records' length (included), and the records.
func fetchFrameV11(id int32, hwm int64, batches ...[]byte) [][]byte {
	records := bytes.Join(batches, nil)
	var w []byte
	be := binary.BigEndian
	w = be.AppendUint32(w, 0) // size, set below
	w = be.AppendUint32(w, uint32(id))
	w = be.AppendUint32(w, 0)                    // throttle
	w = be.AppendUint16(w, 0)                    // error
	w = be.AppendUint32(w, 0)                    // session
	w = be.AppendUint32(w, 1)                    // topics
	w = append(be.AppendUint16(w, 1), 't')       // topic
	w = be.AppendUint32(w, 1)                    // partitions
	w = be.AppendUint32(w, 0)                    // partition
	w = be.AppendUint16(w, 0)                    // error
	w = be.AppendUint64(w, uint64(hwm))          // high watermark
	w = be.AppendUint64(w, uint64(hwm))          // last stable offset
	w = be.AppendUint64(w, 0)                    // log start offset
	w = be.AppendUint32(w, 0xffffffff)           // aborted transactions: null
	w = be.AppendUint32(w, 0xffffffff)           // preferred read replica
	w = be.AppendUint32(w, uint32(len(records))) // records
	be.PutUint32(w, uint32(len(w)-4+len(records)))
	return [][]byte{w, records}
}

func newStreamReader(t *testing.T, sb *streamBroker, modify func(*ReaderConfig)) *Reader {
	cfg := ReaderConfig{
		Brokers:        []string{sb.fc.Addr().String()},
		Topic:          "t",
		MaxWait:        50 * time.Millisecond,
		ReadBackoffMin: time.Millisecond,
		ReadBackoffMax: 5 * time.Millisecond,
	}
	if modify != nil {
		modify(&cfg)
	}
	r := NewReader(cfg)
	t.Cleanup(func() { r.Close() })
	return r
}

// readOffsets reads n messages and checks their keys and values.
func readOffsets(t *testing.T, r *Reader, n int, timeout time.Duration) []int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var offsets []int64
	for i := 0; i < n; i++ {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("after offsets %v: %v", offsets, err)
		}
		if string(m.Key) != fmt.Sprintf("k%d", m.Offset) || string(m.Value) != fmt.Sprintf("v%d", m.Offset) {
			t.Fatalf("message %d: key %q value %q", m.Offset, m.Key, m.Value)
		}
		offsets = append(offsets, m.Offset)
	}
	return offsets
}

func offsetRange(from, to int64) string {
	var o []int64
	for i := from; i < to; i++ {
		o = append(o, i)
	}
	return fmt.Sprint(o)
}

// The Reader delivers the records of a response as they arrive: those of
// the first batch are read while the broker has not sent the second yet
// (reading the response whole first, it would deliver nothing).
func TestReaderStreamDeliversBeforeResponseEnds(t *testing.T) {
	rest := make(chan struct{})
	sb := newStreamBroker(t, 20, func(n int, r *fakebroker.Request, offset int64) {
		if n != 0 {
			writeRaw(r, fetchFrameV11(r.ID, 20, streamBatch(t, offset, 20))...)
			return
		}
		b1, b2 := streamBatch(t, 0, 10), streamBatch(t, 10, 20)
		f := fetchFrameV11(r.ID, 20, b1, b2)
		writeRaw(r, f[0], f[1][:len(b1)+30])
		<-rest
		writeRaw(r, f[1][len(b1)+30:])
	})
	r := newStreamReader(t, sb, nil)
	if got := fmt.Sprint(readOffsets(t, r, 10, 10*time.Second)); got != offsetRange(0, 10) {
		t.Fatalf("offsets %s", got)
	}
	close(rest)
	if got := fmt.Sprint(readOffsets(t, r, 10, 10*time.Second)); got != offsetRange(10, 20) {
		t.Fatalf("offsets %s", got)
	}
	if f := sb.fetchOffsets(); f[0] != 0 || (len(f) > 1 && f[1] != 20) {
		t.Fatalf("fetch offsets %v: the second batch came in the first response", f)
	}
}

// A connection lost in the middle of a response: the records read before
// are delivered once, and the Reader fetches again from the first one it
// did not deliver.
func TestReaderStreamConnectionLostMidResponse(t *testing.T) {
	for _, cut := range []int{0, 1, 12, 30, 61, 70} {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			sb := newStreamBroker(t, 20, func(n int, r *fakebroker.Request, offset int64) {
				if n != 0 {
					writeRaw(r, fetchFrameV11(r.ID, 20, streamBatch(t, offset, 20))...)
					return
				}
				b1, b2 := streamBatch(t, 0, 10), streamBatch(t, 10, 20)
				f := fetchFrameV11(r.ID, 20, b1, b2)
				writeRaw(r, f[0], f[1][:len(b1)+cut])
				time.Sleep(20 * time.Millisecond)
				r.CloseConn()
			})
			r := newStreamReader(t, sb, nil)
			if got := fmt.Sprint(readOffsets(t, r, 20, 10*time.Second)); got != offsetRange(0, 20) {
				t.Fatalf("offsets %s", got)
			}
			if f := sb.fetchOffsets(); len(f) < 2 || f[0] != 0 || f[1] != 10 {
				t.Fatalf("fetch offsets %v, want 0 then 10", f)
			}
		})
	}
}

// A broker that stops sending in the middle of a response: after
// ReadBatchTimeout without a byte the Reader gives up on the connection
// and fetches again after the records it delivered.
func TestReaderStreamBrokerStallsMidResponse(t *testing.T) {
	stall := make(chan struct{})
	defer close(stall)
	sb := newStreamBroker(t, 20, func(n int, r *fakebroker.Request, offset int64) {
		if n != 0 {
			writeRaw(r, fetchFrameV11(r.ID, 20, streamBatch(t, offset, 20))...)
			return
		}
		b1, b2 := streamBatch(t, 0, 10), streamBatch(t, 10, 20)
		f := fetchFrameV11(r.ID, 20, b1, b2)
		writeRaw(r, f[0], f[1][:len(b1)+5])
		<-stall
	})
	r := newStreamReader(t, sb, func(c *ReaderConfig) { c.ReadBatchTimeout = 200 * time.Millisecond })
	if got := fmt.Sprint(readOffsets(t, r, 20, 10*time.Second)); got != offsetRange(0, 20) {
		t.Fatalf("offsets %s", got)
	}
	if f := sb.fetchOffsets(); len(f) < 2 || f[0] != 0 || f[1] != 10 {
		t.Fatalf("fetch offsets %v, want 0 then 10", f)
	}
}

// A program slower than ReadBatchTimeout between messages does not make
// the Reader give up on a response whose bytes are all there: the timeout
// bounds waits for the broker, not for the program.
func TestReaderStreamSlowProgram(t *testing.T) {
	// 3000 records, several times the read-ahead buffer, all sent at once:
	// the Reader reads the socket again and again while the program dawdles.
	const end = 3000
	sb := newStreamBroker(t, end, func(n int, r *fakebroker.Request, offset int64) {
		var batches [][]byte
		for from := offset; from < end; from += 1000 {
			batches = append(batches, streamBatch(t, from, min(from+1000, end)))
		}
		writeRaw(r, fetchFrameV11(r.ID, end, batches...)...)
	})
	// The timeout is long enough that the fake broker, which writes as
	// the Reader reads (the response is larger than the socket buffers),
	// is not mistaken for a slow one on a loaded machine; the program's
	// pauses are longer still.
	r := newStreamReader(t, sb, func(c *ReaderConfig) {
		c.ReadBatchTimeout = 250 * time.Millisecond
		c.QueueCapacity = 1
	})
	var got []int64
	for i := 0; i < end; i++ {
		got = append(got, readOffsets(t, r, 1, 10*time.Second)...)
		if i%300 == 0 {
			time.Sleep(350 * time.Millisecond)
		}
	}
	if fmt.Sprint(got) != offsetRange(0, end) {
		t.Fatal("offsets out of order, missing or repeated")
	}
	if f := sb.fetchOffsets(); f[0] != 0 || (len(f) > 1 && f[1] != end) {
		t.Fatalf("fetch offsets %v: the first response was given up on", f)
	}
}

// A batch whose CRC does not match is found out after its records were
// delivered (upstream's Reader delivers them without checking): the
// error is logged, and reading goes on after the batch, without
// delivering anything twice.
func TestReaderStreamCRCMismatch(t *testing.T) {
	sb := newStreamBroker(t, 20, func(n int, r *fakebroker.Request, offset int64) {
		if offset != 0 {
			writeRaw(r, fetchFrameV11(r.ID, 20, streamBatch(t, offset, 20))...)
			return
		}
		b1 := streamBatch(t, 0, 10)
		b1[17] ^= 0xff // the CRC field
		writeRaw(r, fetchFrameV11(r.ID, 20, b1, streamBatch(t, 10, 20))...)
	})
	var logs strings.Builder
	var mu sync.Mutex
	r := newStreamReader(t, sb, func(c *ReaderConfig) {
		c.ErrorLogger = LoggerFunc(func(f string, a ...interface{}) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(&logs, f+"\n", a...)
		})
	})
	if got := fmt.Sprint(readOffsets(t, r, 20, 10*time.Second)); got != offsetRange(0, 20) {
		t.Fatalf("offsets %s", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "crc32 checksum mismatch") {
		t.Fatalf("error log %q does not report the CRC", logs.String())
	}
	if f := sb.fetchOffsets(); len(f) < 2 || f[0] != 0 || f[1] != 10 {
		t.Fatalf("fetch offsets %v, want 0 then 10", f)
	}
}

// SetOffset while a partition reader is in the middle of a response
// (waiting for room in the queue): nothing of the old response reaches
// the program after the call, and reading starts at the new offset.
func TestReaderStreamSetOffsetMidResponse(t *testing.T) {
	sb := newStreamBroker(t, 40, func(n int, r *fakebroker.Request, offset int64) {
		batches := [][]byte{streamBatch(t, offset, min(offset+10, 40))}
		if offset+10 < 40 {
			batches = append(batches, streamBatch(t, offset+10, 40))
		}
		writeRaw(r, fetchFrameV11(r.ID, 40, batches...)...)
	})
	r := newStreamReader(t, sb, func(c *ReaderConfig) { c.QueueCapacity = 1 })
	if got := fmt.Sprint(readOffsets(t, r, 3, 10*time.Second)); got != offsetRange(0, 3) {
		t.Fatalf("offsets %s", got)
	}
	time.Sleep(20 * time.Millisecond) // the partition reader waits for room
	if err := r.SetOffset(30); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(readOffsets(t, r, 10, 10*time.Second)); got != offsetRange(30, 40) {
		t.Fatalf("offsets after SetOffset(30): %s", got)
	}
}

// Over TLS too, records are delivered as they arrive, and a broker that
// stalls in the middle of a response is given up on after
// ReadBatchTimeout, reading resuming after the last message delivered.
func TestReaderStreamTLS(t *testing.T) {
	serverConf, clientConf := tpSelfSignedTLS(t)
	stall := make(chan struct{})
	defer close(stall)
	sb := newStreamBrokerOn(t, fakebroker.NewTLS(t, 1, serverConf), 20, func(n int, r *fakebroker.Request, offset int64) {
		if n != 0 {
			writeRaw(r, fetchFrameV11(r.ID, 20, streamBatch(t, offset, 20))...)
			return
		}
		b1, b2 := streamBatch(t, 0, 10), streamBatch(t, 10, 20)
		f := fetchFrameV11(r.ID, 20, b1, b2)
		writeRaw(r, f[0], f[1][:len(b1)+5])
		<-stall
	})
	r := newStreamReader(t, sb, func(c *ReaderConfig) {
		c.ReadBatchTimeout = 200 * time.Millisecond
		c.Dialer = &Dialer{Timeout: 5 * time.Second, TLS: clientConf}
	})
	if got := fmt.Sprint(readOffsets(t, r, 20, 10*time.Second)); got != offsetRange(0, 20) {
		t.Fatalf("offsets %s", got)
	}
	if f := sb.fetchOffsets(); len(f) < 2 || f[0] != 0 || f[1] != 10 {
		t.Fatalf("fetch offsets %v, want 0 then 10", f)
	}
}

// A batch compressed with a codec the program cannot decompress (an
// invalid code here) is reported to ReadMessage, as upstream's Reader does,
// instead of being retried in silence.
func TestReaderReportsUnknownCodec(t *testing.T) {
	sb := newStreamBroker(t, 5, func(n int, r *fakebroker.Request, offset int64) {
		b := streamBatch(t, 0, 5)
		binary.BigEndian.PutUint16(b[21:], 7) // attributes: codec 7
		binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
		writeRaw(r, fetchFrameV11(r.ID, 5, b)...)
	})
	r := newStreamReader(t, sb, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := r.ReadMessage(ctx)
	if !errors.Is(err, errUnknownCodec) || !strings.Contains(err.Error(), "unsupported compression codec: 7") {
		t.Fatalf("ReadMessage: %v", err)
	}
}
