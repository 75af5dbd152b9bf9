package kafka

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"syscall"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/initproducerid"
)

// The idempotent Writer (Writer.Idempotent).
//
// The broker drops a batch it already appended when the batch carries the
// same producer ID, epoch and sequence numbers as before. So the Writer gets
// a producer ID once (InitProducerId), numbers the records of each
// partition consecutively (the first record of a batch carries the base
// sequence), and sends a retried batch with the numbers of its first
// attempt. A lost answer then costs a retry, never a duplicate.
//
// State, with one owner each:
//   - idemProducer (one per Writer, guarded by its mutex): the producer ID
//     and epoch in use, shared by every partition.
//   - idemPartition (one per partition writer, used only by that
//     partition's sending loop, so it needs no lock): the session its
//     sequence numbers belong to, the next sequence, and the stamp of the
//     batch being sent. The partition writer sends one batch at a time, so
//     a partition has at most one stamped batch in flight, and numbers are
//     given to a batch when it is first sent (a batch that fails for good
//     without reaching the log gives them back to the next one).
//
// When the broker refuses a sequence (OUT_OF_ORDER_SEQUENCE_NUMBER,
// UNKNOWN_PRODUCER_ID) the Writer does what the Java client does since
// KIP-360: it bumps the epoch, and the partition starts again from sequence
// 0 under the new epoch, which also fences any older batch still on its way.
// That is only safe for a batch that was never possibly appended: sent
// again under new numbers, a batch that is already in the log would be
// written twice. A batch whose earlier attempt may have been appended is
// therefore failed with an *IdempotenceError instead (its outcome is
// unknown), and the partition moves on under the new epoch. Other
// partitions switch to a new epoch (at sequence 0) with their next batch;
// a batch already being sent keeps its numbers.

// idemSession is a producer ID and epoch.
type idemSession struct {
	id    int64
	epoch int16
}

// idemProducer is the producer session of a Writer.
type idemProducer struct {
	mu      sync.Mutex
	cur     idemSession
	valid   bool
	loading chan struct{} // non-nil while an InitProducerId call is out
	lastErr error         // outcome of the last call, for those who waited on it
}

// session returns the session in use, asking the cluster for one when
// there is none. Concurrent callers share one InitProducerId call. A failed
// call is not retried here: the caller's batch retries (with backoff, up to
// MaxAttempts) when the error is retriable, and the next batch asks again.
func (p *idemProducer) session(w *Writer) (idemSession, error) {
	p.mu.Lock()
	for {
		if p.valid {
			s := p.cur
			p.mu.Unlock()
			return s, nil
		}
		if p.loading == nil {
			break
		}
		loading := p.loading
		p.mu.Unlock()
		<-loading
		p.mu.Lock()
		if !p.valid && p.lastErr != nil {
			err := p.lastErr
			p.mu.Unlock()
			return idemSession{}, err
		}
	}
	loading := make(chan struct{})
	p.loading = loading
	p.mu.Unlock()

	s, err := initProducerID(w)

	p.mu.Lock()
	p.loading = nil
	p.lastErr = err
	if err == nil {
		p.cur, p.valid = s, true
	}
	close(loading)
	p.mu.Unlock()
	return s, err
}

// initProducerID asks any broker for a new producer ID, as an idempotent
// producer without a transactional ID does.
func initProducerID(w *Writer) (idemSession, error) {
	ctx, cancel := context.WithTimeout(context.Background(), w.writeTimeout())
	defer cancel()
	m, err := w.transportOrDefault().RoundTrip(ctx, w.Addr, &initproducerid.Request{
		// A null transactional ID; the timeout only applies to
		// transactions, and the Java client sends its maximum too.
		TransactionTimeoutMs: math.MaxInt32,
		ProducerID:           -1,
		ProducerEpoch:        -1,
	})
	if err != nil {
		return idemSession{}, fmt.Errorf("kafka.(*Writer): getting a producer ID (InitProducerId): %w", err)
	}
	r, ok := m.(*initproducerid.Response)
	if !ok {
		return idemSession{}, fmt.Errorf("kafka.(*Writer): unexpected response of type %T to InitProducerId", m)
	}
	if r.ErrorCode != 0 {
		return idemSession{}, fmt.Errorf("kafka.(*Writer): getting a producer ID (InitProducerId): %w", Error(r.ErrorCode))
	}
	if r.ProducerID < 0 || r.ProducerEpoch < 0 {
		return idemSession{}, fmt.Errorf("kafka.(*Writer): InitProducerId answered an invalid producer ID %d (epoch %d)", r.ProducerID, r.ProducerEpoch)
	}
	return idemSession{id: r.ProducerID, epoch: r.ProducerEpoch}, nil
}

