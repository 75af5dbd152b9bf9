package kafka

import (
	"sync/atomic"
	"time"
)

// WriterStats is a snapshot of a Writer's activity, returned by Stats.
//
// Counters and summaries cover the time since the previous call to Stats;
// gauges are the values at the time of the call. The struct tags name the
// metrics for reporting libraries that read them.
type WriterStats struct {
	// Produce requests sent (retries included), the messages and bytes
	// they carried, and the attempts that failed.
	Writes   int64 `metric:"kafka.writer.write.count"     type:"counter"`
	Messages int64 `metric:"kafka.writer.message.count"   type:"counter"`
	Bytes    int64 `metric:"kafka.writer.message.bytes"   type:"counter"`
	Errors   int64 `metric:"kafka.writer.error.count"     type:"counter"`

	// BatchTime: from a batch's first message to its first send.
	// BatchQueueTime: from its first message until it was complete.
	// WriteTime: duration of each produce request.
	// WaitTime: throttling time the brokers asked for.
	BatchTime      DurationStats `metric:"kafka.writer.batch.seconds"`
	BatchQueueTime DurationStats `metric:"kafka.writer.batch.queue.seconds"`
	WriteTime      DurationStats `metric:"kafka.writer.write.seconds"`
	WaitTime       DurationStats `metric:"kafka.writer.wait.seconds"`

	// Retries counts the attempts after the first; BatchSize and
	// BatchBytes summarize the batches sent.
	Retries    int64        `metric:"kafka.writer.retries.count" type:"counter"`
	BatchSize  SummaryStats `metric:"kafka.writer.batch.size"`
	BatchBytes SummaryStats `metric:"kafka.writer.batch.bytes"`

	// The configuration in effect, defaults applied.
	MaxAttempts     int64         `metric:"kafka.writer.attempts.max"  type:"gauge"`
	WriteBackoffMin time.Duration `metric:"kafka.writer.backoff.min"   type:"gauge"`
	WriteBackoffMax time.Duration `metric:"kafka.writer.backoff.max"   type:"gauge"`
	MaxBatchSize    int64         `metric:"kafka.writer.batch.max"     type:"gauge"`
	BatchTimeout    time.Duration `metric:"kafka.writer.batch.timeout" type:"gauge"`
	// Timeouts, acknowledgements and mode.
	ReadTimeout  time.Duration `metric:"kafka.writer.read.timeout"  type:"gauge"`
	WriteTimeout time.Duration `metric:"kafka.writer.write.timeout" type:"gauge"`
	RequiredAcks int64         `metric:"kafka.writer.acks.required" type:"gauge"`
	Async        bool          `metric:"kafka.writer.async"         type:"gauge"`

	// Buffering, beyond upstream. BufferedBatches counts the batches that
	// exist now (being filled, waiting, being sent, or acknowledged and
	// waiting for or in their Completion call) and BufferedBytes the bytes
	// of their messages: what the limits count, Completion backlog
	// included. Both are kept whatever the limits, so that an unbounded
	// writer's growth is visible too. BufferWaits counts the times a message had to wait for
	// buffer space, and BufferWaitTime summarizes how long those waits took
	// (including waits that ended with ctx or Close).
	BufferedBatches    int64         `metric:"kafka.writer.buffer.batches"      type:"gauge"`
	BufferedBytes      int64         `metric:"kafka.writer.buffer.bytes"        type:"gauge"`
	BufferWaits        int64         `metric:"kafka.writer.buffer.wait.count"   type:"counter"`
	BufferWaitTime     DurationStats `metric:"kafka.writer.buffer.wait.seconds"`
	MaxBufferedBatches int64         `metric:"kafka.writer.buffer.batches.max"  type:"gauge"`
	MaxBufferedBytes   int64         `metric:"kafka.writer.buffer.bytes.max"    type:"gauge"`

	Topic string `tag:"topic"`

	// Deprecated: only writers made by NewWriter count their dials.
	Dials    int64         `metric:"kafka.writer.dial.count" type:"counter"`
	DialTime DurationStats `metric:"kafka.writer.dial.seconds"`

	// Deprecated: always zero. They described the internals of versions
	// before 0.4 and stay so that programs reading them still compile.
	Rebalances        int64
	RebalanceInterval time.Duration
	QueueLength       int64
	QueueCapacity     int64
	ClientID          string
}

// writerStats holds the live values behind WriterStats. Counters and
// summaries are reset by each snapshot; gauges are not.
type writerStats struct {
	dials          counter
	writes         counter
	messages       counter
	bytes          counter
	errors         counter
	retries        counter
	bufferWaits    counter
	dialTime       summary
	batchTime      summary
	batchQueueTime summary
	writeTime      summary
	waitTime       summary
	batchSize      summary
	batchBytes     summary
	bufferWaitTime summary

	// Gauges, kept by adding to them as batches come and go.
	bufferedBatches atomic.Int64
	bufferedBytes   atomic.Int64
}
