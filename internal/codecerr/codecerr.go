// Package codecerr names the error of a record batch compressed with a codec
// this client cannot decompress, so that the protocol package, which finds
// it, and the Reader, which reports it, agree on it.
package codecerr

import (
	"errors"
	"fmt"
)

// ErrUnknown is matched (errors.Is) by the error of a batch whose
// compression code is invalid or whose codec is not registered.
var ErrUnknown = errors.New("the compression code is invalid or its codec has not been imported")

// Unknown returns the error for a batch compressed with code.
func Unknown(code int8) error { return unknownError(code) }

type unknownError int8

func (e unknownError) Error() string {
	return fmt.Sprintf("unsupported compression codec: %d", int8(e))
}

func (e unknownError) Is(target error) bool { return target == ErrUnknown }