// bump moves the producer to the next epoch, unless it moved on from old
// already (another partition bumped it first, or it was renewed). When the
// epoch cannot grow any more, the next session call gets a new producer ID.
func (p *idemProducer) bump(old idemSession) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.valid || p.cur != old {
		return
	}
	if p.cur.epoch == math.MaxInt16 {
		p.valid = false
		return
	}
	p.cur.epoch++
}

// renew forgets old when it is still the session in use, so that the next
// session call asks for a new producer ID.
func (p *idemProducer) renew(old idemSession) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.valid && p.cur == old {
		p.valid = false
	}
}

// idemPartition is the sequence state of one partition; only the
// partition's sending loop uses it.
type idemPartition struct {
	p *idemProducer

	session idemSession // the session next belongs to
	hasSeq  bool        // session and next are set
	next    int32       // sequence of the next new batch's first record

	batch *writeBatch // the batch stamp belongs to, nil when none
	stamp idemStamp
	// maybeAppended says an attempt of batch ended without telling
	// whether the broker appended it (lost answer, timeout).
	maybeAppended bool
	// attempted says the last produce call sent (or tried to send) a
	// stamped request, which settle must account for.
	attempted bool
}

type idemStamp struct {
	session idemSession
	seq     int32
}

// idemRecords are the records of a batch stamped with its producer
// session and base sequence.
type idemRecords struct {
	*protocol.EncodedRecordReader
	stamp idemStamp
}

func (r *idemRecords) ProducerBatch() (int64, int16, int32) {
	return r.stamp.session.id, r.stamp.session.epoch, r.stamp.seq
}

var _ protocol.ProducerRecords = (*idemRecords)(nil)

// records returns the records of b as the partition sends them: stamped
// with the producer session and sequence when the Writer is idempotent.
// A retried batch keeps the stamp of its first attempt.
func (pw *partitionWriter) records(b *writeBatch) (protocol.RecordReader, error) {
	ip := pw.idem
	if ip == nil {
		return b.recs.Reader(), nil
	}
	if ip.batch != b {
		s, err := ip.p.session(pw.w)
		if err != nil {
			return nil, err
		}
		if !ip.hasSeq || ip.session != s {
			// A new producer ID or epoch starts the partition's
			// sequence over.
			ip.session, ip.next, ip.hasSeq = s, 0, true
		}
		ip.batch, ip.stamp, ip.maybeAppended = b, idemStamp{session: s, seq: ip.next}, false
		ip.next = nextSequence(ip.next, b.count())
	}
	ip.attempted = true
	return &idemRecords{EncodedRecordReader: b.recs.Reader(), stamp: ip.stamp}, nil
}

// nextSequence is seq advanced by n records; sequences wrap around to 0
// after math.MaxInt32, as the broker expects.
func nextSequence(seq int32, n int) int32 {
	return int32((int64(seq) + int64(n)) % (math.MaxInt32 + 1))
}

// settle interprets the outcome of one produce attempt of the stamped batch
// (res is the broker's answer, nil when the request failed on the way) and
// returns the error the retry loop must act on: nil when the batch is in
// the log (DUPLICATE_SEQUENCE_NUMBER included: the broker has it already).
func (ip *idemPartition) settle(res *produceResult, err error) error {
	if !ip.attempted {
		return err // nothing was sent (no producer ID yet)
	}
	ip.attempted = false
	if res == nil {
		if err != nil && !neverSent(err) {
			// The request may have reached the broker.
			ip.maybeAppended = true
		}
		return err
	}
	var code Error
	if !errors.As(err, &code) {
		if err != nil {
			ip.maybeAppended = true
		}
		return err
	}
	switch code {
	case DuplicateSequenceNumber:
		res.err = nil
		res.baseOffset = -1 // the broker did not say where the batch is
		return nil
	case OutOfOrderSequenceNumber, UnknownProducerId:
		// The broker's state for the partition does not match ours:
		// an earlier batch that failed was not appended after all, or the
		// broker lost the producer's state.
		ip.p.bump(ip.stamp.session)
		return ip.restart(err)
	case InvalidProducerEpoch, ProducerFenced, InvalidProducerIDMapping:
		// The broker refuses the session itself: get a new one, unless
		// the producer moved on already and this batch still had the old.
		ip.p.renew(ip.stamp.session)
		return ip.restart(err)
	}
	if !rejectedBeforeAppend(code) {
		ip.maybeAppended = true
	}
	return err
}

