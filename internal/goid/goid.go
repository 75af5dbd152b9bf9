// Package goid tells goroutines apart.
//
// The Writer needs to know whether a WriteMessages call is made by one of
// its own Completion goroutines (such a call must never wait for buffer
// space: the space can only come back once that Completion returns). Go
// offers no goroutine identity, and Completion's signature (upstream's) has
// no context to carry a mark, so the identity is read from the first line
// of the goroutine's stack trace, "goroutine 123 [running]:", whose format
// the runtime has kept since Go 1.0. It costs about a microsecond, so the
// Writer only asks when a call is about to wait anyway.
package goid

import "runtime"

// ID returns the current goroutine's id, or 0 when the stack trace does not
// start as expected (callers must then treat the goroutine as unknown).
func ID() uint64 {
	var buf [64]byte
	s := buf[:runtime.Stack(buf[:], false)]
	const prefix = "goroutine "
	if len(s) < len(prefix) || string(s[:len(prefix)]) != prefix {
		return 0
	}
	var id uint64
	digits := 0
	for _, c := range s[len(prefix):] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
		digits++
	}
	if digits == 0 || digits > 19 {
		return 0
	}
	return id
}
