package kafka

import (
	"errors"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	produceAPI "github.com/segmentio/kafka-go/protocol/produce"
)

// The sending side of a partition writer: the outcome of each attempt of
// its batch in sending, as its sink reports it, and what the partition does
// next (retry, or move on to its next batch).

type produceResult struct {
	err           error
	baseOffset    int64
	logAppendTime time.Time
	throttle      time.Duration
}

// attemptStarts is told that an attempt of b is about to be made.
func (pw *partitionWriter) attemptStarts(b *writeBatch) {
	w := pw.w
	if !b.started {
		b.started = true
		s := w.state().stats
		s.batchTime.observeSince(b.opened)
		s.batchSize.observe(int64(b.count()))
		s.batchBytes.observe(b.bytes)
	}
	w.logf("writing %d messages to %s (partition: %d)", b.count(), pw.key.topic, pw.key.partition)
}

// attemptDone takes the outcome of one attempt of b, the batch in sending
// (res is the broker's answer, nil when it gave none), and reports whether
// b is to be sent again, at pw.retryAt. Otherwise b is done, and the
// partition has moved on to its next batch.
func (pw *partitionWriter) attemptDone(b *writeBatch, res *produceResult, err error, start time.Time) (retry bool) {
	w := pw.w
	s := w.state().stats
	key := pw.key
	var held *heldBackError
	if errors.As(err, &held) {
		// Not sent, so not an attempt: the batch waits for the broker to
		// be done with earlier requests, for at most noAckDrainBound,
		// polling at the backoff (logged as an error the first time).
		logf := w.logf
		if !b.held {
			b.held = true
			logf = w.errorf
		}
		logf("holding %d messages to %s (partition %d): %s", b.count(), key.topic, key.partition, err)
		pw.retryAt = time.Now().Add(backoff(max(b.attempts, 1), w.writeBackoffMin(), w.writeBackoffMax()))
		return true
	}
	s.writes.add(1)
	s.messages.add(int64(b.count()))
	s.bytes.add(b.bytes)
	s.writeTime.observeSince(start)
	if res != nil {
		err = res.err
		s.waitTime.observe(int64(res.throttle))
	}
	if pw.idem != nil {
		err = pw.idem.settle(res, err)
	}
	b.attempts++
	if err != nil {
		s.errors.add(1)
		w.errorf("error writing messages to %s (partition %d, attempt %d): %s", key.topic, key.partition, b.attempts-1, err)
		if !brokerRefused(err) {
			b.mayBeWritten = true
		}
		if writerRetriable(err) && b.attempts < w.maxAttempts() {
			s.retries.add(1)
			delay := backoff(b.attempts, w.writeBackoffMin(), w.writeBackoffMax())
			w.logf("backing off %s writing %d messages to %s (partition: %d)", delay, b.count(), key.topic, key.partition)
			pw.retryAt = time.Now().Add(delay)
			return true
		}
	}
	var again idemRetry
	if errors.As(err, &again) {
		// MaxAttempts ran out just as the partition restarted its
		// sequence numbers: the batch was refused and never appended, so
		// the broker's refusal is the outcome, as for any other batch
		// that used up its attempts.
		err = again.cause
	}
	pw.idem.finish(b, err)
	pw.sent(b, res, err)
	return false
}

// sent fills in what the broker said about b's messages, records its
// outcome, and moves the partition to its next batch.
func (pw *partitionWriter) sent(b *writeBatch, res *produceResult, err error) {
	w := pw.w
	if res != nil && w.Completion != nil {
		b.ack = produceAck{answered: true, baseOffset: res.baseOffset, logAppendTime: res.logAppendTime}
	}
	b.err = err

	// Refilling the sending place in the same step as the outcome is
	// recorded (and, without a Completion, as the budget is given back)
	// keeps the partition's batches within N+2 at every instant, and
	// "queue not empty implies a batch is being sent" true at all times.
	// The budget comes back before Flush and synchronous callers hear of
	// the outcome.
	if w.Completion == nil {
		pw.reportDropped(b, err) // before finishing b drops its messages
	}
	partials, startCompletions := false, false
	pw.mu.Lock()
	if w.Completion != nil {
		pw.completing.Add(1)
		startCompletions = pw.queueCompletionLocked(b)
	} else {
		partials = pw.finishLocked(b)
	}
	pw.ackedLocked(b.seq)
	pw.sending = nil
	if next := pw.queue.pop(); next != nil {
		pw.startSendingLocked(next)
	} else if pw.cur != nil && (pw.cur.lingering || pw.w.partialsWanted()) {
		pw.closeCurrentLocked() // straight to sending
	}
	pw.mu.Unlock()

	if startCompletions {
		pw.startCompletions()
	} else if partials {
		w.sendPartials()
	}
}

// writerRetriable says whether sending the same batch again may succeed.
func writerRetriable(err error) bool {
	return isTemporary(err) || isTransientNetworkError(err) ||
		errors.Is(err, protocol.ErrNoLeader) || errors.Is(err, produceAPI.ErrMismatchingLeaders)
}

// leadershipChanged says whether err means the partition may have a new
// leader (the request then goes to the sink of the leader the refreshed
// metadata names).
func leadershipChanged(err error) bool {
	return errors.Is(err, NotLeaderForPartition) ||
		errors.Is(err, LeaderNotAvailable) ||
		errors.Is(err, UnknownTopicOrPartition) ||
		errors.Is(err, protocol.ErrNoLeader) ||
		errors.Is(err, produceAPI.ErrMismatchingLeaders)
}
