package kafka

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestWriterCompletionMessagesDoNotShareRoom: Completion's keys and values
// are rebuilt from the batch's records; a Completion that appends to one
// of them (as to any slice it was given) must not overwrite the message's
// other fields or the next messages.
func TestWriterCompletionMessagesDoNotShareRoom(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 1})
	var mu sync.Mutex
	var keys, values []string
	completion := func(msgs []Message, err error) {
		if err != nil {
			t.Error(err)
		}
		for i := range msgs {
			msgs[i].Key = append(msgs[i].Key, "-appended-by-completion"...)
			msgs[i].Value = append(msgs[i].Value, "-appended-too"...)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			keys = append(keys, string(m.Key))
			values = append(values, string(m.Value))
		}
	}
	w := &Writer{Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 100, BatchTimeout: time.Hour,
		Async: true, RequiredAcks: RequireOne, MaxBufferedBatches: 2, Completion: completion}
	defer shutdown(w, stub)
	ctx := testContext(t)
	var in []Message
	for i := 0; i < 10; i++ {
		in = append(in, Message{Key: []byte(fmt.Sprint("k", i)), Value: []byte(fmt.Sprint("v", i))})
	}
	if err := w.WriteMessages(ctx, in...); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != len(in) {
		t.Fatalf("Completion got %d messages, want %d", len(keys), len(in))
	}
	for i := range in {
		if wk, wv := fmt.Sprint("k", i, "-appended-by-completion"), fmt.Sprint("v", i, "-appended-too"); keys[i] != wk || values[i] != wv {
			t.Errorf("message %d after the Completion's appends: %q=%q, want %q=%q", i, keys[i], values[i], wk, wv)
		}
	}
}

