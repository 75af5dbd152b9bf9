//go:build unix

package kafka

import (
	"net"
	"syscall"
)

// writeNow offers frame to the socket in one non-blocking system call and
// returns how many bytes it took. The socket usually takes a whole request
// at once (it blocks only when the broker stops reading), and a write that
// cannot block needs neither a write deadline nor a watch on the context:
// setting and clearing those costs about as much as the write itself on a
// one-message request. The caller writes whatever is left the usual way.
//
// Only plain TCP connections are tried; TLS connections go the usual way
// (n is 0).
func writeNow(nc net.Conn, frame []byte) (n int) {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return 0
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return 0
	}
	rc.Write(func(fd uintptr) bool {
		for n < len(frame) {
			k, e := syscall.Write(int(fd), frame[n:])
			if k > 0 {
				n += k
			}
			if e == syscall.EINTR || (e == nil && k > 0) {
				continue
			}
			// EAGAIN (the socket is full) or a failure: the usual write
			// waits for the rest, interruptibly, or reports the failure.
			break
		}
		return true // never wait here
	})
	// When the connection is closed, the function did not run (n is 0):
	// the usual write reports that too.
	return n
}