// restart drops the stamp of the batch being sent after the broker refused
// its numbers. A batch that was never possibly appended is sent again under
// the producer's new session, from sequence 0; one that may have been is
// failed, since new numbers could write it twice.
func (ip *idemPartition) restart(cause error) error {
	ip.batch = nil
	ip.hasSeq = false // the next stamp starts over, whatever the session
	if ip.maybeAppended {
		ip.maybeAppended = false
		return &IdempotenceError{Err: cause}
	}
	return idemRetry{cause}
}

// finish is told the final outcome of the batch being sent.
func (ip *idemPartition) finish(b *writeBatch, err error) {
	if ip == nil || ip.batch != b {
		return
	}
	if err != nil && !ip.maybeAppended && ip.hasSeq && ip.session == ip.stamp.session {
		// The broker never appended the batch: its sequence numbers go
		// to the next batch, which the broker expects to carry them.
		ip.next = ip.stamp.seq
	}
	ip.batch, ip.maybeAppended, ip.attempted = nil, false, false
}

// neverSent says whether err proves that the request did not leave: no
// leader to send it to, or no connection to send it on. Any other failure
// may have come after the broker read the request.
func neverSent(err error) bool {
	return errors.Is(err, protocol.ErrNoLeader) || errors.Is(err, syscall.ECONNREFUSED)
}

// rejectedBeforeAppend says whether the broker answers code only for a
// batch it did not append. Codes not listed (timeouts, a leader that lost
// its leadership while waiting for replicas, ...) may come after the
// append.
func rejectedBeforeAppend(code Error) bool {
	switch code {
	case InvalidMessage, MessageSizeTooLarge, RecordListTooLarge, InvalidRecord,
		InvalidTimestamp, InvalidTopic, UnknownTopicOrPartition, NotEnoughReplicas,
		TopicAuthorizationFailed, ClusterAuthorizationFailed, InvalidRequiredAcks,
		UnsupportedForMessageFormat, UnsupportedVersion, InvalidRequest:
		return true
	}
	return false
}

// idemRetry says the batch is sent again under new sequence numbers.
type idemRetry struct{ cause error }

func (e idemRetry) Error() string {
	return fmt.Sprintf("kafka.(*Writer): %v: the partition restarts its sequence numbers under a new producer epoch", e.cause)
}

func (e idemRetry) Unwrap() error   { return e.cause }
func (e idemRetry) Temporary() bool { return true }

// IdempotenceError reports a batch of an idempotent Writer that the broker
// refused because its sequence numbers no longer matched the broker's
// state (Err says why: OutOfOrderSequenceNumber, UnknownProducerId,
// InvalidProducerEpoch, ...), after an earlier attempt of the same batch
// had ended without an answer. That attempt may have been appended, so the
// Writer did not send the batch again under new numbers, which could have
// written it twice: its outcome is unknown, as for a batch that timed out.
// The partition's next batches go on under a new producer epoch.
type IdempotenceError struct {
	Err error
}

func (e *IdempotenceError) Error() string {
	return fmt.Sprintf("kafka.(*Writer): idempotent write refused (%v) after an attempt whose outcome is unknown; the batch may or may not have been written, and was not sent again to avoid writing it twice", e.Err)
}

func (e *IdempotenceError) Unwrap() error { return e.Err }

// errIdempotentAcks is returned by WriteMessages when Idempotent is set with
// RequiredAcks other than RequireAll or zero.
type errIdempotentAcks RequiredAcks

func (e errIdempotentAcks) Error() string {
	return fmt.Sprintf("kafka.(*Writer): Idempotent requires every in-sync replica to acknowledge, not RequiredAcks %s (%d): set RequiredAcks to RequireAll (-1) or leave it zero, or turn Idempotent off (a batch acknowledged by fewer replicas can be lost, and its retry is then refused as out of order)", RequiredAcks(e), int(e))
}
