package kafka

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// captureLogger records every line logged to it.
type captureLogger struct {
	mu    sync.Mutex
	lines []string
}

func (l *captureLogger) Printf(format string, args ...interface{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *captureLogger) matching(s string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}

// An asynchronous Writer without Completion that gives up on accepted
// messages says so: on ErrorLogger, or on Logger when ErrorLogger is nil
// (where upstream sends its error messages), once per lost batch, with the
// count and the error. Nothing is said when Completion is set (it is told)
// or when the batch was written.
func TestWriterAsyncWithoutCompletionReportsLoss(t *testing.T) {
	const giveUp = "giving up on 3 messages to t (partition 0)"
	for _, tc := range []struct {
		name       string
		errLog     bool
		completion bool
		fail       bool
	}{
		{"ErrorLogger", true, false, true},
		{"Logger", false, false, true},
		{"Completion", true, true, true},
		{"delivered", true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stub := newStubBroker(map[string]int{"t": 1})
			tp := topicPartition{"t", 0}
			if tc.fail {
				stub.produceErrors[tp] = []int16{int16(TopicAuthorizationFailed)}
			}
			info, errs := &captureLogger{}, &captureLogger{}
			w := &Writer{
				Addr: TCP("stub"), Topic: "t", Transport: stub, Async: true,
				BatchSize: 3, BatchTimeout: time.Hour, RequiredAcks: RequireOne, Logger: info,
			}
			if tc.errLog {
				w.ErrorLogger = errs
			}
			var completed []error
			if tc.completion {
				w.Completion = func(msgs []Message, err error) { completed = append(completed, err) }
			}
			require.NoError(t, w.WriteMessages(context.Background(), seqMessages("p0", 0, 3)...))
			shutdown(w, stub)

			want, other := errs, info
			if !tc.errLog {
				want, other = info, errs
			}
			got := want.matching(giveUp)
			switch {
			case tc.fail && !tc.completion:
				require.Len(t, got, 1, "lines: %q", want.lines)
				require.Contains(t, got[0], TopicAuthorizationFailed.Error())
			default:
				require.Empty(t, got)
			}
			require.Empty(t, other.matching("giving up"))
			if tc.completion {
				require.Len(t, completed, 1)
				require.ErrorIs(t, completed[0], TopicAuthorizationFailed)
			}
		})
	}
}

// The giving-up line does not claim the messages were not written when an
// attempt's outcome is unknown (here every attempt times out waiting for
// the broker's answer); it does when the broker refused every attempt.
func TestWriterAsyncGivingUpSaysWhetherWritten(t *testing.T) {
	for _, tc := range []struct {
		name      string
		timeout   bool
		wantWords string
	}{
		{"refused", false, "they were not written"},
		{"timed out", true, "they may or may not have been written"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stub := newStubBroker(map[string]int{"t": 1})
			tp := topicPartition{"t", 0}
			if tc.timeout {
				stub.block()
			} else {
				stub.produceErrors[tp] = []int16{int16(NotLeaderForPartition), int16(NotLeaderForPartition)}
			}
			errs := &captureLogger{}
			w := &Writer{
				Addr: TCP("stub"), Topic: "t", Transport: stub, Async: true, BatchSize: 3, BatchTimeout: time.Hour,
				RequiredAcks: RequireOne, ErrorLogger: errs, MaxAttempts: 2,
				WriteBackoffMin: time.Millisecond, WriteBackoffMax: time.Millisecond, WriteTimeout: 5 * time.Millisecond,
			}
			require.NoError(t, w.WriteMessages(context.Background(), seqMessages("p0", 0, 3)...))
			require.NoError(t, w.Close())
			stub.release()
			got := errs.matching("giving up on 3 messages")
			require.Len(t, got, 1, "lines: %q", errs.lines)
			require.Contains(t, got[0], tc.wantWords)
		})
	}
}