// TestWriterCompletionMessagesOutliveTheCall: messages a Completion keeps
// after it returns stay as they were written while the Writer goes on
// with many more batches (nothing reuses the records they point into), and
// a Completion that writes them again gets them delivered once more.
func TestWriterCompletionMessagesOutliveTheCall(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 1})
	var mu sync.Mutex
	var kept []Message
	var w *Writer
	completion := func(msgs []Message, err error) {
		if err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		kept = append(kept, msgs...)
		mu.Unlock()
		var again []Message
		for _, m := range msgs {
			if bytes.HasPrefix(m.Value, []byte("first-")) {
				again = append(again, Message{Key: m.Key, Value: append([]byte("again-"), m.Value...), Headers: m.Headers})
			}
		}
		if len(again) > 0 {
			if err := w.WriteMessages(testContext(t), again...); err != nil {
				t.Error(err)
			}
		}
	}
	w = &Writer{Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 7, BatchTimeout: time.Millisecond,
		Async: true, RequiredAcks: RequireOne, MaxBufferedBatches: 2, Completion: completion}
	defer shutdown(w, stub)
	ctx := testContext(t)
	const n = 500
	buf := make([]byte, 64)
	for i := 0; i < n; i++ {
		v := fmt.Appendf(buf[:0], "first-%d", i)
		if err := w.WriteMessages(ctx, Message{Key: []byte(fmt.Sprint(i)), Value: v,
			Headers: []Header{{Key: "i", Value: []byte(fmt.Sprint(i))}}}); err != nil {
			t.Fatal(err)
		}
		for j := range buf {
			buf[j] = '#' // the caller reuses its buffer at once
		}
	}
	// Flush until the re-writes made by Completion calls are done too.
	for {
		if err := w.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		done := len(kept) == 2*n
		mu.Unlock()
		if done {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("%d of %d messages completed", len(kept), 2*n)
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	seen := map[string]int{}
	for i, m := range kept {
		k := string(m.Key)
		if string(m.Value) != "first-"+k && string(m.Value) != "again-first-"+k {
			t.Fatalf("kept message %d: %q=%q: its bytes changed after its Completion returned", i, m.Key, m.Value)
		}
		if len(m.Headers) != 1 || string(m.Headers[0].Value) != k {
			t.Fatalf("kept message %d: headers %v", i, m.Headers)
		}
		seen[string(m.Value)]++
	}
	if len(seen) != 2*n {
		t.Fatalf("%d distinct messages completed, want %d", len(seen), 2*n)
	}
	recs := stub.records(topicPartition{"t", 0})
	if len(recs) != 2*n {
		t.Fatalf("the broker got %d records, want %d", len(recs), 2*n)
	}
}

// TestWriterCompletionMessagesOfAwkwardRecords: Completion's keys and
// values are cut out of the records by a parse that skips what it does not
// need, so records whose fields need long varints must still give back
// exactly what was written: keys and values null, empty or hundreds of KB,
// times before and after the batch's first (negative deltas, years
// apart), more than 64 records (two-byte offset deltas), and many headers
// with null values. Each key and value is capped: appending to it cannot
// reach the next record.
func TestWriterCompletionMessagesOfAwkwardRecords(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 1})
	var got completionLog
	w := &Writer{Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 1000, BatchBytes: 16 << 20,
		BatchTimeout: time.Hour, Async: true, RequiredAcks: RequireOne, Completion: got.record}
	defer shutdown(w, stub)
	base := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	blob := func(n, seed int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(seed*131 + i*17)
		}
		return b
	}
	var in []Message
	for i := 0; i < 150; i++ {
		m := Message{}
		switch i % 6 {
		case 0: // both null
		case 1:
			m.Key, m.Value = []byte{}, []byte{}
		case 2:
			m.Key, m.Value = blob(70_000+i, i), nil
		case 3:
			m.Key, m.Value = nil, blob(200_000+i, i)
		default:
			m.Key, m.Value = blob(i%130, i), blob(i*37%300, i+1)
		}
		switch i % 4 {
		case 1:
			m.Time = base.Add(-time.Duration(i) * 24 * time.Hour * 30) // before the first
		case 2:
			m.Time = base.Add(time.Duration(i) * 24 * time.Hour * 30)
		case 3:
			m.Time = base.Add(time.Duration(i) * time.Millisecond)
		}
		if i%5 == 0 {
			for h := 0; h < i%23; h++ {
				var v []byte
				if h%2 == 0 {
					v = blob(h*50, h)
				}
				m.Headers = append(m.Headers, Header{Key: fmt.Sprint("h", h), Value: v})
			}
		}
		in = append(in, m)
	}
	ctx := testContext(t)
	if err := w.WriteMessages(ctx, in...); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got.mu.Lock()
	defer got.mu.Unlock()
	if len(got.msgs) != len(in) {
		t.Fatalf("Completion got %d messages, want %d", len(got.msgs), len(in))
	}
	for i, m := range got.msgs {
		want := in[i]
		if got.errs[i] != nil {
			t.Fatalf("message %d: %v", i, got.errs[i])
		}
		if (m.Key == nil) != (want.Key == nil) || !bytes.Equal(m.Key, want.Key) {
			t.Fatalf("message %d: key of %d bytes (nil %v), want %d (nil %v)", i, len(m.Key), m.Key == nil, len(want.Key), want.Key == nil)
		}
		if (m.Value == nil) != (want.Value == nil) || !bytes.Equal(m.Value, want.Value) {
			t.Fatalf("message %d: value of %d bytes (nil %v), want %d (nil %v)", i, len(m.Value), m.Value == nil, len(want.Value), want.Value == nil)
		}
		if cap(m.Key) != len(m.Key) || cap(m.Value) != len(m.Value) {
			t.Fatalf("message %d: key or value not capped (%d/%d, %d/%d)", i, len(m.Key), cap(m.Key), len(m.Value), cap(m.Value))
		}
		if !m.Time.Equal(want.Time) {
			t.Fatalf("message %d: time %v, want %v", i, m.Time, want.Time)
		}
		if len(m.Headers) != len(want.Headers) {
			t.Fatalf("message %d: %d headers, want %d", i, len(m.Headers), len(want.Headers))
		}
		if m.Offset != int64(i) {
			t.Fatalf("message %d: offset %d", i, m.Offset)
		}
	}
	// And what went on the wire is the same.
	recs := stub.records(topicPartition{"t", 0})
	if len(recs) != len(in) {
		t.Fatalf("the broker got %d records, want %d", len(recs), len(in))
	}
	for i, r := range recs {
		if r.key != string(in[i].Key) || r.value != string(in[i].Value) {
			t.Fatalf("record %d on the wire differs from the message written", i)
		}
	}
}
