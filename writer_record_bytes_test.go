package kafka

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/protocol"
	produceAPI "github.com/segmentio/kafka-go/protocol/produce"
)

// What the broker stores is, record for record, the bytes the program
// wrote: a Writer without Completion reuses the arrays of finished
// batches' records for later batches, so a request still reading an array
// when its batch finishes would put another message's bytes on the wire.
// These tests write many distinct messages (null and empty keys, headers,
// sizes that vary batch to batch, so that reused arrays hold stale bytes
// past their end) through the real Transport to fake brokers that drop
// connections before and after appending, answer late, and move leaders,
// with every codec, and check each stored record byte for byte (and, with
// acknowledgements, the order per partition and that nothing reported
// written is missing).

const (
	bytesTestParts   = 6
	bytesTestCallers = 4
)

// bytesTestMessage is message n of caller g: its value starts with its
// identity, the rest is derived from it, of a size that varies.
func bytesTestMessage(g, n int) Message {
	id := g*1_000_000 + n
	head := fmt.Sprintf("g%d-%06d:", g, n)
	size := (id * 7919) % 3000
	if n%17 == 0 {
		size += 20_000 // a large one now and then: batches of very different sizes
	}
	value := make([]byte, len(head)+size)
	copy(value, head)
	for i := len(head); i < len(value); i++ {
		value[i] = byte(id*31 + i*7)
	}
	m := Message{Value: value}
	switch id % 5 {
	case 0: // null key
	case 1:
		m.Key = []byte{}
	default:
		m.Key = []byte("k" + strconv.Itoa(id))
	}
	if id%3 == 0 {
		m.Headers = []Header{{Key: "h" + strconv.Itoa(id), Value: []byte(head)}, {Key: "e", Value: nil}}
	}
	return m
}

// storedRecord is a record as the fake broker decoded it.
type storedRecord struct {
	key, value []byte // nil when null
	headers    []Header
}

// parseBytesTestID returns the caller and number in a value written by
// bytesTestMessage.
func parseBytesTestID(value []byte) (g, n int, ok bool) {
	i := bytes.IndexByte(value, ':')
	if i < 0 {
		return 0, 0, false
	}
	_, err := fmt.Sscanf(string(value[:i]), "g%d-%d", &g, &n)
	return g, n, err == nil
}

// byteLog is the fake brokers' log of topic "t".
type byteLog struct {
	mu   sync.Mutex
	rng  *rand.Rand
	late int // late answers still to give
	log  map[int32][]storedRecord
}

func decodeStored(t *testing.T, p *produceAPI.RequestPartition) []storedRecord {
	var recs []storedRecord
	for {
		rec, err := p.RecordSet.Records.ReadRecord()
		if err != nil {
			break
		}
		k, _ := protocol.ReadAll(rec.Key)
		v, _ := protocol.ReadAll(rec.Value)
		var hs []Header
		for _, h := range rec.Headers {
			hs = append(hs, Header{Key: h.Key, Value: append([]byte(nil), h.Value...)})
		}
		recs = append(recs, storedRecord{key: k, value: v, headers: hs})
	}
	return recs
}

// serve is the brokers' Produce handler: the leader appends, the others
// refuse, and a request may meet a fault.
func (l *byteLog) serve(t *testing.T, fc *fakebroker.Cluster, r *fakebroker.Request) {
	req, ok := r.Msg.(*produceAPI.Request)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fault := l.rng.Intn(20)
	if fault == 0 {
		r.CloseConn() // lost on the way: nothing appended
		return
	}
	fc.Mu.Lock()
	leaders := map[int32]int32{}
	for p, b := range fc.Leaders {
		leaders[p] = b
	}
	fc.Mu.Unlock()
	codes := map[int32]int16{}
	for _, tp := range req.Topics {
		for i := range tp.Partitions {
			p := &tp.Partitions[i]
			recs := decodeStored(t, p)
			if leaders[p.Partition] != r.Broker {
				codes[p.Partition] = int16(NotLeaderForPartition)
				continue
			}
			l.log[p.Partition] = append(l.log[p.Partition], recs...)
		}
	}
	if fault == 1 {
		// A leader moves: the next requests for it meet a refusal first.
		p := int32(l.rng.Intn(bytesTestParts))
		fc.SetLeader(p, 1+int32(l.rng.Intn(len(fc.Brokers))))
	}
	if req.Acks == 0 {
		return
	}
	switch {
	case fault == 2:
		r.CloseConn() // appended, the answer lost
	case fault == 3 && l.late > 0:
		l.late--
		go func() { // appended, answered after the Writer gave up
			time.Sleep(400 * time.Millisecond)
			answerProduce(r, func(p int32) int16 { return codes[p] })
		}()
	default:
		answerProduce(r, func(p int32) int16 { return codes[p] })
	}
}

