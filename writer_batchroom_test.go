package kafka

import (
	"testing"
	"time"
)

// TestWriterBatchRoomAfterBurst attacks the sizing of new batches from the
// partition's previous one (writer_batchroom.go): 1000 partitions each send
// a full batch of 200 messages, then receive one message each while the
// broker holds every answer. Sized from their predecessors alone, the new
// batches would reserve room for 200 records each; the Writer's room-ahead
// allowance must keep the heap within the documented bound, and a batch
// that closes with one message must hold the room of one record, not 200.
func TestWriterBatchRoomAfterBurst(t *testing.T) {
	const (
		partitions = 1000
		batchSize  = 200
	)
	broker := &gatedAcks{ackAll: ackAll{partitions: partitions}}
	w := &Writer{Addr: TCP("stub"), Topic: "t", Transport: broker, Balancer: partitionByKey,
		BatchSize: batchSize, BatchTimeout: time.Hour, Async: true, RequiredAcks: RequireOne,
		MaxBufferedBatches: 4, MaxBufferedBytes: 64 << 20}
	ctx := testContext(t)
	burst := make([]Message, 0, partitions*batchSize)
	for p := 0; p < partitions; p++ {
		for i := 0; i < batchSize; i++ {
			burst = append(burst, keyed(p, "v"))
		}
	}
	if err := w.WriteMessages(ctx, burst...); err != nil {
		t.Fatal(err)
	}
	burst = nil
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	broker.close()
	base := heapInUse()
	one := make([]Message, partitions)
	for p := range one {
		one[p] = keyed(p, "v")
	}
	if err := w.WriteMessages(ctx, one...); err != nil {
		t.Fatal(err)
	}
	one = nil
	heap := heapInUse() - base
	bound := writerHeapBound(w, partitions)
	t.Logf("one open batch per partition after full ones: heap %d B (%d per partition), bound %d B", heap, heap/partitions, bound)
	if heap > bound {
		t.Errorf("heap %d B beyond the bound %d B", heap, bound)
	}
	if r := w.state().roomAhead.Load(); r > roomAheadLimit {
		t.Errorf("%d bytes reserved ahead, beyond the limit %d", r, roomAheadLimit)
	}

	// Closing the batches (Flush, while the broker still holds them) fits
	// each into one place.
	flushed := make(chan error, 1)
	go func() { flushed <- w.Flush(ctx) }()
	var sending []*writeBatch
	eventually(t, "every batch closed", func() bool {
		sending = sending[:0]
		for _, pw := range w.partitionWriters() {
			pw.mu.Lock()
			if pw.sending != nil {
				sending = append(sending, pw.sending)
			}
			pw.mu.Unlock()
		}
		return len(sending) == partitions
	})
	for _, b := range sending {
		if b.recs.Len() != 1 || b.recs.Cap() > b.recs.Size()+closedRecordSlack(b.recs.Size()) {
			t.Fatalf("a closed batch of %d messages (%d B) holds %d B of records, want at most %d B",
				b.recs.Len(), b.recs.Size(), b.recs.Cap(), b.recs.Size()+closedRecordSlack(b.recs.Size()))
		}
	}
	if r := w.state().roomAhead.Load(); r != 0 {
		t.Errorf("%d bytes still reserved ahead with no batch open", r)
	}
	broker.open()
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
