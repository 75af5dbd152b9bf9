package kafka

import "errors"

// reportDropped tells the program about a failed batch that nobody else
// will hear of: an asynchronous Writer without Completion returns before
// its messages are sent, so its ErrorLogger (or Logger when ErrorLogger is
// nil, as for every error message of the Writer) is the only place left.
// Each failed attempt was logged already, as upstream does; this line says
// the retries are over and how many accepted messages are lost.
func (pw *partitionWriter) reportDropped(b *writeBatch, err error) {
	w := pw.w
	if err == nil || !w.Async || w.Completion != nil {
		return
	}
	outcome := "they were not written"
	if b.mayBeWritten {
		outcome = "they may or may not have been written (an attempt's outcome is unknown)"
	}
	w.errorf("kafka: giving up on %d messages to %s (partition %d), %s: %v",
		b.count(), pw.key.topic, pw.key.partition, outcome, err)
}

// brokerRefused says whether a failed attempt is known not to have
// appended anything: the broker answered with an error code that refuses
// the batch. A lost or late answer, a timeout, a broker that appended
// without enough replicas, or an idempotence refusal after such an attempt
// leave the outcome unknown.
func brokerRefused(err error) bool {
	var idem *IdempotenceError
	if errors.As(err, &idem) {
		return false
	}
	var code Error
	if !errors.As(err, &code) {
		return false
	}
	return code != RequestTimedOut && code != NotEnoughReplicasAfterAppend
}
