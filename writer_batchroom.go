package kafka

import "unsafe"

// How many Message places a batch has. A batch holds its messages by value
// in one array, so its places cost a Message struct each whether filled or
// not. Opening every batch with BatchSize places would cost more than the
// messages at a thousand partitions; opening them small and growing by
// append costs a copy and an allocation per doubling, most of the Writer's
// CPU for small messages. So a new batch opens with as many places as the
// partition's previous batch held, the places beyond the first coming from
// a writer-wide allowance (roomAheadLimit) that bounds what open batches
// may reserve ahead of their messages; a batch that closes with far more
// places than messages is copied into an array of its size.

// messageStructBytes is the size of a Message place in a batch.
const messageStructBytes = int64(unsafe.Sizeof(Message{}))

// roomAheadLimit is how many places, beyond the first of each, the open
// batches of a Writer may hold for messages they have not received yet:
// 1 MiB of Message structs.
const roomAheadLimit = (1 << 20) / messageStructBytes

// closedBatchBytesPerMessage bounds the places (and the batch itself) of
// a closed batch per message it holds: 320 B, about twice a Message
// struct, which growth by append stays within. docs/backpressure.md counts
// 400 B per message buffered, the rest being the allocator's rounding.
const closedBatchBytesPerMessage = 320

// writeBatchBytes is what a batch costs beside its places: the writeBatch
// and its done channel.
const writeBatchBytes = int64(unsafe.Sizeof(writeBatch{})) + 96

// roomForNewBatch returns the places a new batch of pw opens with, and
// how many of them were taken from the Writer's allowance (to be given back
// by fitRoomLocked when the batch closes).
func (pw *partitionWriter) roomForNewBatch() (places int, reserved int32) {
	want := min(max(int(pw.lastLen), 1), pw.w.batchSize())
	extra := int64(want - 1)
	ahead := &pw.w.state().roomAhead
	for extra > 0 {
		cur := ahead.Load()
		grant := min(extra, roomAheadLimit-cur)
		if grant <= 0 {
			break
		}
		if ahead.CompareAndSwap(cur, cur+grant) {
			return 1 + int(grant), int32(grant)
		}
	}
	return 1, 0
}

// fitRoomLocked is called as b closes: it gives b's reservation back,
// remembers b's size for the partition's next batch, and copies b's
// messages into an array of their size if its places cost more than
// closedBatchBytesPerMessage per message (a batch closed by BatchTimeout
// or Flush with fewer messages than its predecessor).
func (pw *partitionWriter) fitRoomLocked(b *writeBatch) {
	if b.reserved != 0 {
		pw.w.state().roomAhead.Add(-int64(b.reserved))
		b.reserved = 0
	}
	n := len(b.msgs)
	pw.lastLen = int32(n)
	if int64(cap(b.msgs))*messageStructBytes+writeBatchBytes > closedBatchBytesPerMessage*int64(n) {
		msgs := make([]Message, n)
		copy(msgs, b.msgs)
		b.msgs = msgs
	}
}
