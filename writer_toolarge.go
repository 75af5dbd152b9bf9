package kafka

import "fmt"

// bufferLimitError is what WriteMessages returns for a message larger than
// MaxBufferedBytes. That limit is the Writer's own, so the text names it
// instead of the broker's limit that MessageTooLargeError's text describes;
// errors.As still finds the MessageTooLargeError (with Remaining), and
// errors.Is matches MessageSizeTooLarge.
type bufferLimitError struct {
	index       int
	size, limit int64
	err         MessageTooLargeError
}

func (e *bufferLimitError) Error() string {
	return fmt.Sprintf("%s: message %d takes %d bytes, more than the Writer's MaxBufferedBytes (%d)",
		MessageSizeTooLarge.Title(), e.index, e.size, e.limit)
}

func (e *bufferLimitError) Unwrap() error { return e.err }
