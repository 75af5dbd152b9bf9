package rdmock_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/itest/rdmock"
)

// readN reads n messages with r, failing the test on error.
func readN(t *testing.T, ctx context.Context, r *kafka.Reader, n int) []kafka.Message {
	t.Helper()
	msgs := make([]kafka.Message, 0, n)
	for len(msgs) < n {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("ReadMessage after %d of %d: %v", len(msgs), n, err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// kcatPairs makes n key=value pairs for kcat, keys "k-0-SEQ".
func kcatPairs(tag string, from, n int) ([][2]string, []rdmock.Record) {
	pairs := make([][2]string, n)
	recs := make([]rdmock.Record, n)
	for i := range pairs {
		seq := from + i
		pairs[i] = [2]string{fmt.Sprintf("k-0-%d", seq), fmt.Sprintf("%s-value-%d", tag, seq)}
		recs[i] = rdmock.Record{Partition: 0, Offset: int64(seq), Key: []byte(pairs[i][0]), Value: []byte(pairs[i][1])}
	}
	return pairs, recs
}

// kcat (librdkafka) writes compressed batches of many records each; a
// partition Reader reads them all back, and a Reader whose offset is set to
// the middle of a batch starts exactly there, skipping the batch's earlier
// records.
func TestReaderSetOffsetIntoCompressedBatch(t *testing.T) {
	const n, from = 60, 23
	c := rdmock.Start(t, 3)
	for _, codec := range []string{"gzip", "snappy", "lz4", "zstd"} {
		t.Run(codec, func(t *testing.T) {
			topic := topicName(t)
			c.CreateTopic(topic, 1)
			headers := []rdmock.Header{{Key: "codec", Value: []byte(codec)}, {Key: "h2", Value: []byte("v2")}}
			pairs, want := kcatPairs(codec, 0, n)
			for i := range want {
				want[i].Headers = headers
			}
			// One kcat run with a long linger: its records leave in one
			// compressed batch (checked by hand with a raw Fetch at
			// offset 23: the mock answers with the whole batch, base
			// offset 0, 60 records), so a fetch from the middle gets
			// records before the asked offset, which the Reader drops.
			rdmock.KcatProduce(t, c.Bootstrap(), topic, 0, pairs, headers, codec)

			ctx := ctxFor(t, 60*time.Second)
			cfg := kafka.ReaderConfig{Brokers: c.Addrs, Topic: topic, Partition: 0, MaxWait: 100 * time.Millisecond}
			r := kafka.NewReader(cfg)
			defer r.Close()
			rdmock.SameRecords(t, "kafka-go Reader from 0", fromReader(readN(t, ctx, r, n)), want, true)

			r2 := kafka.NewReader(cfg)
			defer r2.Close()
			if err := r2.SetOffset(from); err != nil {
				t.Fatal(err)
			}
			rdmock.SameRecords(t, fmt.Sprintf("kafka-go Reader from %d", from), fromReader(readN(t, ctx, r2, n-from)), want[from:], true)
			if got := r2.Offset(); got != n {
				t.Errorf("Offset after the last record: %d, want %d", got, n)
			}

			// Back into the batch, on the same Reader.
			if err := r2.SetOffset(from + 10); err != nil {
				t.Fatal(err)
			}
			rdmock.SameRecords(t, "kafka-go Reader after SetOffset again", fromReader(readN(t, ctx, r2, n-from-10)), want[from+10:], true)
		})
	}
}

// A partition Reader at the end of the log: ReadLag and Lag say how far
// behind it is, a read at the end waits (and returns nothing) until
// kafka-python writes more, and then returns exactly the new records.
func TestReaderEndOfLogAndLag(t *testing.T) {
	const n, more = 30, 5
	c := rdmock.Start(t, 3)
	topic := topicName(t)
	c.CreateTopic(topic, 1)
	recs := make([]rdmock.Record, n+more)
	for i := range recs {
		recs[i] = rdmock.Record{
			Key:     []byte("k-0-" + strconv.Itoa(i)),
			Value:   []byte{byte(i), 0, 0xff, 'v'}, // any bytes: kafka-python carries them in base64
			Headers: []rdmock.Header{{Key: "i", Value: []byte(strconv.Itoa(i))}, {Key: "bin", Value: []byte{0, byte(i)}}},
		}
	}
	written := rdmock.PythonProduce(t, c.Bootstrap(), topic, recs[:n])

	ctx := ctxFor(t, 60*time.Second)
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: c.Addrs, Topic: topic, Partition: 0, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	lag, err := r.ReadLag(ctx)
	if err != nil || lag != n {
		t.Fatalf("ReadLag before reading: %d, %v; want %d", lag, err, n)
	}
	first := readN(t, ctx, r, 10)
	if lag, err := r.ReadLag(ctx); err != nil || lag != n-10 {
		t.Errorf("ReadLag after 10: %d, %v; want %d", lag, err, n-10)
	}
	if got := r.Lag(); got != n-10 {
		t.Errorf("Lag after 10: %d, want %d", got, n-10)
	}
	rest := readN(t, ctx, r, n-10)
	rdmock.SameRecords(t, "kafka-go Reader", fromReader(append(first, rest...)), written, true)
	if lag, err := r.ReadLag(ctx); err != nil || lag != 0 {
		t.Errorf("ReadLag at the end: %d, %v; want 0", lag, err)
	}
	if got := r.Lag(); got != 0 {
		t.Errorf("Lag at the end: %d, want 0", got)
	}

	// At the end of the log a read waits.
	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	m, err := r.ReadMessage(short)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("read at the end of the log: %v, %v; want a deadline error", m, err)
	}

	// New records arrive; the waiting Reader gets exactly those.
	type result struct {
		msgs []kafka.Message
		err  error
	}
	read := make(chan result, 1)
	go func() {
		var res result
		for len(res.msgs) < more && res.err == nil {
			var m kafka.Message
			if m, res.err = r.ReadMessage(ctx); res.err == nil {
				res.msgs = append(res.msgs, m)
			}
		}
		read <- res
	}()
	added := rdmock.PythonProduce(t, c.Bootstrap(), topic, recs[n:])
	res := <-read
	if res.err != nil {
		t.Fatalf("reading the new records: %v", res.err)
	}
	rdmock.SameRecords(t, "kafka-go Reader, new records", fromReader(res.msgs), added, true)
	if got := r.Offset(); got != n+more {
		t.Errorf("Offset: %d, want %d", got, n+more)
	}
}

// A partition Reader follows its partition's leader: records written by
// kafka-python before and after the leader moves to another broker (and
// the old leader goes down) are all read, once, in order.
func TestReaderFollowsLeaderMove(t *testing.T) {
	const n = 40
	c := rdmock.Start(t, 3)
	topic := topicName(t)
	c.CreateTopic(topic, 1)
	c.SetLeader(topic, 0, 2)
	recs := make([]rdmock.Record, n)
	for i := range recs {
		recs[i] = rdmock.Record{Key: []byte("k-0-" + strconv.Itoa(i)), Value: []byte("moving-" + strconv.Itoa(i)),
			Headers: []rdmock.Header{{Key: "i", Value: []byte(strconv.Itoa(i))}}}
	}
	written := rdmock.PythonProduce(t, c.Bootstrap(), topic, recs[:n/2])

	ctx := ctxFor(t, 60*time.Second)
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: c.Addrs[:1], Topic: topic, Partition: 0, MaxWait: 100 * time.Millisecond,
		ReadBackoffMin: 10 * time.Millisecond, ReadBackoffMax: 100 * time.Millisecond})
	defer r.Close()
	got := readN(t, ctx, r, n/2)

	c.SetLeader(topic, 0, 3)
	c.Down(2)
	written = append(written, rdmock.PythonProduce(t, c.Bootstrap(), topic, recs[n/2:])...)
	got = append(got, readN(t, ctx, r, n/2)...)
	rdmock.SameRecords(t, "kafka-go Reader across the move", fromReader(got), written, true)
}
