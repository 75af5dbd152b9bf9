package kafka

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// completionLog collects what Completion receives.
type completionLog struct {
	mu   sync.Mutex
	msgs []Message
	errs []error
}

func (c *completionLog) record(msgs []Message, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range msgs {
		c.msgs = append(c.msgs, m)
		c.errs = append(c.errs, err)
	}
}

// TestWriterCompletionGetsMessagesAsWritten: a batch keeps only encoded
// records, so what Completion receives is rebuilt; it must be what the
// program wrote (null and empty keys and values apart, headers, WriterData,
// times to the nanosecond), plus the broker's placement, in order.
func TestWriterCompletionGetsMessagesAsWritten(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 1})
	var got completionLog
	w := &Writer{Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 100, BatchTimeout: time.Hour,
		Async: true, RequiredAcks: RequireOne, MaxBufferedBatches: 2, Completion: got.record}
	defer shutdown(w, stub)
	at := time.Date(2026, 12, 5, 1, 2, 3, 456789123, time.FixedZone("X", 3600))
	type tag struct{ n int }
	want := []Message{
		{Key: []byte("k"), Value: []byte("v")},
		{Key: nil, Value: []byte{}},
		{Key: []byte{}, Value: nil},
		{Value: []byte("t"), Time: at, WriterData: &tag{7}, Headers: []Header{{Key: "h", Value: []byte("1")}, {Key: "n"}}},
		{Value: []byte("last")},
	}
	in := make([]Message, len(want))
	for i, m := range want {
		in[i] = m
		in[i].Key = bytes.Clone(m.Key)
		in[i].Value = bytes.Clone(m.Value)
	}
	ctx := testContext(t)
	if err := w.WriteMessages(ctx, in...); err != nil {
		t.Fatal(err)
	}
	// The program reuses its buffers as soon as the call returned.
	for i := range in {
		for j := range in[i].Value {
			in[i].Value[j] = 'X'
		}
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got.mu.Lock()
	defer got.mu.Unlock()
	if len(got.msgs) != len(want) {
		t.Fatalf("Completion got %d messages, want %d", len(got.msgs), len(want))
	}
	for i, m := range got.msgs {
		w := want[i]
		if got.errs[i] != nil {
			t.Fatalf("message %d: %v", i, got.errs[i])
		}
		if (m.Key == nil) != (w.Key == nil) || !bytes.Equal(m.Key, w.Key) || (m.Value == nil) != (w.Value == nil) || !bytes.Equal(m.Value, w.Value) {
			t.Errorf("message %d: key %q (nil %v) value %q (nil %v), want %q (nil %v) %q (nil %v)",
				i, m.Key, m.Key == nil, m.Value, m.Value == nil, w.Key, w.Key == nil, w.Value, w.Value == nil)
		}
		if m.Topic != "t" || m.Partition != 0 || m.Offset != int64(i) {
			t.Errorf("message %d: placed at %s/%d/%d, want t/0/%d", i, m.Topic, m.Partition, m.Offset, i)
		}
		if !m.Time.Equal(w.Time) || m.Time.Location() != w.Time.Location() || m.WriterData != w.WriterData || len(m.Headers) != len(w.Headers) {
			t.Errorf("message %d: time %v data %v headers %v, want %v %v %v", i, m.Time, m.WriterData, m.Headers, w.Time, w.WriterData, w.Headers)
		}
	}
	if recs := stub.records(topicPartition{"t", 0}); len(recs) != len(want) || recs[0].value != "v" || recs[4].value != "last" {
		t.Fatalf("the broker got %v: the program's later writes to its buffers must not reach it", recs)
	}
}

// TestWriterCompletionOfRefusedBatch: a batch the broker refused reaches
// Completion with the program's fields and the placement the answer gave.
func TestWriterCompletionOfRefusedBatch(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 1})
	stub.produceErrors[topicPartition{"t", 0}] = []int16{int16(TopicAuthorizationFailed)}
	var got completionLog
	w := &Writer{Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 10, RequiredAcks: RequireOne,
		MaxBufferedBatches: 1, Completion: got.record}
	defer shutdown(w, stub)
	type tag struct{}
	in := []Message{{Value: []byte("a")}, {Value: []byte("b"), HighWaterMark: 11, WriterData: tag{}}}
	err := w.WriteMessages(testContext(t), in...)
	var werr WriteErrors
	if !errors.As(err, &werr) || !errors.Is(werr[0], TopicAuthorizationFailed) {
		t.Fatalf("err = %v", err)
	}
	got.mu.Lock()
	defer got.mu.Unlock()
	if len(got.msgs) != 2 {
		t.Fatalf("Completion got %d messages", len(got.msgs))
	}
	for i, m := range got.msgs {
		w := in[i]
		if m.Topic != "t" || m.Partition != 0 || m.HighWaterMark != w.HighWaterMark || m.WriterData != w.WriterData || string(m.Value) != string(w.Value) {
			t.Errorf("message %d: %+v, want %+v in t/0", i, m, w)
		}
		if !errors.Is(got.errs[i], TopicAuthorizationFailed) {
			t.Errorf("message %d: error %v", i, got.errs[i])
		}
	}
}

// TestWriterAsyncCallerReusesBuffers: without Completion too, an
// asynchronous WriteMessages has copied what it accepted when it returns.
func TestWriterAsyncCallerReusesBuffers(t *testing.T) {
	stub := newStubBroker(map[string]int{"t": 1})
	w := &Writer{Addr: TCP("stub"), Topic: "t", Transport: stub, BatchSize: 1000, BatchTimeout: time.Hour,
		Async: true, RequiredAcks: RequireOne, MaxBufferedBatches: 1}
	defer shutdown(w, stub)
	ctx := context.Background()
	key, value := []byte("key"), []byte("value-0")
	for i := 0; i < 10; i++ {
		value[len(value)-1] = byte('0' + i)
		if err := w.WriteMessages(ctx, Message{Key: key, Value: value}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	recs := stub.records(topicPartition{"t", 0})
	if len(recs) != 10 {
		t.Fatalf("%d records", len(recs))
	}
	for i, r := range recs {
		if r.key != "key" || r.value != "value-"+string(rune('0'+i)) {
			t.Errorf("record %d: %q=%q", i, r.key, r.value)
		}
	}
}
