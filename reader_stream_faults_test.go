package kafka

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/internal/fakebroker"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/apiversions"
	"github.com/segmentio/kafka-go/protocol/fetch"
	"github.com/segmentio/kafka-go/protocol/listoffsets"
	"github.com/stretchr/testify/require"
)

// The Reader against damaged and interrupted Fetch responses on its leased
// connection (reader_fetch.go, transport_lease.go): responses cut at every byte, in both the v11 and
// the flexible v12 layout, with other topics and partitions before ours,
// compressed, transactional and control batches, and a partial batch at
// the end.

// cutPartition is one partition of a hand-built Fetch response.
type cutPartition struct {
	id      int32
	hwm     int64
	aborted [][2]int64 // producer ID, first offset
	records []byte
	tagged  bool // v12: send tagged fields after the records
	errCode int16
}

type cutTopic struct {
	name  string
	parts []cutPartition
}

// cutFetchFrame encodes a Fetch response frame (size prefix included) at
// version 11 or 12, by hand, so that tests control every byte.
func cutFetchFrame(version int16, id int32, topics []cutTopic) []byte {
	be := binary.BigEndian
	flex := version >= 12
	var w []byte
	arrayLen := func(n int) {
		if flex {
			w = binary.AppendUvarint(w, uint64(n+1))
		} else {
			w = be.AppendUint32(w, uint32(n))
		}
	}
	str := func(s string) {
		if flex {
			w = binary.AppendUvarint(w, uint64(len(s)+1))
		} else {
			w = be.AppendUint16(w, uint16(len(s)))
		}
		w = append(w, s...)
	}
	noTags := func() {
		if flex {
			w = append(w, 0)
		}
	}
	w = be.AppendUint32(w, 0) // size, set below
	w = be.AppendUint32(w, uint32(id))
	noTags()                  // response header v1
	w = be.AppendUint32(w, 0) // throttle
	w = be.AppendUint16(w, 0) // error
	w = be.AppendUint32(w, 0) // session
	arrayLen(len(topics))
	for _, t := range topics {
		str(t.name)
		arrayLen(len(t.parts))
		for _, p := range t.parts {
			w = be.AppendUint32(w, uint32(p.id))
			w = be.AppendUint16(w, uint16(p.errCode))
			w = be.AppendUint64(w, uint64(p.hwm)) // high watermark
			w = be.AppendUint64(w, uint64(p.hwm)) // last stable offset
			w = be.AppendUint64(w, 0)             // log start offset
			arrayLen(len(p.aborted))
			for _, a := range p.aborted {
				w = be.AppendUint64(w, uint64(a[0]))
				w = be.AppendUint64(w, uint64(a[1]))
				noTags()
			}
			w = be.AppendUint32(w, 0xffffffff) // preferred read replica
			if flex {
				w = binary.AppendUvarint(w, uint64(len(p.records)+1))
			} else {
				w = be.AppendUint32(w, uint32(len(p.records)))
			}
			w = append(w, p.records...)
			switch {
			case flex && p.tagged:
				w = append(w, 2)                      // two tagged fields
				w = append(w, 1, 9)                   // current leader, 9 bytes
				w = be.AppendUint32(w, 1)             // leader id
				w = be.AppendUint32(w, 3)             // leader epoch
				w = append(w, 0)                      // its tagged fields
				w = append(w, 9, 3, 0xaa, 0xbb, 0xcc) // an unknown tag
			default:
				noTags()
			}
		}
		noTags()
	}
	noTags()
	be.PutUint32(w, uint32(len(w)-4))
	return w
}

