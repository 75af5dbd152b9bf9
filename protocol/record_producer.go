package protocol

// ProducerRecords is a RecordReader whose records an idempotent producer
// writes. RecordSet.WriteTo puts the ProducerBatch values in the header of
// the v2 record batch, where other readers get -1 for all three: the broker
// then uses them to drop a batch it already appended (same producer, epoch
// and sequence) instead of writing it twice.
//
// It is a separate interface, rather than fields of RecordSet, so that
// every existing way of building a RecordSet keeps writing "no producer".
type ProducerRecords interface {
	RecordReader
	// ProducerBatch returns the producer ID, producer epoch and the
	// sequence number of the first record of the batch.
	ProducerBatch() (producerID int64, producerEpoch int16, baseSequence int32)
}

// errProducerLegacy is returned when records of an idempotent producer would
// be written in a legacy format, whose messages have nowhere to carry the
// producer's sequence: silently dropping it would lose the guarantee.
var errProducerLegacy = Errorf("idempotent records need message format v2 (Produce v3+, Kafka 0.11+)")
