package logshape

// Producers of the named logs below.
const (
	ProducerA = 1 // transactional
	ProducerB = 2 // idempotent, outside transactions
)

// AbortThenCommit is a log where a producer's committed transaction
// follows its aborted one, with another producer in between:
//
//	0 A "a1" (its transaction is aborted)   4 A "c2"
//	1 B "p1"                                5 A's commit marker
//	2 A's abort marker                      6 B "p2"
//	3 A "c1" (its next transaction)
//
// Reading committed records from 2 (where a consumer that committed after
// "p1" resumes), Kafka's consumer returns 3, 4 and 6.
func AbortThenCommit() *Log {
	l := &Log{}
	l.Append(Batch{ProducerID: ProducerA, Transactional: true, Records: Values("a1")})
	l.Append(Batch{ProducerID: ProducerB, Records: Values("p1")})
	l.EndTxn(ProducerA, 0, false)
	l.Append(Batch{ProducerID: ProducerA, Transactional: true, Records: Values("c1", "c2")})
	l.EndTxn(ProducerA, 0, true)
	l.Append(Batch{ProducerID: ProducerB, Records: Values("p2")})
	return l
}

// CompactedTail is a log whose middle batches lost records to compaction,
// their headers keeping the offsets they were written with:
//
//	0..4   "r0".."r4"
//	5..9   only "r5" and "r6" left
//	10..12 nothing left (an empty batch)
//	13..14 "r13", "r14"
//
// A consumer that fetches from 7 (a response that ended after 6, or a
// committed offset of 7) must go on to 13.
func CompactedTail() *Log {
	l := &Log{}
	l.Append(Batch{ProducerID: NoProducer, Records: Values("r0", "r1", "r2", "r3", "r4")})
	l.Append(Batch{ProducerID: NoProducer, Records: Values("r5", "r6", "r7", "r8", "r9")})
	l.Append(Batch{ProducerID: NoProducer, Records: Values("r10", "r11", "r12")})
	l.Append(Batch{ProducerID: NoProducer, Records: Values("r13", "r14")})
	l.Batches[1].Records = l.Batches[1].Records[:2]
	l.Batches[2].Records = nil
	return l
}