// cutBatches encodes batches as the records of a partition, each at the
// base offset it names (the encoder numbers records from 0).
func cutBatches(t *testing.T, batches ...protocol.RecordReader) []byte {
	t.Helper()
	var all []byte
	for _, b := range batches {
		rs := protocol.RecordSet{Version: 2, Records: b}
		var base, pid int64
		switch b := b.(type) {
		case *protocol.RecordBatch:
			base, pid = b.BaseOffset, b.ProducerID
			rs.Attributes = b.Attributes // the encoder compresses by these
		case *protocol.ControlBatch:
			base, pid = b.BaseOffset, b.ProducerID
			rs.Attributes = b.Attributes
		}
		var buf bytes.Buffer
		_, err := rs.WriteTo(&buf)
		require.NoError(t, err)
		enc := buf.Bytes()
		binary.BigEndian.PutUint64(enc, uint64(base)) // outside the CRC
		if pid != 0 {
			// The encoder writes no producer: set it, and the CRC again.
			binary.BigEndian.PutUint64(enc[43:], uint64(pid))
			binary.BigEndian.PutUint32(enc[17:], crc32.Checksum(enc[21:], crc32.MakeTable(crc32.Castagnoli)))
		}
		all = append(all, enc...)
	}
	return all
}

// cutScenario is the partition 0 of "t" the tests fetch: offsets 0-1
// plain, 2-3 gzip, 4-5 an aborted transaction of producer 7, 6 its abort
// marker, 7-8 plain, then 9-10 plain, which the first responses (those of
// fetches before 9) end with cut short, as a broker cuts at MaxBytes.
type cutScenario struct {
	head []byte // offsets 0 to 8, whole
	tail []byte // offsets 9 and 10
}

const cutEnd = 11

func newCutScenario(t *testing.T) cutScenario {
	gz := stubBatch(0, false, 2, 4)
	gz.Attributes = protocol.Gzip
	head := cutBatches(t,
		stubBatch(0, false, 0, 2),
		gz,
		stubBatch(7, true, 4, 6),
		stubMarker(7, 6, false),
		stubBatch(0, false, 7, 9),
	)
	tail := cutBatches(t, stubBatch(0, false, 9, 11))
	// The encoding is what the test means it to be.
	var rs protocol.RecordSet
	_, err := rs.ReadFrom(bytes.NewReader(append(append([]byte{}, head...), tail...)))
	require.NoError(t, err)
	var offsets []int64
	var compressed, control bool
	for _, b := range rs.Records.(*protocol.RecordStream).Records {
		if rb, ok := b.(*protocol.RecordBatch); ok && rb.Attributes.Compression() != 0 {
			compressed = true
		}
		if rb, ok := b.(*protocol.RecordBatch); ok && rb.BaseOffset == 4 {
			require.True(t, rb.Attributes.Transactional())
			require.Equal(t, int64(7), rb.ProducerID)
		}
		if cb, ok := b.(*protocol.ControlBatch); ok && cb.Attributes.Control() {
			control = true
		}
		for {
			rec, err := b.ReadRecord()
			if err != nil {
				break
			}
			offsets = append(offsets, rec.Offset)
		}
	}
	require.Equal(t, "[0 1 2 3 4 5 6 7 8 9 10]", fmt.Sprint(offsets))
	require.True(t, compressed, "the gzip batch was not compressed")
	require.True(t, control, "the marker is not a control batch")
	return cutScenario{head: head, tail: tail}
}

// frame is the response to a fetch at offset: other partitions first
// (another topic, then partition 1 of "t"), ours last; before offset 9 it
// ends with the first half of the batch of 9-10.
func (s cutScenario) frame(t *testing.T, version int16, id int32, offset int64) []byte {
	return s.frameErr(t, version, id, offset, 0)
}

// frameErr is frame with an error code for our partition (its records
// are there all the same).
func (s cutScenario) frameErr(t *testing.T, version int16, id int32, offset int64, errCode int16) []byte {
	var ours []byte
	switch {
	case offset >= cutEnd:
	case offset >= 9:
		ours = s.tail
	default:
		ours = append(append([]byte{}, s.head...), s.tail[:len(s.tail)/2]...)
	}
	other := cutBatches(t, stubBatch(0, false, 100, 102))
	return cutFetchFrame(version, id, []cutTopic{
		{name: "a", parts: []cutPartition{{id: 0, hwm: 102, records: other, tagged: true}}},
		{name: "t", parts: []cutPartition{
			{id: 1, hwm: 102, records: other},
			{id: 0, hwm: cutEnd, aborted: [][2]int64{{7, 4}}, records: ours, tagged: true, errCode: errCode},
		}},
	})
}

