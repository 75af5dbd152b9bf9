package logshape

import "sort"

// Consume is what Kafka's consumer returns reading the log from offset
// from to its end (to the last stable offset when reading committed
// records), stated on its own as the Java consumer's rules, without the
// code under test:
//
//   - the aborted transactions listed are those whose marker is at or
//     after the fetch offset, taken in order of first offset;
//   - batches come in order, from the first whose last offset is at or
//     after from; reading committed records, each batch with a producer ID
//     first adds to the aborted producers those listed transactions that
//     begin at or before its last offset;
//   - an ABORT marker takes its producer out of the aborted producers;
//   - reading committed records, a transactional batch of an aborted
//     producer is skipped;
//   - control records are never returned, nor records before from;
//   - a LogAppendTime batch gives its records its append time.
//
// The result does not depend on how the reading is cut into fetches:
// that is what tests check of a client that fetches many times.
func (l *Log) Consume(from int64, readCommitted bool) []Record {
	limit := l.End()
	var listed []Txn
	if readCommitted {
		limit = l.LastStable()
		for _, t := range l.Aborted {
			if t.MarkerOffset >= from {
				listed = append(listed, t)
			}
		}
		sort.SliceStable(listed, func(i, j int) bool { return listed[i].FirstOffset < listed[j].FirstOffset })
	}
	abortedProducers := map[int64]bool{}
	var out []Record
	for _, b := range l.Batches {
		if b.Last < from {
			continue
		}
		if b.Base >= limit {
			break
		}
		if readCommitted && b.ProducerID != NoProducer {
			for len(listed) > 0 && listed[0].FirstOffset <= b.Last {
				abortedProducers[listed[0].ProducerID] = true
				listed = listed[1:]
			}
			if b.Marker == Abort {
				delete(abortedProducers, b.ProducerID)
				continue
			}
			if b.Transactional && abortedProducers[b.ProducerID] {
				continue
			}
		}
		if b.Marker != NoMarker {
			continue
		}
		for _, r := range b.Records {
			if r.Offset < from {
				continue
			}
			if !b.AppendTime.IsZero() {
				r.Time = b.AppendTime
			}
			out = append(out, r)
		}
	}
	return out
}
