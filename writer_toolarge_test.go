package kafka

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A message over MaxBufferedBytes fails with an error that names that
// limit (the Writer's, not the broker's) and still is a
// MessageTooLargeError; a message over BatchBytes gets upstream's bare
// MessageTooLargeError.
func TestWriterMessageTooLargeNamesTheLimit(t *testing.T) {
	ctx := context.Background()
	stub := newStubBroker(map[string]int{"t": 1})
	w := &Writer{Addr: TCP("stub"), Topic: "t", Transport: stub, BatchBytes: 1000, MaxBufferedBytes: 100}
	defer shutdown(w, stub)
	msgs := []Message{{Value: []byte("a")}, {Value: make([]byte, 200)}, {Value: []byte("c")}}

	err := w.WriteMessages(ctx, msgs...)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "MaxBufferedBytes (100)")
	assert.NotContains(t, err.Error(), "broker")
	var tooLarge MessageTooLargeError
	require.ErrorAs(t, err, &tooLarge)
	assert.ErrorIs(t, err, MessageSizeTooLarge)
	assert.Len(t, tooLarge.Message.Value, 200)
	assert.Len(t, tooLarge.Remaining, 2)

	msgs[1].Value = make([]byte, 2000) // over BatchBytes too
	err = w.WriteMessages(ctx, msgs...)
	bare, ok := err.(MessageTooLargeError)
	require.True(t, ok, "over BatchBytes: %T %v, want a bare MessageTooLargeError", err, err)
	assert.Equal(t, MessageSizeTooLarge.Error(), bare.Error())
	assert.Len(t, bare.Remaining, 2)
	assert.Zero(t, stub.totalRecords(), "records written by rejected calls")
	assert.False(t, errors.Is(err, ErrNotAccepted))
}
