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
