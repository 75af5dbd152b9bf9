package protocol

import (
	"io"
	"math/bits"
	"sync"
	"sync/atomic"
)

// rbBuf is a growable byte slice recycled through rbKeepOut and rbBufPool
// (or rbKeepIn and rbInPool).
// Encoders append to b directly; Write lets compressors append to it as well.
type rbBuf struct {
	b  []byte
	in bool // from rbInPool
}

func (p *rbBuf) Write(b []byte) (int, error) {
	p.b = append(p.b, b...)
	return len(b), nil
}

// Buffers that grew past this are left to the garbage collector, so that one
// huge fetch does not pin its memory in the pool for good.
const rbMaxPooledCap = 16 << 20

var rbBufPool = sync.Pool{New: func() any { return &rbBuf{b: make([]byte, 0, 4096)} }}

func rbGetBuf() *rbBuf {
	p := rbKeepOut.get()
	if p == nil {
		p = rbBufPool.Get().(*rbBuf)
	}
	p.b = p.b[:0]
	return p
}

func rbPutBuf(p *rbBuf) {
	if p == nil || cap(p.b) > rbMaxPooledCap {
		return
	}
	if p.in {
		if !rbKeepIn.put(p) {
			rbInPool.Put(p)
		}
		return
	}
	if !rbKeepOut.put(p) {
		rbBufPool.Put(p)
	}
}

// rbInPool holds the buffers a BatchStream reads compressed batches into,
// apart from rbBufPool, whose buffers hold what they decompress to (several
// times larger): in one pool, each kind would keep getting buffers of the
// other that are too small, and allocate anyway.
var rbInPool = sync.Pool{New: func() any { return &rbBuf{in: true} }}

// rbGetInBuf returns a buffer of rbInPool of length n.
func rbGetInBuf(n int) *rbBuf {
	p := rbKeepIn.get()
	if p == nil {
		p = rbInPool.Get().(*rbBuf)
	}
	p.b = rbGrowTo(p.b[:0], n)[:n]
	return p
}

// rbGrowTo returns b with room for n bytes. A buffer that must grow gets
// the next power of two (of the pool's size bound at most), so that a
// pooled buffer serves the batches of varying size that follow instead of
// being replaced by one of exactly the size of each larger one.
func rbGrowTo(b []byte, n int) []byte {
	if cap(b) >= n {
		return b
	}
	c := n
	if n <= rbMaxPooledCap {
		c = 1 << bits.Len(uint(n-1))
	}
	return make([]byte, len(b), c)
}

// rbFill appends everything r yields to p. Memory grows with what actually
// arrives, so a reader that claims a huge size cannot make us allocate it up
// front.
func rbFill(p *rbBuf, r io.Reader) error {
	idle := 0
	for {
		if len(p.b) == cap(p.b) {
			p.b = append(p.b, make([]byte, max(cap(p.b), 4096))...)[:len(p.b)]
		}
		n, err := r.Read(p.b[len(p.b):cap(p.b)])
		p.b = p.b[:len(p.b)+n]
		switch {
		case err == io.EOF:
			return nil
		case err != nil:
			return err
		case n == 0:
			if idle++; idle >= 100 {
				return io.ErrNoProgress
			}
		default:
			idle = 0
		}
	}
}

// rbShared is a pooled buffer shared by the readers of the batches it holds
// and by the keys and values handed out from it. It returns to the pool when
// the last of them lets go; a holder that never lets go only costs the pool
// that buffer, the garbage collector still reclaims it.
type rbShared struct {
	buf  *rbBuf
	refs atomic.Int32
}

func rbNewShared(buf *rbBuf) *rbShared {
	s := &rbShared{buf: buf}
	s.refs.Store(1)
	return s
}

func (s *rbShared) retain() { s.refs.Add(1) }

func (s *rbShared) release() {
	if s.refs.Add(-1) == 0 {
		buf := s.buf
		s.buf = nil
		rbPutBuf(buf)
	}
}

// rbBytes is the key or value of a decoded record: a window on a shared
// buffer, which it keeps alive until closed.
type rbBytes struct {
	data  []byte
	owner *rbShared
}

func (b *rbBytes) Len() int { return len(b.data) }

func (b *rbBytes) Read(p []byte) (int, error) {
	if len(b.data) == 0 && len(p) != 0 {
		return 0, io.EOF
	}
	n := copy(p, b.data)
	b.data = b.data[n:]
	return n, nil
}

// WriteTo lets io.Copy skip its intermediate buffer.
func (b *rbBytes) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(b.data)
	b.data = b.data[n:]
	return int64(n), err
}

func (b *rbBytes) Close() error {
	if o := b.owner; o != nil {
		b.owner = nil
		b.data = nil
		o.release()
	}
	return nil
}