// cutBroker answers the fetches of partition 0 of "t" with the frames of
// scenario; the first fetch after cut was set is cut after that many bytes
// and its connection closed.
type cutBroker struct {
	fc *fakebroker.Cluster

	mu       sync.Mutex
	cut      int   // -1: none pending
	flip     int   // byte of the next response to corrupt; -1: none
	errCode  int16 // of our partition in the next response
	versions map[int16]bool
	fetches  []int64
}

func newCutBroker(t *testing.T, version int16, s cutScenario) *cutBroker {
	cb := &cutBroker{fc: fakebroker.New(t, 1), cut: -1, flip: -1, versions: map[int16]bool{}}
	b := cb.fc.Brokers[0]
	b.Mu.Lock()
	b.ApiKeys = append([]apiversions.ApiKeyResponse(nil), b.ApiKeys...)
	for i, k := range b.ApiKeys {
		if protocol.ApiKey(k.ApiKey) == protocol.Fetch {
			b.ApiKeys[i].MaxVersion = version
		}
	}
	b.Mu.Unlock()
	cb.fc.SetHandler(func(r *fakebroker.Request) {
		switch m := r.Msg.(type) {
		case *listoffsets.Request:
			p := m.Topics[0].Partitions[0]
			offset := int64(cutEnd)
			if p.Timestamp == FirstOffset {
				offset = 0
			}
			r.Reply(&listoffsets.Response{Topics: []listoffsets.ResponseTopic{{
				Topic: "t", Partitions: []listoffsets.ResponsePartition{{Partition: p.Partition, Offset: offset}},
			}}})
		case *fetch.Request:
			offset := m.Topics[0].Partitions[0].FetchOffset
			cb.mu.Lock()
			f := s.frameErr(t, r.Version, r.ID, offset, cb.errCode)
			cb.errCode = 0
			cb.versions[r.Version] = true
			cb.fetches = append(cb.fetches, offset)
			cut, flip := cb.cut, cb.flip
			cb.cut, cb.flip = -1, -1
			cb.mu.Unlock()
			if flip >= 0 && flip < len(f) {
				f[flip] ^= 0xff
			}
			go func() {
				if offset >= cutEnd {
					time.Sleep(5 * time.Millisecond) // a broker holds it for MaxWait
				}
				if cut < 0 {
					writeRaw(r, f)
					return
				}
				writeRaw(r, f[:min(cut, len(f))])
				r.CloseConn()
			}()
		}
	})
	return cb
}

func (cb *cutBroker) setCut(n int) {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	cb.cut = n
	cb.fetches = nil
}

// readCut reads n messages and returns their offsets, checking their keys
// and values.
func readCut(t *testing.T, r *Reader, n int) []int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var offsets []int64
	for i := 0; i < n; i++ {
		m, err := r.ReadMessage(ctx)
		require.NoError(t, err, "after offsets %v", offsets)
		require.Equal(t, fmt.Sprintf("k%d", m.Offset), string(m.Key))
		require.Equal(t, fmt.Sprintf("v%d", m.Offset), string(m.Value))
		offsets = append(offsets, m.Offset)
	}
	return offsets
}

