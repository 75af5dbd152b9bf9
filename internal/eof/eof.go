// Package eof holds the package-wide rule for a stream that ends early.
package eof

import (
	"errors"
	"io"
)

// Unexpected turns an io.EOF (possibly wrapped) into io.ErrUnexpectedEOF,
// for reads that stopped in the middle of something the peer owed us (a
// response, a record): there, the end of the stream is a lost connection,
// never the normal end that io.EOF tells callers.
func Unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
