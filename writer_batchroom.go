package kafka

// How much room a new batch opens with. A batch holds its messages as
// encoded records in one byte array. Opening every batch with BatchBytes of
// room would cost more than the messages at a thousand partitions; opening
// it small and growing by append costs a copy and an allocation per
// doubling. So a new batch opens with as much room as the partition's
// previous batch used, taken from a writer-wide allowance (roomAheadLimit)
// that bounds what open batches may reserve ahead of their messages; a
// batch that closes with far more room than it used is copied into an
// array of its size.

// roomAheadLimit is how many bytes the open batches of a Writer may
// reserve for messages they have not received yet.
const roomAheadLimit = 4 << 20

// closedRecordSlack is the spare room a closed batch may keep in its
// records array: a quarter of the records, and at least 64 B (allocator
// rounding makes less pointless).
func closedRecordSlack(size int) int { return max(size/4, 64) }

// roomForNewBatch returns the bytes of records a new batch of pw opens
// with, taken from the Writer's allowance (to be given back by
// fitRoomLocked when the batch closes). A partition's first batch, or one
// opened when the allowance is spent, opens with no room and grows by
// append.
func (pw *partitionWriter) roomForNewBatch() (recBytes int, reserved int64) {
	want := min(int64(pw.lastBytes), pw.w.batchBytes())
	if want == 0 {
		return 0, 0
	}
	ahead := &pw.w.state().roomAhead
	for {
		cur := ahead.Load()
		grant := min(want, roomAheadLimit-cur)
		if grant <= 0 {
			return 0, 0
		}
		if ahead.CompareAndSwap(cur, cur+grant) {
			return int(grant), grant
		}
	}
}

// fitRoomLocked is called as b closes: it gives b's reservation back,
// remembers b's size for the partition's next batch, and copies b's records
// into an array of their size if it holds much more room than they use (a
// batch closed by BatchTimeout or Flush with fewer messages than its
// predecessor).
func (pw *partitionWriter) fitRoomLocked(b *writeBatch) {
	if b.reserved != 0 {
		pw.w.state().roomAhead.Add(-b.reserved)
		b.reserved = 0
	}
	pw.lastBytes = int32(min(b.recs.Size(), 1<<30))
	b.recs.Fit(closedRecordSlack(b.recs.Size()))
}
