package kafka

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
	w.errorf("kafka: giving up on %d messages to %s (partition %d), they were not written: %v",
		len(b.msgs), pw.key.topic, pw.key.partition, err)
}