func TestWriterRecordBytesOnWireUnderFaults(t *testing.T) {
	codecs := []Compression{0, Gzip, Snappy, Lz4, Zstd}
	for _, codec := range codecs {
		for _, acks := range []RequiredAcks{RequireAll, RequireNone} {
			name := fmt.Sprintf("codec=%d/acks=%d", codec, acks)
			t.Run(name, func(t *testing.T) { writeBytesUnderFaults(t, codec, acks, int64(codec)*10+int64(acks)) })
		}
	}
}

func writeBytesUnderFaults(t *testing.T, codec Compression, acks RequiredAcks, seed int64) {
	fc := fakebroker.New(t, 3)
	for p := int32(0); p < bytesTestParts; p++ {
		fc.SetLeader(p, 1+p%3)
	}
	l := &byteLog{rng: rand.New(rand.NewSource(seed)), late: 3, log: map[int32][]storedRecord{}}
	fc.SetHandler(func(r *fakebroker.Request) { l.serve(t, fc, r) })

	const perCaller = 120
	w := &Writer{
		Addr: fc.Addr(), Topic: "t", Transport: tpNewTransport(t),
		Balancer: BalancerFunc(func(m Message, partitions ...int) int {
			g, n, _ := parseBytesTestID(m.Value)
			return (g + n/3) % len(partitions)
		}),
		Compression:  codec,
		RequiredAcks: acks,
		BatchSize:    7, BatchTimeout: time.Millisecond,
		WriteTimeout: 200 * time.Millisecond, MaxAttempts: 50,
		WriteBackoffMin: time.Millisecond, WriteBackoffMax: 5 * time.Millisecond,
	}
	ok := make([][]bool, bytesTestCallers)
	var wg sync.WaitGroup
	for g := 0; g < bytesTestCallers; g++ {
		ok[g] = make([]bool, perCaller)
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for n := 0; n < perCaller; n += 3 {
				msgs := []Message{bytesTestMessage(g, n), bytesTestMessage(g, n+1), bytesTestMessage(g, n+2)}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				err := w.WriteMessages(ctx, msgs...)
				cancel()
				for i := range msgs {
					ok[g][n+i] = err == nil
				}
			}
		}(g)
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	stored := make([][]bool, bytesTestCallers)
	for g := range stored {
		stored[g] = make([]bool, perCaller)
	}
	for p := int32(0); p < bytesTestParts; p++ {
		last := make([]int, bytesTestCallers) // first occurrences must come in order
		for g := range last {
			last[g] = -1
		}
		for i, rec := range l.log[p] {
			g, n, ok := parseBytesTestID(rec.value)
			if !ok || g >= bytesTestCallers || n >= perCaller {
				t.Fatalf("partition %d record %d: not a message written: %.40q", p, i, rec.value)
			}
			want := bytesTestMessage(g, n)
			checkStoredRecord(t, p, i, rec, want)
			if stored[g][n] {
				continue // a batch sent again after a lost answer
			}
			stored[g][n] = true
			if n < last[g] {
				t.Fatalf("partition %d: g%d-%d stored after g%d-%d", p, g, n, g, last[g])
			}
			last[g] = n
		}
	}
	if acks == RequireNone {
		return // nothing says what reached the broker
	}
	for g := range ok {
		for n, written := range ok[g] {
			if written && !stored[g][n] {
				t.Errorf("g%d-%d reported written, not stored", g, n)
			}
		}
	}
}

func checkStoredRecord(t *testing.T, p int32, i int, rec storedRecord, want Message) {
	t.Helper()
	where := fmt.Sprintf("partition %d record %d (%.12s)", p, i, want.Value)
	if (rec.key == nil) != (want.Key == nil) || !bytes.Equal(rec.key, want.Key) {
		t.Fatalf("%s: key %q, want %q", where, rec.key, want.Key)
	}
	if !bytes.Equal(rec.value, want.Value) {
		t.Fatalf("%s: value of %d bytes differs from the %d written", where, len(rec.value), len(want.Value))
	}
	if len(rec.headers) != len(want.Headers) {
		t.Fatalf("%s: %d headers, want %d", where, len(rec.headers), len(want.Headers))
	}
	for j, h := range rec.headers {
		if h.Key != want.Headers[j].Key || !bytes.Equal(h.Value, want.Headers[j].Value) {
			t.Fatalf("%s: header %d is %q=%q, want %q=%q", where, j, h.Key, h.Value, want.Headers[j].Key, want.Headers[j].Value)
		}
	}
}
