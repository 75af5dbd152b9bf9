package reader

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	kafka "github.com/segmentio/kafka-go"
)

// legacyMessage encodes one message of the legacy formats (magic 0 or 1)
// with its offset and size prefix.
func legacyMessage(magic int8, attrs int8, offset int64, key, value []byte) []byte {
	var body []byte
	body = append(body, byte(magic), byte(attrs))
	if magic == 1 {
		body = binary.BigEndian.AppendUint64(body, uint64(time.Now().UnixMilli()))
	}
	appendBytes := func(b []byte) {
		if b == nil {
			body = binary.BigEndian.AppendUint32(body, 0xffffffff)
			return
		}
		body = binary.BigEndian.AppendUint32(body, uint32(len(b)))
		body = append(body, b...)
	}
	appendBytes(key)
	appendBytes(value)
	var out []byte
	out = binary.BigEndian.AppendUint64(out, uint64(offset))
	out = binary.BigEndian.AppendUint32(out, uint32(4+len(body)))
	out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(body))
	return append(out, body...)
}

// legacySet encodes messages from..to-1 of the test records (key
// "p0-<i>", value "v<i>"), plainly or as one gzip wrapper message.
func legacySet(magic int8, compressed bool, from, to int64) []byte {
	var set []byte
	for i := from; i < to; i++ {
		offset := i
		if compressed && magic == 1 {
			offset = i - from // inner offsets are relative in magic 1
		}
		set = append(set, legacyMessage(magic, 0, offset, []byte(fmt.Sprintf("p0-%d", i)), []byte(fmt.Sprintf("v%d", i)))...)
	}
	if !compressed {
		return set
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(set)
	zw.Close()
	return legacyMessage(magic, 1, to-1, nil, buf.Bytes())
}

// Fetch responses in the legacy message formats (magic 0 and 1, plain and
// gzip-compressed) are read like record batches, from the right offset.
// The broker stores v2 batches; its Fetch answers are replaced with the
// same messages in the old formats.
func TestPartitionReaderLegacyMessageSets(t *testing.T) {
	const n = 30
	for _, tc := range []struct {
		name       string
		magic      int8
		compressed bool
	}{
		{"magic0", 0, false},
		{"magic0-gzip", 0, true},
		{"magic1", 1, false},
		{"magic1-gzip", 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const topic = "legacy"
			addrs, c := startCluster(t, topic, 1)
			produce(t, newProducer(t, addrs), topic, 1, n)
			c.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
				c.KeepControl()
				fr := req.(*kmsg.FetchRequest)
				res := fr.ResponseKind().(*kmsg.FetchResponse)
				for _, rt := range fr.Topics {
					st := kmsg.NewFetchResponseTopic()
					st.Topic = rt.Topic
					for _, rp := range rt.Partitions {
						sp := kmsg.NewFetchResponseTopicPartition()
						sp.Partition = rp.Partition
						sp.HighWatermark = n
						sp.LastStableOffset = n
						if rp.FetchOffset < n {
							// Serve in chunks of up to 7 messages, starting
							// a little before the fetch offset when
							// compressed, as brokers do.
							from := rp.FetchOffset
							if tc.compressed && from > 0 {
								from--
							}
							sp.RecordBatches = legacySet(tc.magic, tc.compressed, from, min(from+7, n))
						}
						st.Partitions = append(st.Partitions, sp)
					}
					res.Topics = append(res.Topics, st)
				}
				return res, nil, true
			})

			r := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: topic, MaxWait: 100 * time.Millisecond})
			defer r.Close()
			ctx := ctxTimeout(t, 30*time.Second)
			if err := r.SetOffset(3); err != nil {
				t.Fatal(err)
			}
			for i := 3; i < n; i++ {
				m, err := r.FetchMessage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if m.Offset != int64(i) || string(m.Key) != fmt.Sprintf("p0-%d", i) || string(m.Value) != fmt.Sprintf("v%d", i) {
					t.Fatalf("got %d %q %q, want %d", m.Offset, m.Key, m.Value, i)
				}
				if tc.magic == 1 && m.Time.IsZero() {
					t.Fatal("magic 1 message without timestamp")
				}
			}
		})
	}
}