// Wherever the connection breaks in a response (header, other partitions,
// the length of our records, a batch header, a record's length, the middle
// of a record, between batches, the compressed batch, the control batch,
// the partial batch, the v12 tagged fields after the records, the end),
// the Reader delivers every committed message once, in order, and nothing
// of the aborted transaction.
func TestReaderStreamCutAtEveryByte(t *testing.T) {
	s := newCutScenario(t)
	for _, version := range []int16{11, 12} {
		for _, iso := range []IsolationLevel{ReadCommitted, ReadUncommitted} {
			t.Run(fmt.Sprintf("v%d/isolation=%d", version, iso), func(t *testing.T) {
				want := []int64{0, 1, 2, 3, 7, 8, 9, 10}
				if iso == ReadUncommitted {
					want = []int64{0, 1, 2, 3, 4, 5, 7, 8, 9, 10}
				}
				n := len(s.frame(t, version, 0, 0))
				cb := newCutBroker(t, version, s)
				step := 1
				if iso == ReadUncommitted || testing.Short() {
					step = 7 // the other isolation level already went through every byte
				}
				for cut := 0; cut <= n; cut += step {
					cb.setCut(cut)
					r := NewReader(ReaderConfig{
						Brokers:        []string{cb.fc.Addr().String()},
						Topic:          "t",
						MaxWait:        50 * time.Millisecond,
						ReadBackoffMin: time.Millisecond,
						ReadBackoffMax: 2 * time.Millisecond,
						IsolationLevel: iso,
					})
					got := readCut(t, r, len(want))
					require.NoError(t, r.Close())
					require.Equal(t, want, got, "cut after %d of %d bytes", cut, n)
				}
				cb.mu.Lock()
				defer cb.mu.Unlock()
				require.Equal(t, map[int16]bool{version: true}, cb.versions)
			})
		}
	}
}

// SetOffset, again and again, while a response is being read: no message of the old
// response reaches the program after SetOffset returned, and reading
// goes on from the new offset, in order, whether it is before or after
// the old position.
func TestReaderStreamSetOffsetRepeatedlyMidResponse(t *testing.T) {
	const end = 200
	sb := newStreamBroker(t, end, func(n int, r *fakebroker.Request, offset int64) {
		var batches [][]byte
		for o := offset; o < end; o += 5 {
			batches = append(batches, streamBatch(t, o, min(o+5, end)))
		}
		f := fetchFrameV11(r.ID, end, batches...)
		// The records in small pieces, so that the Reader is in the
		// middle of the response most of the time.
		pieces := [][]byte{f[0]}
		for rec := f[1]; len(rec) > 0; rec = rec[min(len(rec), 97):] {
			pieces = append(pieces, rec[:min(len(rec), 97)])
		}
		writeRaw(r, pieces...)
	})
	r := newStreamReader(t, sb, func(c *ReaderConfig) { c.QueueCapacity = 1 })
	targets := []int64{150, 3, 77, 0, 180, 12, 52}
	pos := int64(0)
	for i, target := range targets {
		k := 1 + i*3 // messages read before SetOffset
		got := readCut(t, r, k)
		require.Equal(t, pos, got[0], "after SetOffset(%d)", pos)
		for j := 1; j < len(got); j++ {
			require.Equal(t, got[j-1]+1, got[j], "offsets %v", got)
		}
		require.NoError(t, r.SetOffset(target))
		pos = target
	}
	got := readCut(t, r, 5)
	require.Equal(t, offsetsFrom(pos, 5), got)
}

func offsetsFrom(from int64, n int) []int64 {
	var o []int64
	for i := 0; i < n; i++ {
		o = append(o, from+int64(i))
	}
	return o
}

// A response corrupted at any byte (the next ones are sound) never makes
// the Reader panic or hang, nor deliver an offset twice or out of order;
// the connection is dropped or stays in step with the frames (a Reader
// that reads on gets sound messages after the corrupt ones).
func TestReaderStreamCorruptAtEveryByte(t *testing.T) {
	s := newCutScenario(t)
	const version = 12
	n := len(s.frame(t, version, 0, 0))
	cb := newCutBroker(t, version, s)
	step := 1
	if testing.Short() {
		step = 5
	}
	for at := 0; at < n; at += step {
		cb.mu.Lock()
		cb.flip = at
		cb.mu.Unlock()
		r := NewReader(ReaderConfig{
			Brokers:        []string{cb.fc.Addr().String()},
			Topic:          "t",
			MaxWait:        20 * time.Millisecond,
			ReadBackoffMin: time.Millisecond,
			ReadBackoffMax: 2 * time.Millisecond,
			IsolationLevel: ReadCommitted,
		})
		var offsets []int64
		for {
			// A corrupt offset may send the Reader past the end, where
			// nothing more comes: that is no failure, a hang would be
			// one of Close.
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			m, err := r.ReadMessage(ctx)
			cancel()
			if err != nil {
				break
			}
			if len(offsets) > 0 {
				require.Greater(t, m.Offset, offsets[len(offsets)-1], "byte %d corrupt: offsets %v", at, offsets)
			}
			offsets = append(offsets, m.Offset)
			if m.Offset >= cutEnd-1 {
				break
			}
		}
		require.NoError(t, r.Close())
	}
}

// Responses that arrive around the moment the fetch's own deadline
// (MaxWait + ReadBatchTimeout) ends: the wait for the response is
// abandoned just as, or just after, the connection's read loop handed it
// over. Every message is delivered once, in order, and the read loops
// of the abandoned connections end (no response body is left unreleased).
func TestReaderStreamResponseAtFetchDeadline(t *testing.T) {
	const end = 150
	sb := newStreamBroker(t, end, func(n int, r *fakebroker.Request, offset int64) {
		// Around the fetch's deadline of 4+4 ms, give or take 3 ms.
		time.Sleep(time.Duration(7600+(n*37)%800) * time.Microsecond)
		writeRaw(r, fetchFrameV11(r.ID, end, streamBatch(t, offset, min(offset+3, end)), streamBatch(t, min(offset+3, end), min(offset+6, end)))...)
	})
	before := runtime.NumGoroutine()
	r := NewReader(ReaderConfig{
		Brokers:          []string{sb.fc.Addr().String()},
		Topic:            "t",
		MaxWait:          4 * time.Millisecond,
		ReadBatchTimeout: 4 * time.Millisecond,
		ReadBackoffMin:   time.Millisecond,
		ReadBackoffMax:   2 * time.Millisecond,
		ErrorLogger:      LoggerFunc(func(f string, a ...interface{}) { println(fmt.Sprintf(f, a...)) }),
	})
	require.Equal(t, offsetsFrom(0, end), readCut(t, r, end))
	require.NoError(t, r.Close())
	t.Logf("%d fetches for %d messages", len(sb.fetchOffsets()), end)
	sb.fc.Close() // the broker's side of the connections, which it holds
	tpWaitFor(t, "the Reader's goroutines to exit", func() bool {
		return runtime.NumGoroutine() <= before
	})
}

// A partition that comes with an error code is not read, even when the
// broker sent records with it: the error is reported (logged), and the
// Reader fetches the same offset again (nothing delivered twice or
// skipped).
func TestReaderStreamPartitionErrorWithRecords(t *testing.T) {
	s := newCutScenario(t)
	for _, version := range []int16{11, 12} {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
			cb := newCutBroker(t, version, s)
			cb.mu.Lock()
			cb.errCode = int16(NotLeaderForPartition)
			cb.mu.Unlock()
			var mu sync.Mutex
			var logs []string
			r := NewReader(ReaderConfig{
				Brokers:        []string{cb.fc.Addr().String()},
				Topic:          "t",
				MaxWait:        20 * time.Millisecond,
				ReadBackoffMin: time.Millisecond,
				ReadBackoffMax: 2 * time.Millisecond,
				IsolationLevel: ReadCommitted,
				ErrorLogger: LoggerFunc(func(f string, a ...interface{}) {
					mu.Lock()
					defer mu.Unlock()
					logs = append(logs, fmt.Sprintf(f, a...))
				}),
			})
			defer r.Close()
			require.Equal(t, []int64{0, 1, 2, 3, 7, 8, 9, 10}, readCut(t, r, 8))
			cb.mu.Lock()
			fetches := append([]int64(nil), cb.fetches...)
			cb.mu.Unlock()
			require.GreaterOrEqual(t, len(fetches), 2)
			require.Equal(t, []int64{0, 0}, fetches[:2], "the records of the errored response were used")
			mu.Lock()
			defer mu.Unlock()
			require.NotEmpty(t, logs)
			require.Contains(t, fmt.Sprint(logs), NotLeaderForPartition.Error())
		})
	}
}
